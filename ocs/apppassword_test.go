package ocs

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// newAppPasswordHandler serves app passwords on a store of the test's
// own; X-App-Password names the app password a request signed in with.
func newAppPasswordHandler(t *testing.T) (*Handler, *boltstore.Store) {
	t.Helper()
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := apppass.New(apppass.Config{
		Store: store,
		User: func(r *http.Request) (storage.User, bool) {
			id := r.Header.Get("X-User")
			return storage.User{ID: id}, id != ""
		},
		UsedPassword: func(r *http.Request) string { return r.Header.Get("X-App-Password") },
	})
	if err != nil {
		t.Fatal(err)
	}
	return newConfiguredHandler(t, func(cfg *Config) { cfg.AppPasswords = svc }), store
}

// TestGetAppPassword follows Nextcloud's AppPasswordController
// (nextcloud/server core/Controller/AppPasswordController.php): the
// password in data.apppassword, named after the User-Agent; 403 for a
// request that signed in with an app password.
func TestGetAppPassword(t *testing.T) {
	h, store := newAppPasswordHandler(t)
	w := serve(h, http.MethodGet, "/ocs/v2.php/core/getapppassword?format=json",
		"X-User", "einstein", "User-Agent", "Mozilla/5.0 (Linux) mirall/3.7.3")
	var got struct {
		OCS struct {
			Meta struct{ StatusCode int }
			Data struct{ AppPassword string }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK || got.OCS.Meta.StatusCode != 200 {
		t.Fatalf("getapppassword: %d %s", w.Code, w.Body)
	}
	id, _, ok := storage.SplitAppPassword(got.OCS.Data.AppPassword)
	if !ok {
		t.Fatalf("getapppassword answered %q", got.OCS.Data.AppPassword)
	}
	list, _ := store.AppPasswords(t.Context(), "einstein")
	if len(list) != 1 || list[0].ID != id || list[0].Label != "Mozilla/5.0 (Linux) mirall/3.7.3" || !list[0].Expires.IsZero() {
		t.Fatalf("kept %+v", list)
	}

	w = serve(h, http.MethodGet, "/ocs/v2.php/core/getapppassword", "X-User", "einstein", "X-App-Password", id)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "<statuscode>403</statuscode>") {
		t.Fatalf("getapppassword with an app password: %d %s", w.Code, w.Body)
	}
	if list, _ := store.AppPasswords(t.Context(), "einstein"); len(list) != 1 {
		t.Fatalf("%d passwords after the refusal", len(list))
	}
}

func TestDeleteAppPassword(t *testing.T) {
	h, store := newAppPasswordHandler(t)
	p, _, err := storage.NewAppPassword("einstein", "", time.Time{}, time.Now(), storage.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateAppPassword(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"without an app password", []string{"X-User", "einstein"}, http.StatusForbidden},
		{"by another user", []string{"X-User", "marie", "X-App-Password", p.ID}, http.StatusForbidden},
		{"with it", []string{"X-User", "einstein", "X-App-Password", p.ID}, http.StatusOK},
		{"again", []string{"X-User", "einstein", "X-App-Password", p.ID}, http.StatusForbidden},
	} {
		if w := serve(h, http.MethodDelete, "/ocs/v2.php/core/apppassword", tc.hdr...); w.Code != tc.want {
			t.Fatalf("DELETE %s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
		_, err := store.AppPassword(t.Context(), p.ID)
		if gone := err != nil; gone != (tc.want == http.StatusOK || tc.name == "again") {
			t.Fatalf("after DELETE %s: %v", tc.name, err)
		}
	}
	if w := serve(h, http.MethodGet, "/ocs/v2.php/core/apppassword", "X-User", "einstein"); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET apppassword: %d", w.Code)
	}
}
