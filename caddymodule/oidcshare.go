package caddymodule

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/davspaces/davspaces/identity"
)

// authVerifiers lists, per configuration and issuer, the verifiers of the
// oidc_auth handlers, so that a webfinger handler of the same configuration
// checks tokens with one of them: a lookup then spends the budgets of
// oidc_auth (token cache, new tokens per client address, userinfo slots)
// whatever provider settings the webfinger block repeats or leaves out.
var authVerifiers = new(verifierDirectory)

// configIssuer names the handlers of one issuer in one configuration. Every
// module of a configuration is provisioned with the same context, and each
// reload brings a new one.
type configIssuer struct {
	config context.Context
	issuer string
}

func newConfigIssuer(config context.Context, issuer string) configIssuer {
	// "https://idp/" and "https://idp" name one issuer (discovery allows
	// the configuration to leave out the announced issuer's trailing "/").
	return configIssuer{config: config, issuer: strings.TrimSuffix(issuer, "/")}
}

type verifierEntry struct {
	key string // the pool key: the verifier's settings
	v   *verifier
}

// verifierDirectory lists the verifiers per configuration and issuer.
type verifierDirectory struct {
	registry[configIssuer, verifierEntry]
}

// add lists v and returns the function that takes it off the list again.
func (d *verifierDirectory) add(at configIssuer, key string, v *verifier) (remove func()) {
	return d.put(at, &verifierEntry{key: key, v: v})
}

// find returns the verifier with settings key listed at at, or else the
// first one listed there; found is false when none is.
func (d *verifierDirectory) find(at configIssuer, key string) (v *verifier, sameSettings, found bool) {
	list := d.listed(at)
	if len(list) == 0 {
		return nil, false, false
	}
	if i := slices.IndexFunc(list, func(e *verifierEntry) bool { return e.key == key }); i >= 0 {
		return list[i].v, true, true
	}
	return list[0].v, false, true
}

// lateVerifier picks the verifier to use at its first token, when every
// handler of the configuration is provisioned (webfinger is provisioned
// before the oidc_auth handler it shares with).
type lateVerifier struct {
	once   sync.Once
	choose func() *verifier
	v      *verifier
}

func (l *lateVerifier) Verify(ctx context.Context, token string, want ...string) (*identity.Identity, error) {
	return l.verifier().Verify(ctx, token, want...)
}

// Document returns the discovery document of the chosen verifier's
// provider: the one it checks tokens with, fetched once for both.
func (l *lateVerifier) Document(ctx context.Context) (identity.Document, error) {
	return l.verifier().Document(ctx)
}

func (l *lateVerifier) verifier() *verifier {
	l.once.Do(func() { l.v = l.choose() })
	return l.v
}
