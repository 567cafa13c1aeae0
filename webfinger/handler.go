package webfinger

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/identity"
	"github.com/davspaces/davspaces/internal/origin"
)

// Path is where RFC 7033 puts the lookup.
const Path = "/.well-known/webfinger"

// Relations this service can serve.
const (
	RelIssuer         = "http://openid.net/specs/connect/1.0/issuer"
	RelServerInstance = "http://webfinger.owncloud/rel/server-instance"
)

// allow lists the methods answered; the lookup is read-only.
const allow = "GET, HEAD, OPTIONS"

// Handler answers WebFinger lookups on whatever path it is mounted. It is
// safe for concurrent use.
type Handler struct {
	issuer        string
	platformURL   string
	serveIssuer   bool
	serveInstance bool
	rules         []rule
	want          []string
	verifier      Verifier
	log           *zap.Logger
}

// readMethod answers OPTIONS and any method but GET and HEAD, which both
// WebFinger's lookups and the discovery document take, and reports
// whether r is left to serve.
func readMethod(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodOptions:
		w.Header().Set("Allow", allow)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", allow)
		writeError(w, r, errMethod)
	}
	return false
}

// ServeHTTP answers GET and HEAD lookups and OPTIONS.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, errors included, depends on the bearer token; a
	// lookup's media type on Accept.
	w.Header().Add("Vary", "Authorization")
	w.Header().Add("Vary", "Accept")
	if !readMethod(w, r) {
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, r, errBadQuery)
		return
	}
	resource, ok := parseResource(q["resource"])
	if !ok {
		writeError(w, r, errBadResource)
		return
	}
	issuer, instance := h.relations(q["rel"])
	id, e := h.identify(r, instance)
	if e != nil {
		writeError(w, r, e)
		return
	}
	doc := &jrd{Subject: resource, Links: make([]link, 0, 1+len(h.rules))}
	if issuer {
		doc.Links = append(doc.Links, link{Rel: RelIssuer, Href: h.issuer})
	}
	if instance && id != nil {
		doc.Links = h.appendInstanceLinks(doc.Links, r, id)
	}
	writeJRD(w, r, doc, id != nil)
}

// relations tells which relations to answer: those configured, narrowed
// to the requested ones when rel parameters are present (RFC 7033 §4.3).
func (h *Handler) relations(rels []string) (issuer, instance bool) {
	if len(rels) == 0 {
		return h.serveIssuer, h.serveInstance
	}
	return h.serveIssuer && slices.Contains(rels, RelIssuer),
		h.serveInstance && slices.Contains(rels, RelServerInstance)
}

// identify returns the identity of a verified bearer token, or nil for an
// anonymous request. Anonymous requests never reach the verifier, so the
// issuer lookup (which a client needs to sign in at all) keeps working
// while the identity provider is down.
func (h *Handler) identify(r *http.Request, instance bool) (*identity.Identity, *apiError) {
	if h.verifier == nil {
		return nil, nil
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		// Basic and other schemes are not ours to judge (spec: Basic is
		// not supported here), so they just mean anonymous.
		return nil, nil
	}
	if !isToken68(token) {
		return nil, errMalformedAuth
	}
	var want []string
	if instance {
		// Without instance links no claim is needed: spare the verifier a
		// userinfo round trip.
		want = h.want
	}
	id, err := h.verifier.Verify(r.Context(), token, want...)
	var tooMany *identity.TooManyTokensError
	switch {
	case err == nil && id != nil:
		return id, nil
	case errors.As(err, &tooMany):
		return nil, tooManyTokens(tooMany)
	case errors.Is(err, identity.ErrInvalidToken):
		if ce := h.log.Check(zap.DebugLevel, "webfinger: bearer token refused"); ce != nil {
			ce.Write(zap.Error(err))
		}
		return nil, errInvalidToken
	case err == nil:
		err = errors.New("verifier returned no identity")
	}
	// Never 401 here: the token may well be valid, and a 401 would make
	// clients throw it away and ask the user to sign in again.
	level := zap.WarnLevel
	if r.Context().Err() != nil {
		level = zap.DebugLevel // the client went away; nothing to fix
	}
	if ce := h.log.Check(level, "webfinger: cannot verify bearer token"); ce != nil {
		ce.Write(zap.Error(err))
	}
	return nil, errUnavailable
}

// appendInstanceLinks evaluates the rules in order against the identity's
// claims and appends one link per matching rule that yields a URL.
func (h *Handler) appendInstanceLinks(links []link, r *http.Request, id *identity.Identity) []link {
	var data *hrefData // built on the first match only
	for i := range h.rules {
		rule := &h.rules[i]
		if !rule.matches(id.Claims) {
			continue
		}
		if data == nil {
			data = &hrefData{claims: id.Claims, platform: h.platform(r)}
		}
		href, err := rule.expand(data)
		if err != nil {
			if ce := h.log.Check(zap.DebugLevel, "webfinger: instance rule gives no link"); ce != nil {
				ce.Write(zap.Int("rule", i), zap.Error(err))
			}
		} else {
			links = append(links, link{Rel: RelServerInstance, Href: href, Titles: rule.titles})
		}
		// A matching rule breaks even when its link failed: the rule
		// set's author meant the later rules not to apply to this user.
		if rule.brk {
			break
		}
	}
	return links
}

// platform returns the platform URL: configured, or the request's origin.
func (h *Handler) platform(r *http.Request) string {
	if h.platformURL != "" {
		return h.platformURL
	}
	return origin.Of(r)
}
