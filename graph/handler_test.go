package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestRoute(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		path string
		want bool
	}{
		{"/graph/v1.0/me", true},
		{"/graph/v1.0/me/drives", true},
		{"/graph/v1beta1/me/drives", true},
		{"/graph/unknown", true},
		{"/graph", true},
		{"/graphs/v1.0/me", false},
		{"/dav/spaces/x", false},
		{"/ocs/v1.php/cloud/capabilities", false},
		{"/", false},
	}
	for _, tt := range tests {
		_, ok := e.h.Route(httptest.NewRequest(http.MethodGet, tt.path, nil))
		if ok != tt.want {
			t.Errorf("Route(%s) = %v, want %v", tt.path, ok, tt.want)
		}
	}
}

func TestMe(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", http.MethodGet, "/graph/v1.0/me")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": "einstein", "displayName": "Einstein", "onPremisesSamAccountName": "einstein"}
	if len(got) != len(want) {
		t.Fatalf("me %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("me %v, want %v", got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name   string
		user   string
		method string
		path   string
		status int
		code   string
		allow  string
	}{
		{"me unauthenticated", "", http.MethodGet, "/graph/v1.0/me", http.StatusUnauthorized, "unauthenticated", ""},
		{"drives unauthenticated", "", http.MethodGet, "/graph/v1.0/me/drives", http.StatusUnauthorized, "unauthenticated", ""},
		{"unknown path", "einstein", http.MethodGet, "/graph/v1.0/applications", http.StatusNotFound, "itemNotFound", ""},
		{"unknown path unauthenticated", "", http.MethodGet, "/graph/v1.0/drives/x/children", http.StatusNotFound, "itemNotFound", ""},
		{"graph root", "einstein", http.MethodGet, "/graph", http.StatusNotFound, "itemNotFound", ""},
		{"POST drives", "einstein", http.MethodPost, "/graph/v1.0/me/drives", http.StatusMethodNotAllowed, "notAllowed", "GET, HEAD"},
		{"DELETE me", "", http.MethodDelete, "/graph/v1.0/me", http.StatusMethodNotAllowed, "notAllowed", "GET, HEAD"},
		{"an item path too long", "einstein", http.MethodGet, "/graph/v1beta1/drives/s$p/items/" + strings.Repeat("n", storage.MaxPathBytes) + "/permissions", http.StatusRequestURITooLong, "invalidRequest", ""},
		{"an item path too deep", "", http.MethodPost, "/graph/v1beta1/drives/s$p/items/s$p!n/invite" + strings.Repeat("/x", storage.MaxPathSegments), http.StatusRequestURITooLong, "invalidRequest", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.path)
			wantStatus(t, rec, tt.status)
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("decoding %s: %v", rec.Body.String(), err)
			}
			if body.Error.Code != tt.code || body.Error.Message == "" {
				t.Fatalf("error %+v, want code %s", body.Error, tt.code)
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestHead(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", http.MethodHead, "/graph/v1.0/me/drives")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "0" {
		t.Fatalf("HEAD body %d bytes, Content-Length %q", rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

func TestNewRequires(t *testing.T) {
	e := newEnv(t)
	if _, err := New(Config{User: testUser}); err == nil {
		t.Error("New without a store succeeded")
	}
	if _, err := New(Config{Store: e.store}); err == nil {
		t.Error("New without a user function succeeded")
	}
}

// failingStore fails every space lookup with err, as a broken database
// would.
type failingStore struct {
	storage.Store
	err error
}

func (s failingStore) Space(context.Context, string) (storage.Space, error) {
	return storage.Space{}, s.err
}

func TestStoreFailureIs500(t *testing.T) {
	e := newEnv(t)
	h, err := New(Config{Store: failingStore{e.store, errors.New("disk on fire")}, Shares: e.store, Directory: e.store, User: testUser, Spaces: storage.NewSpacePolicy([]string{"physics"})})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	rec := e.do("einstein", http.MethodGet, "/graph/v1.0/me/drives")
	wantStatus(t, rec, http.StatusInternalServerError)
	if contains(rec.Body.String(), "fire") || !contains(rec.Body.String(), `"generalException"`) {
		t.Fatalf("500 body %s", rec.Body.String())
	}
}

// TestStoreOutageIs503: a store whose backend cannot be reached is a 503
// asking the client to retry, not a 500.
func TestStoreOutageIs503(t *testing.T) {
	e := newEnv(t)
	h, err := New(Config{Store: failingStore{e.store, fmt.Errorf("dial: %w", storage.ErrUnavailable)}, Shares: e.store, Directory: e.store, User: testUser, Spaces: storage.NewSpacePolicy([]string{"physics"})})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	rec := e.do("einstein", http.MethodGet, "/graph/v1.0/me/drives")
	wantStatus(t, rec, http.StatusServiceUnavailable)
	if rec.Header().Get("Retry-After") == "" || !contains(rec.Body.String(), `"serviceNotAvailable"`) {
		t.Fatalf("503 headers %v body %s", rec.Header(), rec.Body.String())
	}
}
