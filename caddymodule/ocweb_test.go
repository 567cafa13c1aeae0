package caddymodule

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeHTTPOwnCloudWebStart checks that the davspaces handler routes
// what ownCloud Web asks while it starts: the application list without a
// user, the settings service's lists and the role definitions with one.
func TestServeHTTPOwnCloudWebStart(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), Spaces: []ProjectSpace{{Name: "Physics", Managers: []string{"einstein"}}}}
	mustProvision(t, d)
	for _, tc := range []struct {
		name   string
		req    request
		status int
		want   string
	}{
		{"app list without user", request{method: http.MethodGet, target: "/app/list"}, 200, `{"mime-types":[]}`},
		{"assignments", request{method: http.MethodPost, target: "/api/v0/settings/assignments-list", body: `{"account_uuid":"einstein"}`, user: "einstein"}, 200, `{"assignments":[]}`},
		{"roles", request{method: http.MethodPost, target: "/api/v0/settings/roles-list", body: `{}`, user: "einstein"}, 200, `{"bundles":[]}`},
		{"permissions", request{method: http.MethodPost, target: "/api/v0/settings/permissions-list", body: `{}`, user: "einstein"}, 200, `{"permissions":[]}`},
		{"settings without user", request{method: http.MethodPost, target: "/api/v0/settings/assignments-list"}, 401, `"code":401`},
		{"role definitions", request{method: http.MethodGet, target: "/graph/v1beta1/roleManagement/permissions/roleDefinitions", user: "einstein"}, 200, `"312c0871-5ef7-4b3a-85b6-0e4074c64049"`},
		{"drives of a type", request{method: http.MethodGet, target: "/graph/v1beta1/me/drives?%24filter=driveType%20eq%20project", user: "einstein"}, 200, `"webUrl":"http://example.com/f/`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, d, tc.req)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d with %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
}
