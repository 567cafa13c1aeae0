package webfinger

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/davspaces/davspaces/identity"
)

const testDocument = `{"issuer":"https://idp.example.org/realms/main","authorization_endpoint":"https://idp.example.org/realms/main/auth"}`

// The real provider must fit the interface.
var _ DocumentSource = (*identity.Provider)(nil)

// fakeSource answers its document, or err; it counts the calls.
type fakeSource struct {
	err   error
	calls atomic.Int64
}

func (f *fakeSource) Document(context.Context) (identity.Document, error) {
	f.calls.Add(1)
	if f.err != nil {
		return identity.Document{}, f.err
	}
	return identity.Document{Body: []byte(testDocument), ETag: `"abc"`}, nil
}

func TestDiscovery(t *testing.T) {
	down := fmt.Errorf("%w: connection refused", identity.ErrUnavailable)
	tests := []struct {
		name        string
		method      string
		target      string
		host        string
		ifNoneMatch string
		err         error
		status      int
		body        string
		headers     map[string]string
		asked       int64
	}{
		{
			name: "the issuer's document", method: http.MethodGet, target: DiscoveryPath,
			status: http.StatusOK, body: testDocument, asked: 1,
			headers: map[string]string{"Content-Type": "application/json", "ETag": `"abc"`, "Cache-Control": "no-cache", "Content-Length": fmt.Sprint(len(testDocument))},
		},
		{
			name: "HEAD", method: http.MethodHead, target: DiscoveryPath,
			status: http.StatusOK, asked: 1,
			headers: map[string]string{"Content-Type": "application/json", "ETag": `"abc"`, "Content-Length": fmt.Sprint(len(testDocument))},
		},
		{
			name: "the query chooses nothing", method: http.MethodGet,
			target: DiscoveryPath + "?issuer=https%3A%2F%2Fevil.example&url=http%3A%2F%2F169.254.169.254%2F",
			status: http.StatusOK, body: testDocument, asked: 1,
		},
		{
			name: "If-None-Match names the ETag", method: http.MethodGet, target: DiscoveryPath, ifNoneMatch: `"abc"`,
			status: http.StatusNotModified, asked: 1, headers: map[string]string{"ETag": `"abc"`, "Content-Type": ""},
		},
		{
			name: "If-None-Match, weak, in a list", method: http.MethodGet, target: DiscoveryPath, ifNoneMatch: `"x", W/"abc"`,
			status: http.StatusNotModified, asked: 1,
		},
		{
			name: "If-None-Match *", method: http.MethodGet, target: DiscoveryPath, ifNoneMatch: `*`,
			status: http.StatusNotModified, asked: 1,
		},
		{
			name: "If-None-Match names another", method: http.MethodGet, target: DiscoveryPath, ifNoneMatch: `"abd"`,
			status: http.StatusOK, body: testDocument, asked: 1,
		},
		{
			name: "provider unreachable", method: http.MethodGet, target: DiscoveryPath, err: down,
			status: http.StatusServiceUnavailable, asked: 1,
			headers: map[string]string{"Retry-After": "5", "Content-Type": "application/json", "Cache-Control": "no-store", "ETag": ""},
		},
		{
			name: "the issuer is this server", method: http.MethodGet, target: DiscoveryPath, host: "idp.example.org",
			status: http.StatusNotFound,
		},
		{
			name: "POST", method: http.MethodPost, target: DiscoveryPath,
			status: http.StatusMethodNotAllowed, headers: map[string]string{"Allow": allow},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{err: tt.err}
			d, err := NewDiscovery("https://idp.example.org", src, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(tt.method, "https://cloud.example.org"+tt.target, nil)
			if tt.host != "" {
				r.Host = tt.host
			}
			if tt.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", tt.ifNoneMatch)
			}
			w := httptest.NewRecorder()
			d.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tt.status, w.Body)
			}
			if tt.body != "" && w.Body.String() != tt.body {
				t.Errorf("body %s, want %s", w.Body, tt.body)
			}
			if tt.method == http.MethodHead && w.Body.Len() != 0 {
				t.Errorf("HEAD answered a body")
			}
			checkHeaders(t, w.Header(), tt.headers)
			if n := src.calls.Load(); n != tt.asked {
				t.Errorf("document asked %d times, want %d", n, tt.asked)
			}
		})
	}
}

func TestNewDiscoveryRefusesABadIssuer(t *testing.T) {
	for _, issuer := range []string{"", "idp.example.org", "ftp://idp.example.org"} {
		if _, err := NewDiscovery(issuer, &fakeSource{}, nil); err == nil {
			t.Errorf("NewDiscovery(%q) accepted", issuer)
		}
	}
}
