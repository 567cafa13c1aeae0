// Package samesite tells the state changes a browser sends on behalf of
// another site, so that they can be refused (cross-site request forgery).
//
// A browser attaches the Basic credentials it has cached for the server to
// any request, also to a form another site posts to the server (a TUS
// creation, an OCS share, a Graph call). Such a request names its
// initiator: Sec-Fetch-Site in browsers of the last years, Origin in
// older ones. A request with a Bearer token is exempt: no browser attaches
// one on its own, so a page that sends one has passed a CORS preflight
// and holds the token itself.
package samesite

import (
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/internal/origin"
)

// Forged reports whether r changes state (any method but GET, HEAD,
// OPTIONS, PROPFIND and REPORT) for another site: Sec-Fetch-Site says
// cross-site or same-site (a sibling host is another origin, which may
// be someone else's), or, without Sec-Fetch-Site, an Origin header names
// another origin than the one r was sent to (origin.Of, which knows the
// scheme a trusted proxy forwarded). Clients other than browsers send
// neither header and are never refused.
func Forged(r *http.Request) bool {
	if safe(r.Method) || hasBearer(r) {
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "cross-site" || site == "same-site"
	}
	from := r.Header.Get("Origin")
	return from != "" && !sameOrigin(from, origin.Of(r))
}

// safe reports whether method only reads.
func safe(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND", "REPORT":
		return true
	}
	return false
}

// hasBearer reports whether r carries a Bearer token (RFC 6750: the
// scheme's name is case-insensitive).
func hasBearer(r *http.Request) bool {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Bearer")
}

// sameOrigin compares two serialized origins (scheme://host[:port]):
// without case, and with a scheme's default port the same as none.
func sameOrigin(a, b string) bool {
	return strings.EqualFold(withoutDefaultPort(a), withoutDefaultPort(b))
}

func withoutDefaultPort(o string) string {
	lower := strings.ToLower(o)
	switch {
	case strings.HasPrefix(lower, "https://"):
		return strings.TrimSuffix(lower, ":443")
	case strings.HasPrefix(lower, "http://"):
		return strings.TrimSuffix(lower, ":80")
	}
	return lower
}
