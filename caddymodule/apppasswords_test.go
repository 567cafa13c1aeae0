package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// entries is a directory of fixed entries.
type entries map[string]storage.DirectoryEntry

func (d entries) DirectoryUser(_ context.Context, id string) (storage.DirectoryEntry, error) {
	e, ok := d[id]
	if !ok {
		return storage.DirectoryEntry{}, storage.ErrNotFound
	}
	return e, nil
}

// TestAppPasswordSignIn: oidc_auth signs a scoped app password in with
// its scope in the placeholders, which davspaces reads onto the user;
// with app_password_idle it refuses the password of a user the provider
// has not signed in for longer, or never; and the sign-in writes nothing
// to the directory, so that it never renews Seen itself.
func TestAppPasswordSignIn(t *testing.T) {
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	guard, err := passwordguard.New(passwordguard.Options{Budgets: store})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := apppass.NewVerifier(apppass.VerifierConfig{Store: store, Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	scope := storage.Scope{Space: "lab", Path: "/Photos", ReadOnly: true}
	passwords := map[string]string{}
	for _, user := range []string{"active", "idle", "unknown"} {
		p, password, err := storage.NewAppPassword(user, "", time.Time{}, now, scope)
		if err != nil {
			t.Fatal(err)
		}
		// The sign-ins compare at the cost the hash names: the lowest
		// spares the race detector seconds of CPU a compare.
		_, secret, _ := storage.SplitAppPassword(password)
		if p.Hash, err = bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost); err != nil {
			t.Fatal(err)
		}
		if err := store.CreateAppPassword(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		passwords[user] = password
	}
	dir := entries{
		"active": {ID: "active", DisplayName: "Active", Seen: now.Add(-3 * 24 * time.Hour)},
		"idle":   {ID: "idle", Seen: now.Add(-31 * 24 * time.Hour)},
	}
	config, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer appPasswordStores.add(config, verifier, dir)()

	written := &writtenDirectory{}
	dav := &DAVSpaces{users: userFromCaddy(zap.NewNop()), directory: newDirectoryWriter(written, zap.NewNop(), 10)}
	for _, tc := range []struct {
		user string
		idle time.Duration
		ok   bool
	}{
		{"active", 0, true},
		{"idle", 0, true},
		{"unknown", 0, true},
		{"active", 30 * 24 * time.Hour, true},
		{"idle", 30 * 24 * time.Hour, false},
		{"unknown", 30 * 24 * time.Hour, false},
	} {
		a := &OIDCAuth{AppPasswordIdle: caddy.Duration(tc.idle), config: config, logger: zap.NewNop()}
		repl := caddy.NewReplacer()
		r := httptest.NewRequest(http.MethodGet, "/webdav/", nil)
		r = caddyhttp.PrepareRequest(r, repl, httptest.NewRecorder(), &caddyhttp.Server{})
		r.SetBasicAuth(tc.user, passwords[tc.user])
		w := httptest.NewRecorder()
		handled, err := a.authenticateAppPassword(w, r, repl)
		if !handled {
			t.Fatalf("%s, idle %s: not handled", tc.user, tc.idle)
		}
		var herr caddyhttp.HandlerError
		if !tc.ok {
			if !errors.As(err, &herr) || herr.StatusCode != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s, idle %s: %v, want 401 with a challenge", tc.user, tc.idle, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s, idle %s: %v", tc.user, tc.idle, err)
			continue
		}
		u, ok := dav.users(r)
		if !ok || u.ID != tc.user || u.Scope != scope {
			t.Errorf("%s, idle %s: signed in as %+v, %v; want the scope %+v", tc.user, tc.idle, u, ok, scope)
		}
		dav.rememberCaller(r)
	}
	if n := written.count(); n != 0 {
		t.Errorf("app password sign-ins wrote %d directory entries", n)
	}
}
