package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/davspaces/davspaces/internal/origin"
)

// withForwardedScheme tells the handlers the scheme the client used when a
// proxy the server trusts (Caddy's trusted_proxies) says so in
// X-Forwarded-Proto: behind a load balancer that terminates TLS the node
// sees plain HTTP, yet the absolute URLs it answers (TUS Location) must
// say https. A header from anyone else is ignored, as Caddy ignores its
// X-Forwarded-For.
func withForwardedScheme(r *http.Request) *http.Request {
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	if !trusted {
		return r
	}
	scheme := forwardedScheme(r.Header.Get("X-Forwarded-Proto"))
	if scheme == "" {
		return r
	}
	return r.WithContext(origin.WithScheme(r.Context(), scheme))
}

// forwardedScheme reads X-Forwarded-Proto: the first proxy's value (the
// client's scheme) when proxies appended theirs, "" for anything but http
// or https.
func forwardedScheme(header string) string {
	first, _, _ := strings.Cut(header, ",")
	switch scheme := strings.ToLower(strings.TrimSpace(first)); scheme {
	case "http", "https":
		return scheme
	}
	return ""
}
