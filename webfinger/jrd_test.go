package webfinger

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
)

// TestMediaType: the ownCloud desktop client
// (owncloud/client src/gui/networkadapters/discoverwebfingerserviceadapter.cpp,
// processReply) refuses a lookup whose Content-Type does not contain
// application/json, so that is the default; RFC 7033's jrd+json goes to
// clients that name it.
func TestMediaType(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		want   string
	}{
		{"no Accept", nil, "application/json"},
		{"anything", []string{"*/*"}, "application/json"},
		{"json", []string{"application/json"}, "application/json"},
		{"the desktop client's Qt default", []string{"application/json, text/plain, */*"}, "application/json"},
		{"jrd", []string{"application/jrd+json"}, "application/jrd+json"},
		{"jrd among others", []string{"application/json;q=0.5, application/jrd+json"}, "application/jrd+json"},
		{"jrd with a quality", []string{"application/jrd+json; q=0.8"}, "application/jrd+json"},
		{"jrd in capitals", []string{"Application/JRD+JSON"}, "application/jrd+json"},
		{"jrd in a second header", []string{"text/plain", "application/jrd+json"}, "application/jrd+json"},
		{"jrd refused", []string{"application/jrd+json;q=0, application/json"}, "application/json"},
		{"jrd refused with 0.000", []string{"application/jrd+json; Q=0.000"}, "application/json"},
		{"a longer name", []string{"application/jrd+jsonx"}, "application/json"},
	}
	h := newHandler(t, Config{PlatformURL: testPlatform})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/?resource=acct:alice@example.org", nil)
			for _, v := range tt.accept {
				r.Header.Add("Accept", v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := w.Header().Get("Content-Type"); w.Code != http.StatusOK || got != tt.want {
				t.Fatalf("%d, Content-Type %q; want 200 %q", w.Code, got, tt.want)
			}
			if vary := w.Header().Values("Vary"); !slices.Contains(vary, "Accept") {
				t.Errorf("Vary %q does not name Accept", vary)
			}
		})
	}
}

// TestSubjectEchoesResource: the iOS app (owncloud/ios-sdk
// ownCloudSDK/Connection/OCConnection+Setup.m) compares subject with its
// root URL exactly, and the desktop client with the URL the user typed, so
// the subject is the resource byte for byte, with or without a trailing
// slash.
func TestSubjectEchoesResource(t *testing.T) {
	for _, resource := range []string{
		"https://cloud.example.org",
		"https://cloud.example.org/",
		"https://cloud.example.org/owncloud/",
		"https://Cloud.Example.org:443",
		"https://cloud.example.org/a%20b",
		"acct:alice@cloud.example.org",
		"acct:me@cloud.example.org",
	} {
		t.Run(resource, func(t *testing.T) {
			w := do(newHandler(t, Config{}), http.MethodGet, "/?resource="+url.QueryEscape(resource), "")
			if got := decode(t, w).Subject; got != resource {
				t.Fatalf("subject %q, want %q", got, resource)
			}
		})
	}
}
