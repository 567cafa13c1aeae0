package webfinger

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/identity"
	"github.com/davspaces/davspaces/internal/origin"
)

// DiscoveryPath is where a client that knows only the server's URL looks
// for the sign-in: the ownCloud desktop client (oauth.cpp fetchWellKnown)
// and the Android app (GetOIDCDiscoveryRemoteOperation.kt) ask
// <server>/.well-known/openid-configuration when WebFinger gave them no
// issuer.
const DiscoveryPath = "/.well-known/openid-configuration"

// DocumentSource gives the configured issuer's discovery document;
// *identity.Provider implements it.
type DocumentSource interface {
	// Document returns the document, or an error wrapping
	// identity.ErrUnavailable.
	Document(ctx context.Context) (identity.Document, error)
}

// Discovery answers the configured issuer's OpenID Connect discovery
// document at the server root. It is never a proxy: the request chooses
// nothing, not even the issuer. It is safe for concurrent use.
type Discovery struct {
	issuer string // without a trailing "/"
	source DocumentSource
	log    *zap.Logger
}

// NewDiscovery returns the handler for issuer's document from source.
// log receives the provider's failures; nil discards them.
func NewDiscovery(issuer string, source DocumentSource, log *zap.Logger) (*Discovery, error) {
	if err := checkURL(issuer); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Discovery{issuer: strings.TrimSuffix(issuer, "/"), source: source, log: log}, nil
}

var errIssuerIsHere = &apiError{status: http.StatusNotFound, code: "invalid_request", description: "the issuer is this server, which is no OpenID provider"}

// ServeHTTP answers GET and HEAD with the document, 304 when If-None-Match
// names its ETag, and 503 with Retry-After while the provider cannot be
// reached and no recent document is known.
func (d *Discovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !readMethod(w, r) {
		return
	}
	if d.issuer == origin.Of(r) {
		// Fetching it would ask this very handler, which would wait for
		// itself until the provider timeout.
		writeError(w, r, errIssuerIsHere)
		return
	}
	doc, err := d.source.Document(r.Context())
	if err != nil {
		level := zap.WarnLevel
		if r.Context().Err() != nil {
			level = zap.DebugLevel // the client went away
		}
		if ce := d.log.Check(level, "discovery: cannot fetch the issuer's document"); ce != nil {
			ce.Write(zap.Error(err))
		}
		writeError(w, r, errUnavailable)
		return
	}
	h := w.Header()
	h.Set("ETag", doc.ETag)
	// Clients revalidate every time (a 304 costs nothing), so a provider's
	// change reaches them with the next refresh.
	h.Set("Cache-Control", "no-cache")
	if matches(r.Header.Values("If-None-Match"), doc.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", typeJSON)
	h.Set("Content-Length", strconv.Itoa(len(doc.Body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(doc.Body)
	}
}

// matches reports whether If-None-Match headers name etag, by the weak
// comparison RFC 9110 §13.1.2 prescribes, or are "*".
func matches(ifNoneMatch []string, etag string) bool {
	for _, header := range ifNoneMatch {
		for _, tag := range strings.Split(header, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}
