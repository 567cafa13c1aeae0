package settings

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// basicUser trusts the Basic user name; authentication is Caddy's job.
func basicUser(r *http.Request) (storage.User, bool) {
	u, _, ok := r.BasicAuth()
	return storage.User{ID: u}, ok && u != ""
}

func newHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New(Config{User: basicUser})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h *Handler, method, path, user string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(`{"account_uuid":"einstein"}`))
	if user != "" {
		r.SetBasicAuth(user, "x")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestNewNeedsUser(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a user function succeeded")
	}
}

func TestRoute(t *testing.T) {
	h := newHandler(t)
	for path, want := range map[string]bool{
		"/api/v0/settings/roles-list": true,
		"/api/v0/settings/unknown":    true,
		"/api/v0/settings":            true,
		"/api/v0/settingsx":           false,
		"/api/v0/":                    false,
		"/graph/v1.0/me":              false,
	} {
		if _, ok := h.Route(httptest.NewRequest(http.MethodPost, path, nil)); ok != want {
			t.Errorf("Route(%s) = %v, want %v", path, ok, want)
		}
	}
}

// TestListsAreEmpty: each list Web reads is there, under its key, empty.
func TestListsAreEmpty(t *testing.T) {
	h := newHandler(t)
	for endpoint, key := range map[string]string{
		"assignments-list": "assignments",
		"roles-list":       "bundles",
		"permissions-list": "permissions",
		"values-list":      "values",
		"bundles-list":     "bundles",
	} {
		t.Run(endpoint, func(t *testing.T) {
			rec := serve(h, http.MethodPost, Prefix+endpoint, "einstein")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if len(body) != 1 || string(body[key]) != "[]" {
				t.Errorf("answer %s, want {%q:[]}", rec.Body, key)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	h := newHandler(t)
	tests := []struct {
		name, method, path, user string
		status                   int
	}{
		{"no user", http.MethodPost, Prefix + "assignments-list", "", http.StatusUnauthorized},
		{"GET", http.MethodGet, Prefix + "roles-list", "einstein", http.StatusMethodNotAllowed},
		{"unknown endpoint", http.MethodPost, Prefix + "values-save", "einstein", http.StatusNotFound},
		{"the root", http.MethodPost, "/api/v0/settings", "einstein", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, tt.method, tt.path, tt.user)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != tt.status {
				t.Errorf("error body %s (%v)", rec.Body, err)
			}
		})
	}
	if rec := serve(h, http.MethodGet, Prefix+"roles-list", "einstein"); rec.Header().Get("Allow") != http.MethodPost {
		t.Errorf("Allow %q", rec.Header().Get("Allow"))
	}
}
