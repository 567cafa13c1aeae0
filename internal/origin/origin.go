// Package origin tells the handlers the scheme and host a client reached
// the server at, for the absolute URLs of their answers (TUS Location,
// PROPFIND links, drive URLs), also when a TLS-terminating proxy stands in
// front of the server.
package origin

import (
	"context"
	"net/http"
)

// schemeKey is the context key of WithScheme's scheme.
type schemeKey struct{}

// WithScheme returns ctx telling the handlers that the client reached the
// server with scheme ("https" or "http"), for a server behind a
// TLS-terminating proxy. The caller vouches for it: the handlers trust no
// X-Forwarded-Proto header, which any client can send.
func WithScheme(ctx context.Context, scheme string) context.Context {
	return context.WithValue(ctx, schemeKey{}, scheme)
}

// Of is the scheme and host the client reached the server at. The Host is
// the request's: a proxy in front passes the client's on.
func Of(r *http.Request) string {
	scheme, _ := r.Context().Value(schemeKey{}).(string)
	if scheme == "" {
		scheme = "https"
		if r.TLS == nil {
			scheme = "http"
		}
	}
	return scheme + "://" + r.Host
}
