// Package webfinger serves the RFC 7033 lookup at /.well-known/webfinger that
// tells ownCloud clients which OpenID Connect issuer to sign in with and, once
// signed in, which server instances the user may use.
//
// The Handler is a plain net/http.Handler: routing, CORS and TLS belong to
// the caller. Anonymous lookups get the issuer link only; a lookup with a
// verified bearer token also gets one server-instance link per matching
// instance rule. Compared with the original oCIS service the answers are
// deterministic (issuer first, then instance links in rule order), honour
// rel filters (RFC 7033 §4.3), carry Content-Type application/json (the ownCloud
// clients refuse anything else; application/jrd+json when Accept asks for
// it), never contain the text "<no value>", and distinguish a refused token (401) from
// an unreachable identity provider (503).
package webfinger
