package ocs

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func TestUser(t *testing.T) {
	h := newTestHandler(t, true)
	for _, tc := range []struct {
		name string
		hdr  []string
		want cloudUser
	}{
		{"full", []string{"X-User", "einstein", "X-Name", "Albert Einstein", "X-Email", "einstein@example.org"},
			cloudUser{ID: "einstein", DisplayName: "Albert Einstein", Email: "einstein@example.org"}},
		{"no name falls back to the id", []string{"X-User", "marie"}, cloudUser{ID: "marie", DisplayName: "marie"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"v1", "v2"} {
				w := serve(h, http.MethodGet, "/ocs/"+v+".php/cloud/user?format=json", tc.hdr...)
				var env struct {
					OCS struct {
						Data cloudUser `json:"data"`
					} `json:"ocs"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.OCS.Data != tc.want {
					t.Errorf("%s JSON: %+v (%v), want %+v", v, env.OCS.Data, err, tc.want)
				}
				w = serve(h, http.MethodGet, "/ocs/"+v+".php/cloud/user", tc.hdr...)
				var x struct {
					Data cloudUser `xml:"data"`
				}
				if err := xml.Unmarshal(w.Body.Bytes(), &x); err != nil || x.Data != tc.want {
					t.Errorf("%s XML: %+v (%v), want %+v", v, x.Data, err, tc.want)
				}
			}
		})
	}
}

// TestUserQuota: Nextcloud's desktop client (src/gui/userinfo.cpp) reads
// quota.used and quota.quota from cloud/user, its Android app
// (GetUserInfoRemoteOperation) the same with -3 for no limit; the apps
// also ask cloud/users/{their id}. Another id is "User does not exist"
// whether or not there is such a user.
func TestUserQuota(t *testing.T) {
	tests := []struct {
		name          string
		personalQuota int64
		target        string
		user          string
		status        int
		want          *userQuota
	}{
		{"no limit", 0, "/ocs/v1.php/cloud/user", "einstein", http.StatusOK,
			&userQuota{Free: -3, Used: 5, Total: 5, Quota: -3}},
		{"a limit", 1000, "/ocs/v2.php/cloud/user", "einstein", http.StatusOK,
			&userQuota{Free: 995, Used: 5, Total: 1000, Relative: 0.5, Quota: 1000}},
		{"by id", 1000, "/ocs/v1.php/cloud/users/einstein", "einstein", http.StatusOK,
			&userQuota{Free: 995, Used: 5, Total: 1000, Relative: 0.5, Quota: 1000}},
		{"by id, v2", 0, "/ocs/v2.php/cloud/users/einstein/", "einstein", http.StatusOK,
			&userQuota{Free: -3, Used: 5, Total: 5, Quota: -3}},
		{"another user", 0, "/ocs/v2.php/cloud/users/marie", "einstein", http.StatusNotFound, nil},
		{"nobody", 0, "/ocs/v2.php/cloud/users/nobody", "einstein", http.StatusNotFound, nil},
		{"anonymous", 0, "/ocs/v2.php/cloud/users/einstein", "", http.StatusUnauthorized, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true, PersonalQuota: tt.personalQuota})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			putFile(t, store, "einstein", "hello")
			h := newConfiguredHandler(t, func(cfg *Config) { cfg.Store = store })
			var hdr []string
			if tt.user != "" {
				hdr = []string{"X-User", tt.user}
			}
			w := serve(h, http.MethodGet, tt.target+"?format=json", hdr...)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.want == nil {
				return
			}
			var env struct {
				OCS struct {
					Data cloudUser `json:"data"`
				} `json:"ocs"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			if got := env.OCS.Data; got.ID != tt.user || got.Quota == nil || *got.Quota != *tt.want {
				t.Errorf("user %+v quota %+v, want quota %+v", got, got.Quota, tt.want)
			}
		})
	}
}

// putFile commits a file to user's personal space.
func putFile(t *testing.T, store *boltstore.Store, user, content string) {
	t.Helper()
	ctx := t.Context()
	space, err := store.PersonalSpace(ctx, storage.User{ID: user})
	if err != nil {
		t.Fatal(err)
	}
	up, err := store.NewUpload(ctx, space.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := up.Commit(ctx, storage.Commit{ParentID: space.ID, Name: "f.txt"}); err != nil {
		t.Fatal(err)
	}
}
