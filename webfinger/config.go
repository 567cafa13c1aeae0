package webfinger

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/identity"
)

// Verifier checks bearer tokens; *identity.Provider implements it.
type Verifier interface {
	// Verify returns the token's identity. want names claims the caller
	// needs. Errors wrap identity.ErrInvalidToken or
	// identity.ErrUnavailable.
	Verify(ctx context.Context, token string, want ...string) (*identity.Identity, error)
}

// Config configures a Handler.
type Config struct {
	// Issuer is the href of the issuer link. Required.
	Issuer string
	// PlatformURL is the value of {{.PLATFORM_URL}} and {{.OCIS_URL}};
	// empty means the request's own origin (https when it came over TLS).
	PlatformURL string
	// Relations are the relations served; nil means RelIssuer and
	// RelServerInstance, an empty non-nil slice none.
	Relations []string
	// Rules are the server-instance rules; nil means DefaultRules(), an
	// empty non-nil slice no instance links.
	Rules []Rule
	// Verifier checks bearer tokens; nil makes every lookup anonymous.
	Verifier Verifier
	// Logger receives warnings about the identity provider and, at debug
	// level, why rules gave no link. nil discards them.
	Logger *zap.Logger
}

// New returns a Handler for cfg. It compiles the rules and checks the URLs;
// it does no network I/O.
func New(cfg Config) (*Handler, error) {
	if err := checkURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("issuer %q: %w", cfg.Issuer, err)
	}
	if cfg.PlatformURL != "" {
		if err := checkURL(cfg.PlatformURL); err != nil {
			return nil, fmt.Errorf("platform URL %q: %w", cfg.PlatformURL, err)
		}
	}
	h := &Handler{
		issuer: cfg.Issuer,
		// Trimmed so that "{{.PLATFORM_URL}}/path" has one slash, as it
		// has with the request origin.
		platformURL: strings.TrimRight(cfg.PlatformURL, "/"),
		verifier:    cfg.Verifier,
		log:         cfg.Logger,
	}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	rels := cfg.Relations
	if rels == nil {
		rels = []string{RelIssuer, RelServerInstance}
	}
	for _, rel := range rels {
		switch rel {
		case RelIssuer:
			h.serveIssuer = true
		case RelServerInstance:
			h.serveInstance = true
		default:
			return nil, fmt.Errorf("unknown relation %q", rel)
		}
	}
	rules := cfg.Rules
	if rules == nil {
		rules = DefaultRules()
	}
	var err error
	if h.rules, err = compileRules(rules); err != nil {
		return nil, err
	}
	h.want = wantedClaims(h.rules)
	return h, nil
}

// checkURL accepts the absolute http(s) URLs with a host that clients can
// connect to.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http(s) URL")
	}
	return nil
}
