package caddymodule

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// TestServeHTTPOCSAndGraph checks that one davspaces handler serves the
// whole ownCloud-compatible surface: status.php and ownCloud Web's
// application list without a user; the OCS endpoints, the Graph drives and
// role definitions, and the settings service's lists with one.
func TestServeHTTPOCSAndGraph(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), Spaces: []ProjectSpace{{Name: "Physics", Managers: []string{"einstein"}}}}
	mustProvision(t, d)
	for _, tc := range []struct {
		name   string
		req    request
		status int
		want   string
	}{
		{"status.php without user", request{method: http.MethodGet, target: "/status.php"}, 200, `"installed":true`},
		{"capabilities v1 json", request{method: http.MethodGet, target: "/ocs/v1.php/cloud/capabilities?format=json", user: "einstein"}, 200, `"webdav-root":"remote.php/webdav"`},
		{"capabilities advertise TUS", request{method: http.MethodGet, target: "/ocs/v1.php/cloud/capabilities?format=json", user: "einstein"}, 200, `"tus_support":{"version":"1.0.0"`},
		{"capabilities v2 xml", request{method: http.MethodGet, target: "/ocs/v2.php/cloud/capabilities", user: "einstein"}, 200, `<statuscode>200</statuscode>`},
		{"capabilities without user", request{method: http.MethodGet, target: "/ocs/v1.php/cloud/capabilities?format=json"}, 200, `"favorites":true`},
		{"capabilities' TUS chunk size", request{method: http.MethodGet, target: "/ocs/v1.php/cloud/capabilities?format=json"}, 200, `"max_chunk_size":10000000`},
		{"user", request{method: http.MethodGet, target: "/ocs/v2.php/cloud/user?format=json", user: "einstein"}, 200, `"id":"einstein"`},
		{"unknown ocs path", request{method: http.MethodGet, target: "/ocs/v2.php/apps/x?format=json", user: "einstein"}, 404, `"statuscode":404`},
		{"graph drives", request{method: http.MethodGet, target: "/graph/v1.0/me/drives", user: "einstein"}, 200, `"Physics"`},
		{"app list without user", request{method: http.MethodGet, target: "/app/list"}, 200, `{"mime-types":[]}`},
		{"assignments", request{method: http.MethodPost, target: "/api/v0/settings/assignments-list", body: `{"account_uuid":"einstein"}`, user: "einstein"}, 200, `{"assignments":[]}`},
		{"roles", request{method: http.MethodPost, target: "/api/v0/settings/roles-list", body: `{}`, user: "einstein"}, 200, `{"bundles":[]}`},
		{"permissions", request{method: http.MethodPost, target: "/api/v0/settings/permissions-list", body: `{}`, user: "einstein"}, 200, `{"permissions":["Shares.Write.all","PublicLink.Write.all","Favorites.List.own","Favorites.Write.own"]}`},
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

// TestServeHTTPStatusVersion checks that the status comes from one place:
// status.php and the capabilities' core.status agree.
func TestServeHTTPStatusVersion(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	var status map[string]any
	rec := serve(t, d, request{method: http.MethodGet, target: "/status.php"})
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	var caps struct {
		OCS struct {
			Data struct {
				Capabilities struct {
					Core struct {
						Status map[string]any `json:"status"`
					} `json:"core"`
				} `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	rec = serve(t, d, request{method: http.MethodGet, target: "/ocs/v1.php/cloud/capabilities?format=json", user: "einstein"})
	if err := json.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	got := caps.OCS.Data.Capabilities.Core.Status
	for k, v := range status {
		if got[k] != v {
			t.Errorf("core.status.%s = %v, status.php says %v", k, got[k], v)
		}
	}
	if status["productversion"] == "" {
		t.Errorf("empty productversion")
	}
}

func TestCleanVersion(t *testing.T) {
	for in, want := range map[string]string{"(devel)": "", "": "", "v1.2.3": "v1.2.3"} {
		if got := cleanVersion(in); got != want {
			t.Errorf("cleanVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestServeHTTPChunkingAdvertised checks that chunked uploads are
// advertised exactly when the store keeps them.
func TestServeHTTPChunkingAdvertised(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	rec := serve(t, d, request{method: http.MethodGet, target: "/ocs/v2.php/cloud/capabilities?format=json", user: "einstein"})
	_, chunked := any(&boltstore.Store{}).(storage.ChunkedUploads)
	body := rec.Body.String()
	if got := strings.Contains(body, `"chunking":"1.0"`) && strings.Contains(body, `"bigfilechunking":true`); got != chunked {
		t.Errorf("store keeps chunked uploads: %v; capabilities %s", chunked, body)
	}
}
