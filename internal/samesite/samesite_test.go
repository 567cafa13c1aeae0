package samesite

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/davspaces/davspaces/internal/origin"
)

func TestForged(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		tls     bool
		scheme  string // a trusted proxy's forwarded scheme, when set
		headers map[string]string
		want    bool
	}{
		{name: "a client that is no browser", method: "PUT"},
		{name: "cross-site form post", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: true},
		{name: "sibling host's post", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "same-site"}, want: true},
		{name: "the page's own request", method: "MOVE", headers: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://files.example"}},
		{name: "typed by the user", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "none"}},
		{name: "Sec-Fetch-Site wins over Origin", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"}},
		{name: "cross-site read", method: "GET", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{name: "cross-site PROPFIND", method: "PROPFIND", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{name: "cross-site REPORT", method: "REPORT", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{name: "preflight", method: "OPTIONS", headers: map[string]string{"Origin": "https://evil.example"}},
		{name: "cross-site HEAD", method: "HEAD", headers: map[string]string{"Origin": "https://evil.example"}},
		{name: "cross-site with a Bearer token", method: "DELETE", headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer abc"}},
		{name: "Bearer in other case", method: "DELETE", headers: map[string]string{"Origin": "https://app.example", "Authorization": "bearer abc"}},
		{name: "cross-site with Basic", method: "DELETE", headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Authorization": "Basic ZTpl"}, want: true},
		{name: "old browser, other origin", method: "POST", headers: map[string]string{"Origin": "https://evil.example"}, want: true},
		{name: "old browser, opaque origin", method: "POST", headers: map[string]string{"Origin": "null"}, want: true},
		{name: "old browser, own origin", method: "POST", headers: map[string]string{"Origin": "http://files.example"}},
		{name: "own origin in other case, default port", method: "POST", headers: map[string]string{"Origin": "HTTP://Files.Example:80"}},
		{name: "other scheme is another origin", method: "POST", headers: map[string]string{"Origin": "https://files.example"}, want: true},
		{name: "other port is another origin", method: "POST", headers: map[string]string{"Origin": "http://files.example:8080"}, want: true},
		{name: "TLS", method: "POST", tls: true, headers: map[string]string{"Origin": "https://files.example"}},
		{name: "behind a TLS-terminating proxy", method: "POST", scheme: "https", headers: map[string]string{"Origin": "https://files.example"}},
		{name: "behind a proxy, plain origin", method: "POST", scheme: "https", headers: map[string]string{"Origin": "http://files.example"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://files.example/remote.php/dav/spaces/x", nil)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tt.scheme != "" {
				r = r.WithContext(origin.WithScheme(context.Background(), tt.scheme))
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if got := Forged(r); got != tt.want {
				t.Errorf("Forged = %v, want %v", got, tt.want)
			}
		})
	}
}
