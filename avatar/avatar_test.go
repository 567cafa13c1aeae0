package avatar

import (
	"context"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// directory knows marie only.
type directory struct{}

func (directory) DirectoryUser(_ context.Context, id string) (storage.DirectoryEntry, error) {
	if id == "marie" {
		return storage.DirectoryEntry{ID: "marie", DisplayName: "Marie Curie"}, nil
	}
	return storage.DirectoryEntry{}, storage.ErrNotFound
}

func testUser(r *http.Request) (storage.User, bool) {
	u, _, ok := r.BasicAuth()
	return storage.User{ID: u, DisplayName: "Albert Einstein"}, ok
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
		want request
	}{
		{"/remote.php/dav/avatars/einstein/128.png", true, request{"einstein", 128}},
		{"/index.php/avatar/einstein/64", true, request{"einstein", 64}},
		{"/index.php/avatar/einstein/64/dark", true, request{"einstein", 64}},
		{"/index.php/avatar/einstein/4096", true, request{"einstein", maxSize}},
		{"/index.php/avatar/einstein/1", true, request{"einstein", minSize}},
		{"/remote.php/dav/avatars/einstein/128", false, request{}},
		{"/remote.php/dav/avatars/einstein/", false, request{}},
		{"/remote.php/dav/avatars//128.png", false, request{}},
		{"/index.php/avatar/einstein/big", false, request{}},
		{"/index.php/avatar/einstein/-5", false, request{}},
		{"/index.php/avatar/einstein", false, request{}},
		{"/index.php/avatars/einstein/64", false, request{}},
	}
	for _, tt := range tests {
		got, ok := parsePath(tt.path)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parsePath(%q) = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func TestInitials(t *testing.T) {
	tests := []struct{ name, id, want string }{
		{"Albert Einstein", "einstein", "AE"},
		{"marie", "marie", "M"},
		{"Jean Paul Sartre", "jps", "JP"},
		{"", "richard", "R"},
		{"  ", "9lives", "9"},
		{"Émilie du Châtelet", "emilie", "?D"},
		{"", "_x", "?"},
	}
	for _, tt := range tests {
		if got := Initials(tt.name, tt.id); got != tt.want {
			t.Errorf("Initials(%q, %q) = %q, want %q", tt.name, tt.id, got, tt.want)
		}
	}
}

// TestServe: the caller's avatar and a known user's are PNGs of the size
// asked; anybody else's is 404 whether or not they exist.
func TestServe(t *testing.T) {
	h, err := New(Config{User: testUser, Directory: directory{}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user, method, path string
		status, size             int
	}{
		{"own, desktop path", "einstein", http.MethodGet, "/remote.php/dav/avatars/einstein/128.png", http.StatusOK, 128},
		{"own, index.php", "einstein", http.MethodGet, "/index.php/avatar/einstein/64", http.StatusOK, 64},
		{"a known user", "einstein", http.MethodGet, "/index.php/avatar/marie/32", http.StatusOK, 32},
		{"HEAD", "einstein", http.MethodHead, "/index.php/avatar/marie/32", http.StatusOK, 0},
		{"an unknown user", "einstein", http.MethodGet, "/index.php/avatar/nobody/32", http.StatusNotFound, 0},
		{"a malformed path", "einstein", http.MethodGet, "/remote.php/dav/avatars/einstein/x.png", http.StatusNotFound, 0},
		{"POST", "einstein", http.MethodPost, "/index.php/avatar/einstein/64", http.StatusMethodNotAllowed, 0},
		{"anonymous", "", http.MethodGet, "/index.php/avatar/einstein/64", http.StatusUnauthorized, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.user != "" {
				r.SetBasicAuth(tt.user, "x")
			}
			route, ok := h.Route(r)
			if !ok {
				t.Fatalf("Route did not claim %s", tt.path)
			}
			rec := httptest.NewRecorder()
			route.ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.size == 0 {
				return
			}
			img, err := png.Decode(rec.Body)
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tt.size || b.Dy() != tt.size {
				t.Errorf("%v, want %d square", b, tt.size)
			}
		})
	}
	if _, ok := h.Route(httptest.NewRequest(http.MethodGet, "/remote.php/dav/files/einstein/", nil)); ok {
		t.Error("Route claimed a WebDAV path")
	}
}
