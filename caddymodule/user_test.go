package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

func TestGroupsOf(t *testing.T) {
	tests := []struct {
		name  string
		value any // nil: not set
		want  []string
	}{
		{"oidc_auth list", userGroups{"admins", "developers"}, []string{"admins", "developers"}},
		{"comma-separated string", "admins,developers", []string{"admins", "developers"}},
		{"one group", "admins", []string{"admins"}},
		{"spaces and blanks", " admins , ,developers, ", []string{"admins", "developers"}},
		{"only commas", ",,", nil},
		{"empty string", "", nil},
		{"empty list", userGroups{}, nil},
		{"absent", nil, nil},
		{"other type", 42, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repl := caddy.NewReplacer()
			if tt.value != nil {
				repl.Set("http.auth.user.groups", tt.value)
			}
			if got := groupsOf(repl); !slices.Equal(got, tt.want) {
				t.Errorf("groupsOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUserFromCaddy(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   storage.User
		ok     bool
	}{
		{
			name: "oidc_auth user",
			values: map[string]any{
				"http.auth.user.id":     "alice",
				"http.auth.user.name":   "Alice Archer",
				"http.auth.user.groups": userGroups{"admins", "developers"},
			},
			want: storage.User{ID: "alice", DisplayName: "Alice Archer", Groups: []string{"admins", "developers"}},
			ok:   true,
		},
		{
			name:   "id only",
			values: map[string]any{"http.auth.user.id": "einstein"},
			want:   storage.User{ID: "einstein"},
			ok:     true,
		},
		{
			name:   "groups as a string",
			values: map[string]any{"http.auth.user.id": "dora", "http.auth.user.groups": "admins,staff"},
			want:   storage.User{ID: "dora", Groups: []string{"admins", "staff"}},
			ok:     true,
		},
		{
			name: "scoped app password",
			values: map[string]any{"http.auth.user.id": "alice", "http.auth.user.app_password_id": "abcdefghijklmnop",
				"http.auth.user.scope.space": "lab", "http.auth.user.scope.path": "/Photos", "http.auth.user.scope.read_only": "true"},
			want: storage.User{ID: "alice", Scope: storage.Scope{Space: "lab", Path: "/Photos", ReadOnly: true}},
			ok:   true,
		},
		{
			name:   "read-only app password",
			values: map[string]any{"http.auth.user.id": "alice", "http.auth.user.scope.read_only": "true"},
			want:   storage.User{ID: "alice", Scope: storage.Scope{ReadOnly: true}},
			ok:     true,
		},
		// Refused rather than read wider than meant.
		{name: "scope path without space", values: map[string]any{"http.auth.user.id": "alice", "http.auth.user.scope.path": "/Photos"}},
		{name: "scope path not clean", values: map[string]any{"http.auth.user.id": "alice", "http.auth.user.scope.space": "lab", "http.auth.user.scope.path": "/a/../b"}},
		{name: "no id", values: map[string]any{"http.auth.user.name": "Nobody"}},
		{name: "empty id", values: map[string]any{"http.auth.user.id": ""}},
		{name: "NUL", values: map[string]any{"http.auth.user.id": "ein\x00stein"}},
		{name: "dot dot", values: map[string]any{"http.auth.user.id": ".."}},
		{name: "slash", values: map[string]any{"http.auth.user.id": "a/b"}},
		{name: "control character", values: map[string]any{"http.auth.user.id": "a\nb"}},
		{name: "5,000 characters", values: map[string]any{"http.auth.user.id": strings.Repeat("x", 5000)}},
	}
	userFromCaddy := userFromCaddy(zap.NewNop())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repl := caddy.NewReplacer()
			r := caddyhttp.PrepareRequest(httptest.NewRequest(http.MethodGet, "/", nil), repl, httptest.NewRecorder(), &caddyhttp.Server{})
			for k, v := range tt.values {
				repl.Set(k, v)
			}
			u, ok := userFromCaddy(r)
			if ok != tt.ok || u.ID != tt.want.ID || u.DisplayName != tt.want.DisplayName || !slices.Equal(u.Groups, tt.want.Groups) || u.Scope != tt.want.Scope {
				t.Errorf("userFromCaddy = %+v, %v; want %+v, %v", u, ok, tt.want, tt.ok)
			}
		})
	}
	if u, ok := userFromCaddy(httptest.NewRequest(http.MethodGet, "/", nil)); ok {
		t.Errorf("a request without replacer has user %+v", u)
	}
}
