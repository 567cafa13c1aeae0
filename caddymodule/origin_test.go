package caddymodule

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestForwardedScheme(t *testing.T) {
	tests := []struct{ header, want string }{
		{"", ""},
		{"https", "https"},
		{"http", "http"},
		{"HTTPS", "https"},
		{" https , http", "https"},
		{"wss", ""},
		{"https://evil.example", ""},
	}
	for _, tt := range tests {
		if got := forwardedScheme(tt.header); got != tt.want {
			t.Errorf("forwardedScheme(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}

// FuzzForwardedScheme: whatever a proxy forwards, the scheme is http, https
// or none, so no header can put another scheme or a host into the URLs the
// handlers build.
func FuzzForwardedScheme(f *testing.F) {
	for _, seed := range []string{"", "https", "HTTP", " https , http", "wss", "https://evil.example", "https\r\nX: y", "ht\x00tps"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		switch got := forwardedScheme(header); got {
		case "", "http", "https":
		default:
			t.Fatalf("forwardedScheme(%q) = %q", header, got)
		}
	})
}

// TestTusLocationBehindProxy: the TUS upload URL says https when a trusted
// proxy forwarded an https request over plain HTTP, and keeps the node's
// own scheme when the sender is not trusted.
func TestTusLocationBehindProxy(t *testing.T) {
	tests := []struct {
		name    string
		trusted bool
		want    string
	}{
		{"trusted proxy", true, "https://files.example/dav/uploads/"},
		{"untrusted sender", false, "http://files.example/dav/uploads/"},
	}
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tusPost("http://files.example/webdav/")
			r.Header.Set("X-Forwarded-Proto", "https")
			rec := httptest.NewRecorder()
			repl := caddy.NewReplacer()
			r = caddyhttp.PrepareRequest(r, repl, rec, &caddyhttp.Server{})
			caddyhttp.SetVar(r.Context(), caddyhttp.TrustedProxyVarKey, tt.trusted)
			repl.Set("http.auth.user.id", "einstein")
			if err := d.ServeHTTP(rec, r, nil); err != nil {
				t.Fatal(err)
			}
			if loc := rec.Header().Get("Location"); rec.Code != http.StatusCreated || !strings.HasPrefix(loc, tt.want) {
				t.Errorf("POST: %d, Location %q, want %s…", rec.Code, loc, tt.want)
			}
		})
	}
}

// TestTrustedProxiesThroughCaddy runs a real Caddy server: the
// trusted_proxies setting of the server is what makes X-Forwarded-Proto
// count.
func TestTrustedProxiesThroughCaddy(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tests := []struct {
		name    string
		proxies string // the server's trusted_proxies JSON, or ""
		want    string
	}{
		{"loopback trusted", `"trusted_proxies":{"source":"static","ranges":["127.0.0.1/32"]},`, "https://files.example/dav/uploads/"},
		{"no trusted proxies", "", "http://files.example/dav/uploads/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
			cfg := fmt.Sprintf(`{
				"admin": {"disabled": true, "config": {"persist": false}},
				"apps": {"http": {"servers": {"node": {
					"listen": [%q],
					"automatic_https": {"disable": true},
					%s
					"routes": [{"handle": [
						{"handler": "authentication", "providers": {"http_basic": {"accounts": [
							{"username": "einstein", "password": "$2a$10$M3.drX6uiFRNL/o1v8tib.HXtzE4k4tpvQkC4C1GY2f5oUjiSnqRe"}
						]}}},
						{"handler": "davspaces", "root": %q}
					]}]
				}}}}
			}`, addr, tt.proxies, t.TempDir())
			if err := caddy.Load([]byte(cfg), true); err != nil {
				t.Fatalf("loading Caddy: %v", err)
			}
			t.Cleanup(func() {
				if err := caddy.Stop(); err != nil {
					t.Errorf("stopping Caddy: %v", err)
				}
			})
			r := tusPost("http://" + addr + "/webdav/")
			r.Host = "files.example" // a proxy passes the client's Host on
			r.Header.Set("X-Forwarded-Proto", "https")
			r.SetBasicAuth("einstein", "relativity")
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusCreated || !strings.HasPrefix(loc, tt.want) {
				t.Errorf("POST: %d, Location %q, want %s…", resp.StatusCode, loc, tt.want)
			}
		})
	}
}

// tusPost is a TUS creation request for a 1-byte file.
func tusPost(target string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, nil)
	r.RequestURI = "" // sendable by a client too
	r.Header.Set("Tus-Resumable", "1.0.0")
	r.Header.Set("Upload-Length", "1")
	r.Header.Set("Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("up.bin")))
	return r
}
