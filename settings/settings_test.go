package settings

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
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
		// No feature configured, no permission.
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

// TestPermissions: ownCloud Web offers sharing, links and favourites only
// to a user with their permissions (web-runtime/src/services/auth/
// abilities.ts); each comes with the feature that serves it.
func TestPermissions(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"nothing", Config{}, []string{}},
		{"sharing", Config{Sharing: true}, []string{PermissionShares, PermissionPublicLinks}},
		{"favourites", Config{Favorites: true}, []string{PermissionFavoritesList, PermissionFavorites}},
		{"both", Config{Sharing: true, Favorites: true}, []string{PermissionShares, PermissionPublicLinks, PermissionFavoritesList, PermissionFavorites}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.User = basicUser
			h, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec := serve(h, http.MethodPost, Prefix+"permissions-list", "marie")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var body struct{ Permissions []string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(body.Permissions, tt.want) || body.Permissions == nil {
				t.Errorf("permissions %s, want %q", rec.Body, tt.want)
			}
		})
	}
	// Still nothing without a user.
	h, _ := New(Config{User: basicUser, Sharing: true})
	if rec := serve(h, http.MethodPost, Prefix+"permissions-list", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("without a user: %d", rec.Code)
	}
}
