package caddymodule

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/google/uuid"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// provisionTimeout bounds Provision: a second opener of a bbolt file waits
// for its lock, so a store that is not shared would hang or time out.
const provisionTimeout = 10 * time.Second

func newContext(t *testing.T) caddy.Context {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	return ctx
}

// provision runs Provision and Validate on d within provisionTimeout, as
// Caddy does when it loads a configuration of its own.
func provision(t *testing.T, d *DAVSpaces) error {
	t.Helper()
	return provisionIn(t, newContext(t), d)
}

// provisionIn is provision for a handler of the configuration whose
// context is ctx.
func provisionIn(t *testing.T, ctx caddy.Context, d *DAVSpaces) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		err := d.Provision(ctx)
		if err == nil {
			err = d.Validate()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(provisionTimeout):
		t.Fatalf("Provision did not return within %v (root %s)", provisionTimeout, d.Root)
		return nil
	}
}

// mustProvision provisions d and cleans it up at the end of the test.
func mustProvision(t *testing.T, d *DAVSpaces) {
	t.Helper()
	if err := provision(t, d); err != nil {
		t.Fatalf("provisioning: %v", err)
	}
	t.Cleanup(func() { cleanup(t, d) })
}

// cleanup releases d once, even when a test already did.
func cleanup(t *testing.T, d *DAVSpaces) {
	t.Helper()
	if d.storeKey == "" {
		return
	}
	if err := d.Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
	d.storeKey = ""
}

// pooledStoreOf returns the store the pool holds for root, without taking a
// reference.
func pooledStoreOf(t *testing.T, root string) *boltstore.Store {
	t.Helper()
	s, ok := pooledOf(t, root).Store.(*boltstore.Store)
	if !ok {
		t.Fatalf("the store of %s is %T, not bolt", root, pooledOf(t, root).Store)
	}
	return s
}

// pooledOf returns the pool's entry for root, without taking a reference.
func pooledOf(t *testing.T, root string) *pooledStore {
	t.Helper()
	var p *pooledStore
	stores.Range(func(k, v any) bool {
		if k == root {
			p = v.(*pooledStore)
			return false
		}
		return true
	})
	if p == nil {
		t.Fatalf("no pooled store for %s", root)
	}
	return p
}

type request struct {
	method, target, body string
	user                 string // sets {http.auth.user.id} when not empty
	header               map[string]string
}

var errNext = errors.New("next handler called")

// serve runs req through d the way a Caddy server would: with a replacer,
// the vars map and the authenticated user in the replacer. It fails the
// test if d passes the request on.
func serve(t *testing.T, d *DAVSpaces, req request) *httptest.ResponseRecorder {
	t.Helper()
	rec, err := serveNext(d, req)
	if err != nil {
		t.Fatalf("%s %s: ServeHTTP: %v", req.method, req.target, err)
	}
	return rec
}

// serveNext is serve with the error ServeHTTP returns; the next handler
// returns errNext.
func serveNext(d *DAVSpaces, req request) (*httptest.ResponseRecorder, error) {
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	r := httptest.NewRequest(req.method, req.target, body)
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	repl := caddy.NewReplacer()
	r = caddyhttp.PrepareRequest(r, repl, rec, &caddyhttp.Server{})
	if req.user != "" {
		repl.Set("http.auth.user.id", req.user)
	}
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return errNext })
	return rec, d.ServeHTTP(rec, r, next)
}

func propfind(target, user string) request {
	return request{method: "PROPFIND", target: target, user: user, header: map[string]string{"Depth": "1"}}
}

func TestProvisionCreatesStore(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not", "yet", "there")
	d := &DAVSpaces{Root: root}
	if err := provision(t, d); err != nil {
		t.Fatalf("provisioning: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "meta.db")); err != nil {
		t.Errorf("no database in the root: %v", err)
	}
	if n, ok := stores.References(root); !ok || n != 1 {
		t.Errorf("pool references of %s: %d, %v; want 1, true", root, n, ok)
	}
	if err := d.Cleanup(); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if _, ok := stores.References(root); ok {
		t.Errorf("the store of %s is still pooled after Cleanup", root)
	}
	// The store was closed: the file lock is free for another opener.
	s, err := boltstore.Open(root, boltstore.Options{})
	if err != nil {
		t.Fatalf("reopening the root after Cleanup: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

func TestProvisionDefaultRoot(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	d := &DAVSpaces{}
	mustProvision(t, d)
	want := filepath.Join(data, "caddy", "davspaces")
	if d.storeKey != want {
		t.Errorf("store in %s, want %s", d.storeKey, want)
	}
	if _, err := os.Stat(filepath.Join(want, "meta.db")); err != nil {
		t.Errorf("no database in the default root: %v", err)
	}
}

func TestProvisionRootPlaceholder(t *testing.T) {
	base := t.TempDir()
	t.Setenv("DAVSPACES_TEST_ROOT", base)
	d := &DAVSpaces{Root: "{env.DAVSPACES_TEST_ROOT}/data"}
	mustProvision(t, d)
	if want := filepath.Join(base, "data"); d.storeKey != want {
		t.Errorf("store in %s, want %s", d.storeKey, want)
	}
}

func TestProvisionRelativeRoot(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	d := &DAVSpaces{Root: "data"}
	mustProvision(t, d)
	if !filepath.IsAbs(d.storeKey) {
		t.Errorf("store key %q is not absolute", d.storeKey)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "meta.db")); err != nil {
		t.Errorf("no database under the working directory: %v", err)
	}
}

func TestProvisionStorageID(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), StorageID: "my-storage"}
	mustProvision(t, d)
	if got := pooledStoreOf(t, d.storeKey).StorageID(); got != "my-storage" {
		t.Errorf("storage id %q, want my-storage", got)
	}
	rec := serve(t, d, propfind("/webdav/", "einstein"))
	if rec.Code != http.StatusMultiStatus {
		t.Fatalf("PROPFIND: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "my-storage$") {
		t.Errorf("resource ids do not start with the storage id: %s", rec.Body)
	}
}

// TestReloadSharesStore provisions two handlers on one root the way `caddy
// reload` does (the new configuration is provisioned before the old one is
// cleaned up): both must work on the same data, and the root must be free
// again once both are cleaned up.
func TestReloadSharesStore(t *testing.T) {
	root := t.TempDir()
	oldCfg := &DAVSpaces{Root: root}
	mustProvision(t, oldCfg)

	put := request{method: http.MethodPut, target: "/webdav/hello.txt", body: "hello", user: "einstein"}
	if rec := serve(t, oldCfg, put); rec.Code != http.StatusCreated {
		t.Fatalf("PUT through the old configuration: %d %s", rec.Code, rec.Body)
	}

	newCfg := &DAVSpaces{Root: root}
	mustProvision(t, newCfg)
	if n, _ := stores.References(root); n != 2 {
		t.Errorf("pool references of %s: %d, want 2", root, n)
	}

	get := request{method: http.MethodGet, target: "/webdav/hello.txt", user: "einstein"}
	for name, d := range map[string]*DAVSpaces{"old": oldCfg, "new": newCfg} {
		if rec := serve(t, d, get); rec.Code != http.StatusOK || rec.Body.String() != "hello" {
			t.Errorf("GET through the %s configuration: %d %q", name, rec.Code, rec.Body)
		}
		if rec := serve(t, d, propfind("/webdav/", "einstein")); rec.Code != http.StatusMultiStatus {
			t.Errorf("PROPFIND through the %s configuration: %d %s", name, rec.Code, rec.Body)
		}
	}

	// The old configuration goes away; the new one keeps the store.
	cleanup(t, oldCfg)
	if rec := serve(t, newCfg, get); rec.Code != http.StatusOK || rec.Body.String() != "hello" {
		t.Errorf("GET after the old configuration was cleaned up: %d %q", rec.Code, rec.Body)
	}

	cleanup(t, newCfg)
	if _, ok := stores.References(root); ok {
		t.Fatalf("the store of %s is still pooled after both Cleanups", root)
	}

	// A third configuration opens the root again (the lock was released)
	// and finds the data.
	third := &DAVSpaces{Root: root}
	mustProvision(t, third)
	if rec := serve(t, third, get); rec.Code != http.StatusOK || rec.Body.String() != "hello" {
		t.Errorf("GET through a third configuration: %d %q", rec.Code, rec.Body)
	}
}

// TestProvisionConcurrentSameRoot provisions several handlers on one root at
// the same time: the pool must hand all of them the one store.
func TestProvisionConcurrentSameRoot(t *testing.T) {
	root := t.TempDir()
	const n = 8
	handlers := make([]*DAVSpaces, n)
	errs := make(chan error, n)
	ctx := newContext(t)
	for i := range handlers {
		handlers[i] = &DAVSpaces{Root: root}
		go func(d *DAVSpaces) { errs <- d.Provision(ctx) }(handlers[i])
	}
	deadline := time.After(provisionTimeout)
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("Provision: %v", err)
			}
		case <-deadline:
			t.Fatalf("concurrent Provision did not return within %v", provisionTimeout)
		}
	}
	for _, d := range handlers {
		t.Cleanup(func() { cleanup(t, d) })
	}
	if t.Failed() {
		return
	}
	if refs, _ := stores.References(root); refs != n {
		t.Errorf("pool references: %d, want %d", refs, n)
	}
	for _, d := range handlers {
		if rec := serve(t, d, propfind("/webdav/", "einstein")); rec.Code != http.StatusMultiStatus {
			t.Errorf("PROPFIND: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestProvisionFailsOnUnusableRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &DAVSpaces{Root: file}
	err := provision(t, d)
	if err == nil {
		cleanup(t, d)
		t.Fatal("Provision succeeded with a regular file as root")
	}
	if !strings.Contains(err.Error(), file) {
		t.Errorf("error %q does not name the root", err)
	}
	if _, ok := stores.References(file); ok {
		t.Error("a failed open left an entry in the pool")
	}
	if err := d.Cleanup(); err != nil {
		t.Errorf("Cleanup after a failed Provision: %v", err)
	}
}

// TestProvisionFailsOnBadSpace: a space the store refuses fails Provision,
// and the Cleanup Caddy then calls releases the store.
func TestProvisionFailsOnBadSpace(t *testing.T) {
	root := t.TempDir()
	d := &DAVSpaces{Root: root, Spaces: []ProjectSpace{{ID: "a/b", Name: "Slash"}}}
	err := provision(t, d)
	if err == nil {
		cleanup(t, d)
		t.Fatal("Provision accepted a space id with a slash")
	}
	if !strings.Contains(err.Error(), `"Slash"`) {
		t.Errorf("error %q does not name the space", err)
	}
	if err := d.Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
	if _, ok := stores.References(root); ok {
		t.Error("the store is still pooled after Cleanup")
	}
}

func TestCleanupWithoutProvision(t *testing.T) {
	if err := new(DAVSpaces).Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
}

func TestValidate(t *testing.T) {
	physicsID := uuid.NewSHA1(spaceNamespace, []byte("Physics")).String()
	tests := []struct {
		name    string
		d       DAVSpaces
		wantErr string // empty: valid
	}{
		{name: "empty"},
		{
			name: "distinct spaces",
			d: DAVSpaces{Spaces: []ProjectSpace{
				{Name: "Physics"}, {Name: "Chemistry"}, {ID: "bio", Name: "Biology"},
			}},
		},
		{
			name: "same name, different explicit ids",
			d:    DAVSpaces{Spaces: []ProjectSpace{{ID: "a", Name: "Physics"}, {ID: "b", Name: "Physics"}}},
		},
		{
			name:    "nameless space",
			d:       DAVSpaces{Spaces: []ProjectSpace{{Name: "Physics"}, {ID: "x", Managers: []string{"einstein"}}}},
			wantErr: "needs a name",
		},
		{
			name:    "two spaces with the same id",
			d:       DAVSpaces{Spaces: []ProjectSpace{{ID: "lab", Name: "Physics"}, {ID: "lab", Name: "Chemistry"}}},
			wantErr: "id lab is declared twice",
		},
		{
			name:    "two spaces with the same name and no id",
			d:       DAVSpaces{Spaces: []ProjectSpace{{Name: "Physics"}, {Name: "Physics"}}},
			wantErr: "declared twice",
		},
		{
			name:    "explicit id equal to another's derived id",
			d:       DAVSpaces{Spaces: []ProjectSpace{{Name: "Physics"}, {ID: physicsID, Name: "Chemistry"}}},
			wantErr: physicsID,
		},
		{
			name:    "negative max_xml_bytes",
			d:       DAVSpaces{MaxXMLBytes: -1},
			wantErr: "max_xml_bytes",
		},
		{
			name:    "negative personal_quota_bytes",
			d:       DAVSpaces{PersonalQuotaBytes: -1},
			wantErr: "personal_quota_bytes",
		},
		{
			name:    "negative lock_timeout_max",
			d:       DAVSpaces{LockTimeoutMax: caddy.Duration(-time.Second)},
			wantErr: "lock_timeout_max",
		},
		{
			name:    "negative upload_ttl",
			d:       DAVSpaces{UploadTTL: caddy.Duration(-time.Second)},
			wantErr: "upload_ttl",
		},
		{
			name:    "space id with a resource id delimiter",
			d:       DAVSpaces{Spaces: []ProjectSpace{{ID: "team!x", Name: "Team"}}},
			wantErr: "must not contain",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("Validate accepted %+v", tt.d)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestSpaceIDFromName(t *testing.T) {
	a1 := ProjectSpace{Name: "Physics"}.space().ID
	a2 := ProjectSpace{Name: "Physics", Managers: []string{"einstein"}, QuotaBytes: 5}.space().ID
	b := ProjectSpace{Name: "Chemistry"}.space().ID
	lower := ProjectSpace{Name: "physics"}.space().ID
	if a1 != a2 {
		t.Errorf("same name, different ids: %s and %s", a1, a2)
	}
	if a1 == b || a1 == lower {
		t.Errorf("different names share an id: Physics %s, Chemistry %s, physics %s", a1, b, lower)
	}
	// The id is stored with the space's data: it must not change between
	// releases, or a renamed namespace would orphan every project space.
	if want := "611c36a9-5419-59b6-b0a8-b0f550d98743"; a1 != want {
		t.Errorf("id of Physics is %s, want %s (changing it orphans existing spaces)", a1, want)
	}
	if got := (ProjectSpace{ID: "lab", Name: "Physics"}).space().ID; got != "lab" {
		t.Errorf("explicit id ignored: got %s", got)
	}
}

func TestSpaceDeclaration(t *testing.T) {
	ps := ProjectSpace{
		Name:     "Physics",
		Managers: []string{"einstein"},
		Editors:  []string{"marie", "richard"},
		Viewers:  []string{"lise", "einstein"},
	}
	sp := ps.space()
	if sp.Type != storage.SpaceProject || sp.Name != "Physics" || sp.Owner != "" {
		t.Errorf("space %+v: want a project space named Physics without owner", sp)
	}
	if sp.Quota != storage.NoQuota {
		t.Errorf("quota %d, want NoQuota", sp.Quota)
	}
	want := map[string]storage.Role{
		"einstein": storage.RoleManager, // the strongest role wins
		"marie":    storage.RoleEditor,
		"richard":  storage.RoleEditor,
		"lise":     storage.RoleViewer,
	}
	if len(sp.Members) != len(want) {
		t.Errorf("members %v, want %v", sp.Members, want)
	}
	for u, r := range want {
		if got := sp.RoleOf(storage.User{ID: u}); got != r {
			t.Errorf("role of %s: %d, want %d", u, got, r)
		}
	}
	if got := sp.RoleOf(storage.User{ID: "otto"}); got != storage.RoleNone {
		t.Errorf("role of a non-member: %d", got)
	}
	if q := (ProjectSpace{Name: "x", QuotaBytes: 1 << 20}).space().Quota; q != 1<<20 {
		t.Errorf("quota %d, want %d", q, 1<<20)
	}
}

func TestProvisionDeclaresSpaces(t *testing.T) {
	root := t.TempDir()
	d := &DAVSpaces{Root: root, Spaces: []ProjectSpace{
		{
			Name:       "Physics",
			QuotaBytes: 1 << 30,
			Managers:   []string{"einstein"},
			Editors:    []string{"marie"},
			Viewers:    []string{"richard"},
		},
		{ID: "chem", Name: "Chemistry", Managers: []string{"marie"}},
	}}
	mustProvision(t, d)
	store := pooledStoreOf(t, root)
	ctx := context.Background()

	physicsID := d.Spaces[0].space().ID
	sp, err := store.Space(ctx, physicsID)
	if err != nil {
		t.Fatalf("declared space Physics (%s): %v", physicsID, err)
	}
	if sp.Name != "Physics" || sp.Type != storage.SpaceProject || sp.Quota != 1<<30 {
		t.Errorf("space %+v", sp)
	}
	for u, r := range map[string]storage.Role{
		"einstein": storage.RoleManager,
		"marie":    storage.RoleEditor,
		"richard":  storage.RoleViewer,
		"otto":     storage.RoleNone,
	} {
		if got := sp.RoleOf(storage.User{ID: u}); got != r {
			t.Errorf("Physics: role of %s is %d, want %d", u, got, r)
		}
	}
	chem, err := store.Space(ctx, "chem")
	if err != nil {
		t.Fatalf("declared space Chemistry: %v", err)
	}
	if chem.RoleOf(storage.User{ID: "marie"}) != storage.RoleManager || chem.RoleOf(storage.User{ID: "einstein"}) != storage.RoleNone {
		t.Errorf("Chemistry members %v", chem.Members)
	}

	// Members reach their spaces over DAV, others do not see them.
	target := "/dav/spaces/" + store.StorageID() + "$" + physicsID + "/"
	for _, u := range []string{"einstein", "marie", "richard"} {
		if rec := serve(t, d, propfind(target, u)); rec.Code != http.StatusMultiStatus {
			t.Errorf("PROPFIND %s as member %s: %d %s", target, u, rec.Code, rec.Body)
		}
	}
	if rec := serve(t, d, propfind(target, "otto")); rec.Code != http.StatusNotFound {
		t.Errorf("PROPFIND %s as a non-member: %d, want 404", target, rec.Code)
	}
	put := request{method: http.MethodPut, target: target + "notes.txt", body: "x"}
	put.user = "richard"
	if rec := serve(t, d, put); rec.Code != http.StatusForbidden {
		t.Errorf("PUT as viewer: %d, want 403", rec.Code)
	}
	put.user = "marie"
	if rec := serve(t, d, put); rec.Code != http.StatusCreated {
		t.Errorf("PUT as editor: %d %s, want 201", rec.Code, rec.Body)
	}

	// A reload with other members replaces them and keeps the content.
	reloaded := &DAVSpaces{Root: root, Spaces: []ProjectSpace{
		{Name: "Physics", Managers: []string{"otto"}, Viewers: []string{"einstein"}},
	}}
	mustProvision(t, reloaded)
	cleanup(t, d)
	sp, err = store.Space(ctx, physicsID)
	if err != nil {
		t.Fatal(err)
	}
	if sp.RoleOf(storage.User{ID: "otto"}) != storage.RoleManager || sp.RoleOf(storage.User{ID: "einstein"}) != storage.RoleViewer ||
		sp.RoleOf(storage.User{ID: "marie"}) != storage.RoleNone || sp.Quota != storage.NoQuota {
		t.Errorf("after reload: space %+v", sp)
	}
	get := request{method: http.MethodGet, target: target + "notes.txt", user: "otto"}
	if rec := serve(t, reloaded, get); rec.Code != http.StatusOK || rec.Body.String() != "x" {
		t.Errorf("GET after reload: %d %q", rec.Code, rec.Body)
	}
}

func TestServeHTTPPassesOtherPaths(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	for _, target := range []string{
		"/",
		"/index.html",
		"/webdavx",
		"/davx/spaces",
		"/static/webdav/file",
		"/remote.phpx/webdav/",
		"/status.phpx",
		"/ocs/v3.php/cloud/user",
		"/graphx/v1.0/me",
	} {
		for _, method := range []string{http.MethodGet, "PROPFIND", http.MethodOptions} {
			rec, err := serveNext(d, request{method: method, target: target, user: "einstein"})
			if !errors.Is(err, errNext) {
				t.Errorf("%s %s: ServeHTTP returned %v (status %d), want the next handler's error", method, target, err, rec.Code)
			}
			if rec.Body.Len() != 0 {
				t.Errorf("%s %s: the handler wrote %q before passing the request on", method, target, rec.Body)
			}
		}
	}
}

func TestServeHTTPAnswersDAVPaths(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	for _, target := range []string{
		"/webdav",
		"/webdav/",
		"/remote.php/webdav/",
		"/dav/files/einstein/",
		"/remote.php/dav/files/einstein/",
		"/dav/spaces/x/",
		"/dav",
	} {
		rec, err := serveNext(d, request{method: http.MethodOptions, target: target})
		if err != nil {
			t.Errorf("OPTIONS %s: ServeHTTP: %v", target, err)
			continue
		}
		if rec.Code != http.StatusNoContent {
			t.Errorf("OPTIONS %s: %d, want 204", target, rec.Code)
		}
	}
}

func TestServeHTTPOptions(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	// No user: OPTIONS is answered before authentication.
	rec := serve(t, d, request{method: http.MethodOptions, target: "/webdav/"})
	if rec.Code != http.StatusNoContent {
		t.Fatalf("OPTIONS: %d %s", rec.Code, rec.Body)
	}
	if dav := rec.Header().Get("DAV"); !strings.Contains(dav, "1") {
		t.Errorf("DAV header %q", dav)
	}
	if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "PROPFIND") {
		t.Errorf("Allow header %q lacks PROPFIND", allow)
	}
}

func TestServeHTTPPropfind(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)

	rec := serve(t, d, propfind("/webdav/", "einstein"))
	if rec.Code != http.StatusMultiStatus {
		t.Fatalf("PROPFIND as einstein: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "multistatus") || !strings.Contains(body, "<d:href>/webdav/</d:href>") {
		t.Errorf("PROPFIND body: %s", body)
	}

	// The display name comes from {http.auth.user.name}; the id alone is
	// enough.
	rec = serve(t, d, propfind("/remote.php/dav/files/einstein/", "einstein"))
	if rec.Code != http.StatusMultiStatus {
		t.Errorf("PROPFIND /remote.php/dav/files/einstein/: %d %s", rec.Code, rec.Body)
	}
	rec = serve(t, d, propfind("/dav/files/marie/", "einstein"))
	if rec.Code != http.StatusNotFound {
		t.Errorf("PROPFIND another user's files: %d, want 404", rec.Code)
	}
}

func TestServeHTTPUnauthenticated(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	for _, req := range []request{
		propfind("/webdav/", ""),
		{method: http.MethodGet, target: "/webdav/file.txt"},
		{method: http.MethodPut, target: "/webdav/file.txt", body: "x"},
		{method: "MKCOL", target: "/dav/files/einstein/dir"},
	} {
		rec := serve(t, d, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without user: %d, want 401", req.method, req.target, rec.Code)
			continue
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
			t.Errorf("%s %s: 401 with Content-Type %q", req.method, req.target, ct)
		}
		if body := rec.Body.String(); !strings.Contains(body, "<d:error") || !strings.Contains(body, "NotAuthenticated") {
			t.Errorf("%s %s: 401 body %q", req.method, req.target, body)
		}
	}

	// A request without a replacer at all (not prepared by Caddy) is no
	// user either.
	r := httptest.NewRequest("PROPFIND", "/webdav/", nil)
	r.Header.Set("Depth", "0")
	rec := httptest.NewRecorder()
	if err := d.ServeHTTP(rec, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return errNext })); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("PROPFIND without replacer: %d, want 401", rec.Code)
	}
}

func TestServeHTTPDepthInfinity(t *testing.T) {
	noDepth := request{method: "PROPFIND", target: "/webdav/", user: "einstein"}

	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	if rec := serve(t, d, noDepth); rec.Code != http.StatusBadRequest {
		t.Errorf("PROPFIND without Depth, depth_infinity off: %d, want 400", rec.Code)
	}

	d = &DAVSpaces{Root: t.TempDir(), AllowDepthInfinity: true}
	mustProvision(t, d)
	if rec := serve(t, d, noDepth); rec.Code != http.StatusMultiStatus {
		t.Errorf("PROPFIND without Depth, depth_infinity on: %d %s, want 207", rec.Code, rec.Body)
	}
}

func TestServeHTTPMaxXMLBytes(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), MaxXMLBytes: 64}
	mustProvision(t, d)
	req := propfind("/webdav/", "einstein")
	req.body = `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getlastmodified/><d:resourcetype/></d:prop></d:propfind>`
	if rec := serve(t, d, req); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("PROPFIND with a %d-byte body, limit 64: %d, want 413", len(req.body), rec.Code)
	}

	d = &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	if rec := serve(t, d, req); rec.Code != http.StatusMultiStatus {
		t.Errorf("PROPFIND with the default limit: %d %s, want 207", rec.Code, rec.Body)
	}
}

func TestCaddyModule(t *testing.T) {
	info := DAVSpaces{}.CaddyModule()
	if info.ID != "http.handlers.davspaces" {
		t.Errorf("module id %s", info.ID)
	}
	if _, ok := info.New().(*DAVSpaces); !ok {
		t.Errorf("New returned %T", info.New())
	}
	if _, err := caddy.GetModule("http.handlers.davspaces"); err != nil {
		t.Errorf("module not registered: %v", err)
	}
}

// TestRejectedConfigChangesNothing provisions a configuration that fails
// validation on a store another configuration uses: the stored spaces stay
// as they were.
func TestRejectedConfigChangesNothing(t *testing.T) {
	root := t.TempDir()
	running := &DAVSpaces{Root: root, Spaces: []ProjectSpace{{ID: "lab", Name: "Physics", Managers: []string{"einstein"}}}}
	mustProvision(t, running)
	rejected := &DAVSpaces{Root: root, Spaces: []ProjectSpace{
		{ID: "lab", Name: "Physics", Managers: []string{"einstein"}},
		{ID: "lab", Name: "Hacked", Managers: []string{"mallory"}},
	}}
	if err := provision(t, rejected); err == nil {
		cleanup(t, rejected)
		t.Fatal("Provision accepted two spaces with one id")
	}
	rejected.Cleanup()
	space, err := pooledStoreOf(t, root).Space(context.Background(), "lab")
	if err != nil {
		t.Fatal(err)
	}
	if space.Name != "Physics" || space.Members["mallory"] != storage.RoleNone || space.Members["einstein"] != storage.RoleManager {
		t.Fatalf("a rejected configuration changed the space: %+v", space)
	}
}

// TestReloadRefusesNewStorageID: resource ids depend on the storage id, so
// a reload cannot change it under the open store.
func TestReloadRefusesNewStorageID(t *testing.T) {
	root := t.TempDir()
	old := &DAVSpaces{Root: root, StorageID: "old"}
	mustProvision(t, old)
	next := &DAVSpaces{Root: root, StorageID: "new"}
	err := provision(t, next)
	next.Cleanup()
	if err == nil || !strings.Contains(err.Error(), "restart Caddy") {
		t.Fatalf("Provision with a new storage id: %v", err)
	}
}

// spaceTarget is the DAV URL of a space root reached by its resource id.
func spaceTarget(t *testing.T, root, spaceID string) string {
	t.Helper()
	return "/dav/spaces/" + pooledStoreOf(t, root).StorageID() + "$" + spaceID + "/"
}

// reload provisions next on the root of current and then cleans current
// up, as a successful `caddy reload` does.
func reload(t *testing.T, current, next *DAVSpaces) {
	t.Helper()
	mustProvision(t, next)
	cleanup(t, current)
}

// TestReloadWithoutSpaceStopsServingIt: a project space taken out of the
// configuration, or renamed (its derived id changes), is no longer served
// by its resource id to its old members; its data is kept and comes back
// when the space is configured again.
func TestReloadWithoutSpaceStopsServingIt(t *testing.T) {
	physics := ProjectSpace{Name: "Physics", Managers: []string{"einstein"}, Editors: []string{"marie"}}
	tests := []struct {
		name string
		next []ProjectSpace
	}{
		{name: "removed", next: nil},
		{name: "removed, another space kept", next: []ProjectSpace{{ID: "chem", Name: "Chemistry", Managers: []string{"einstein"}}}},
		{name: "renamed", next: []ProjectSpace{{Name: "Physics II", Managers: []string{"einstein"}, Editors: []string{"marie"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			first := &DAVSpaces{Root: root, Spaces: []ProjectSpace{physics}}
			mustProvision(t, first)
			old := spaceTarget(t, root, physics.space().ID)
			put := request{method: http.MethodPut, target: old + "notes.txt", body: "kept", user: "marie"}
			if rec := serve(t, first, put); rec.Code != http.StatusCreated {
				t.Fatalf("PUT %s: %d %s", put.target, rec.Code, rec.Body)
			}

			without := &DAVSpaces{Root: root, Spaces: tt.next}
			reload(t, first, without)
			for _, user := range []string{"einstein", "marie"} {
				mine := request{method: http.MethodPut, target: "/webdav/mine.txt", body: "mine", user: user}
				if rec := serve(t, without, mine); rec.Code != http.StatusCreated {
					t.Fatalf("PUT %s as %s: %d", mine.target, user, rec.Code)
				}
				into := map[string]string{"Destination": old + "copied.txt"}
				for _, req := range []request{
					propfind(old, user),
					{method: http.MethodGet, target: old + "notes.txt", user: user},
					{method: http.MethodPut, target: old + "new.txt", body: "x", user: user},
					{method: "MKCOL", target: old + "dir", user: user},
					{method: http.MethodDelete, target: old + "notes.txt", user: user},
					{method: "COPY", target: old + "notes.txt", user: user, header: map[string]string{"Destination": old + "copy.txt"}},
					{method: "COPY", target: "/webdav/mine.txt", user: user, header: into},
					{method: "MOVE", target: "/webdav/mine.txt", user: user, header: into},
				} {
					if rec := serve(t, without, req); rec.Code != http.StatusNotFound {
						t.Errorf("%s %s as %s after the space left the configuration: %d, want 404", req.method, req.target, user, rec.Code)
					}
				}
			}
			for _, ps := range tt.next {
				if rec := serve(t, without, propfind(spaceTarget(t, root, ps.space().ID), "einstein")); rec.Code != http.StatusMultiStatus {
					t.Errorf("PROPFIND of the configured space %q: %d", ps.Name, rec.Code)
				}
			}
			if _, err := pooledStoreOf(t, root).Space(context.Background(), physics.space().ID); err != nil {
				t.Errorf("the unconfigured space's data is gone: %v", err)
			}

			again := &DAVSpaces{Root: root, Spaces: []ProjectSpace{physics}}
			reload(t, without, again)
			get := request{method: http.MethodGet, target: old + "notes.txt", user: "marie"}
			if rec := serve(t, again, get); rec.Code != http.StatusOK || rec.Body.String() != "kept" {
				t.Errorf("GET after the space was configured again: %d %q, want 200 \"kept\"", rec.Code, rec.Body)
			}
			for _, name := range []string{"new.txt", "dir", "copy.txt", "copied.txt"} {
				gone := request{method: http.MethodGet, target: old + name, user: "marie"}
				if rec := serve(t, again, gone); rec.Code != http.StatusNotFound {
					t.Errorf("GET %s, refused while unconfigured: %d, want 404", name, rec.Code)
				}
			}
		})
	}
}

// TestReloadRemovesMember: a member taken out of a space's configuration
// loses access at the reload; the others keep it.
func TestReloadRemovesMember(t *testing.T) {
	root := t.TempDir()
	first := &DAVSpaces{Root: root, Spaces: []ProjectSpace{
		{Name: "Physics", Managers: []string{"einstein"}, Editors: []string{"marie"}, Viewers: []string{"group:physicists"}},
	}}
	mustProvision(t, first)
	target := spaceTarget(t, root, first.Spaces[0].space().ID)
	put := request{method: http.MethodPut, target: target + "notes.txt", body: "x", user: "marie"}
	if rec := serve(t, first, put); rec.Code != http.StatusCreated {
		t.Fatalf("PUT as editor: %d %s", rec.Code, rec.Body)
	}

	next := &DAVSpaces{Root: root, Spaces: []ProjectSpace{{Name: "Physics", Managers: []string{"einstein"}}}}
	reload(t, first, next)
	for _, req := range []request{
		propfind(target, "marie"),
		{method: http.MethodGet, target: target + "notes.txt", user: "marie"},
		{method: http.MethodPut, target: target + "notes.txt", body: "changed", user: "marie"},
	} {
		if rec := serve(t, next, req); rec.Code != http.StatusNotFound {
			t.Errorf("%s %s as the removed member: %d, want 404", req.method, req.target, rec.Code)
		}
	}
	get := request{method: http.MethodGet, target: target + "notes.txt", user: "einstein"}
	if rec := serve(t, next, get); rec.Code != http.StatusOK || rec.Body.String() != "x" {
		t.Errorf("GET as the remaining manager: %d %q", rec.Code, rec.Body)
	}
}

// newestPersonalQuota is the personal quota the pool last applied to the
// store of root.
func newestPersonalQuota(t *testing.T, root string) int64 {
	t.Helper()
	quota, _ := settingsInForce(t, root)
	return quota
}

// settingsInForce are the personal quota and retention the pool last
// applied to the store of root.
func settingsInForce(t *testing.T, root string) (int64, storage.RetentionPolicy) {
	t.Helper()
	p := pooledOf(t, root)
	p.mu.Lock()
	defer p.mu.Unlock()
	newest, retention, ok := p.inForceLocked()
	if !ok {
		t.Fatalf("no settings claimed on %s", root)
	}
	return newest.personalQuota, retention
}

// TestPersonalQuotaOneConfiguration: handlers of one configuration on one
// root must agree on the personal quota; on other roots they need not.
func TestPersonalQuotaOneConfiguration(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	ctx := newContext(t)
	handlers := []*DAVSpaces{
		{Root: root, PersonalQuotaBytes: 1 << 30},
		{Root: root, PersonalQuotaBytes: 1 << 30},
		{Root: other, PersonalQuotaBytes: 5 << 30},
	}
	for _, d := range handlers {
		if err := provisionIn(t, ctx, d); err != nil {
			t.Fatalf("provisioning %+v: %v", d, err)
		}
		t.Cleanup(func() { cleanup(t, d) })
	}
	if q := newestPersonalQuota(t, root); q != 1<<30 {
		t.Errorf("personal quota of %s: %d, want %d", root, q, 1<<30)
	}

	disagreeing := &DAVSpaces{Root: root, PersonalQuotaBytes: 2 << 30}
	err := provisionIn(t, ctx, disagreeing)
	cleanup(t, disagreeing)
	if err == nil || !strings.Contains(err.Error(), "personal quota") || !strings.Contains(err.Error(), root) {
		t.Errorf("a second personal quota on one root in one configuration: %v, want an error naming the root", err)
	}
	unset := &DAVSpaces{Root: root}
	err = provisionIn(t, ctx, unset)
	cleanup(t, unset)
	if err == nil {
		t.Error("a handler without personal quota beside one with a quota on the same root was accepted")
	}
}

// TestMaxNodesOneConfiguration: handlers of one configuration on one root
// must agree on max_nodes, which the store has one of, as the personal
// quota.
func TestMaxNodesOneConfiguration(t *testing.T) {
	root := t.TempDir()
	ctx := newContext(t)
	for range 2 {
		d := &DAVSpaces{Root: root, MaxNodes: 5000}
		if err := provisionIn(t, ctx, d); err != nil {
			t.Fatalf("provisioning %+v: %v", d, err)
		}
		t.Cleanup(func() { cleanup(t, d) })
	}
	p := pooledOf(t, root)
	p.mu.Lock()
	newest, _, _ := p.inForceLocked()
	p.mu.Unlock()
	if newest.maxNodes != 5000 {
		t.Errorf("max_nodes in force: %d, want 5000", newest.maxNodes)
	}
	disagreeing := &DAVSpaces{Root: root, MaxNodes: 6000}
	err := provisionIn(t, ctx, disagreeing)
	cleanup(t, disagreeing)
	if err == nil || !strings.Contains(err.Error(), "max_nodes") {
		t.Errorf("a second max_nodes on one root in one configuration: %v, want an error naming it", err)
	}
}

// TestPersonalQuotaReload: a reload's personal quota replaces the old one;
// a reload that fails after provisioning leaves the running one in force.
func TestPersonalQuotaReload(t *testing.T) {
	root := t.TempDir()
	running := &DAVSpaces{Root: root, PersonalQuotaBytes: 1 << 20}
	mustProvision(t, running)

	failed := &DAVSpaces{Root: root, PersonalQuotaBytes: 2 << 20}
	mustProvision(t, failed)
	if q := newestPersonalQuota(t, root); q != 2<<20 {
		t.Errorf("personal quota during the reload: %d, want %d", q, 2<<20)
	}
	cleanup(t, failed) // Caddy cleans up a configuration it could not load
	if q := newestPersonalQuota(t, root); q != 1<<20 {
		t.Errorf("personal quota after a failed reload: %d, want the running %d", q, 1<<20)
	}

	next := &DAVSpaces{Root: root, PersonalQuotaBytes: 3 << 20}
	reload(t, running, next)
	if q := newestPersonalQuota(t, root); q != 3<<20 {
		t.Errorf("personal quota after a reload: %d, want %d", q, 3<<20)
	}
}

// TestPersonalQuotaEnforced: the option reaches the store, which refuses an
// upload beyond the quota.
func TestPersonalQuotaEnforced(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), PersonalQuotaBytes: 1 << 10}
	mustProvision(t, d)
	small := request{method: http.MethodPut, target: "/webdav/small.txt", body: strings.Repeat("x", 512), user: "einstein"}
	if rec := serve(t, d, small); rec.Code != http.StatusCreated {
		t.Fatalf("PUT within the personal quota: %d %s", rec.Code, rec.Body)
	}
	big := request{method: http.MethodPut, target: "/webdav/big.txt", body: strings.Repeat("x", 2<<10), user: "einstein"}
	if rec := serve(t, d, big); rec.Code != http.StatusInsufficientStorage {
		t.Errorf("PUT beyond the personal quota: %d %s, want 507", rec.Code, rec.Body)
	}
	// Every personal space has the quota.
	other := request{method: http.MethodPut, target: "/webdav/big.txt", body: strings.Repeat("x", 2<<10), user: "marie"}
	if rec := serve(t, d, other); rec.Code != http.StatusInsufficientStorage {
		t.Errorf("PUT beyond the personal quota as another user: %d, want 507", rec.Code)
	}
}

// lockBody is a LOCK request body for an exclusive write lock.
const lockBody = `<?xml version="1.0" encoding="utf-8"?>
<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>einstein</d:owner></d:lockinfo>`

// TestServeHTTPLocks: the handler gets the store's locks and the configured
// maximum timeout, which an "Infinite" or longer request is cut to.
func TestServeHTTPLocks(t *testing.T) {
	tests := []struct {
		name    string
		max     caddy.Duration
		timeout string // the Timeout header sent
		want    string // the d:timeout answered
	}{
		{name: "default maximum for Infinite", timeout: "Infinite", want: "Second-86400"},
		{name: "configured maximum for Infinite", max: caddy.Duration(time.Hour), timeout: "Infinite", want: "Second-3600"},
		{name: "longer than the maximum", max: caddy.Duration(time.Hour), timeout: "Second-7200", want: "Second-3600"},
		{name: "within the maximum", max: caddy.Duration(time.Hour), timeout: "Second-60", want: "Second-60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &DAVSpaces{Root: t.TempDir(), LockTimeoutMax: tt.max}
			mustProvision(t, d)
			lock := request{method: "LOCK", target: "/webdav/locked.txt", body: lockBody, user: "einstein",
				header: map[string]string{"Timeout": tt.timeout, "Content-Type": "application/xml"}}
			rec := serve(t, d, lock)
			// An unmapped URL is created empty (201).
			if rec.Code != http.StatusCreated {
				t.Fatalf("LOCK: %d %s, want 201", rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), "<d:timeout>"+tt.want+"</d:timeout>") {
				t.Errorf("LOCK with Timeout %s: want d:timeout %s in\n%s", tt.timeout, tt.want, rec.Body)
			}
			token := rec.Header().Get("Lock-Token")
			if !strings.HasPrefix(token, "<") || !strings.HasSuffix(token, ">") {
				t.Fatalf("Lock-Token header %q", token)
			}
			put := request{method: http.MethodPut, target: "/webdav/locked.txt", body: "x", user: "einstein"}
			if rec := serve(t, d, put); rec.Code != http.StatusLocked {
				t.Errorf("PUT without the token: %d, want 423", rec.Code)
			}
			put.header = map[string]string{"If": "(" + token + ")"}
			if rec := serve(t, d, put); rec.Code != http.StatusNoContent {
				t.Errorf("PUT with the token: %d %s, want 204", rec.Code, rec.Body)
			}
		})
	}
}

// tusCreate starts an upload of an 11-byte tus.txt with its first 5 bytes
// and returns the POST's answer.
func tusCreate(t *testing.T, d *DAVSpaces) *httptest.ResponseRecorder {
	t.Helper()
	rec := serve(t, d, request{method: http.MethodPost, target: "/webdav/", body: "hello", user: "einstein", header: map[string]string{
		"Tus-Resumable":   "1.0.0",
		"Upload-Length":   "11",
		"Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("tus.txt")),
		"Content-Type":    "application/offset+octet-stream",
	}})
	if rec.Code != http.StatusCreated || rec.Header().Get("Upload-Offset") != "5" {
		t.Fatalf("POST: %d, Upload-Offset %q\n%s", rec.Code, rec.Header().Get("Upload-Offset"), rec.Body)
	}
	return rec
}

// tusFinish sends the last 6 bytes of tus.txt to the upload created and
// checks the file.
func tusFinish(t *testing.T, d *DAVSpaces, created *httptest.ResponseRecorder) {
	t.Helper()
	loc, err := url.Parse(created.Header().Get("Location"))
	if err != nil || loc.Path == "" {
		t.Fatalf("Location %q", created.Header().Get("Location"))
	}
	rec := serve(t, d, request{method: http.MethodPatch, target: loc.Path, body: " world", user: "einstein", header: map[string]string{
		"Tus-Resumable": "1.0.0",
		"Upload-Offset": "5",
		"Content-Type":  "application/offset+octet-stream",
	}})
	if rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH: %d\n%s", rec.Code, rec.Body)
	}
	rec = serve(t, d, request{method: http.MethodGet, target: "/webdav/tus.txt", user: "einstein"})
	if rec.Code != http.StatusOK || rec.Body.String() != "hello world" {
		t.Errorf("GET after the upload: %d %q", rec.Code, rec.Body)
	}
}

// TestServeHTTPTus: the handler takes resumable uploads into the store,
// with the configured upload_ttl as their expiry, and commits the file when
// the last byte arrives.
func TestServeHTTPTus(t *testing.T) {
	tests := []struct {
		name string
		ttl  caddy.Duration
		want time.Duration
	}{
		{name: "default ttl", want: davhandler.DefaultUploadTTL},
		{name: "configured ttl", ttl: caddy.Duration(90 * time.Minute), want: 90 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &DAVSpaces{Root: t.TempDir(), UploadTTL: tt.ttl}
			mustProvision(t, d)
			created := time.Now()
			rec := tusCreate(t, d)
			expires, err := http.ParseTime(rec.Header().Get("Upload-Expires"))
			if err != nil {
				t.Fatalf("Upload-Expires %q: %v", rec.Header().Get("Upload-Expires"), err)
			}
			if want := created.Add(tt.want); expires.Before(want.Add(-2*time.Second)) || expires.After(want.Add(2*time.Second)) {
				t.Errorf("Upload-Expires %s, want about %s", expires, want.UTC())
			}
			tusFinish(t, d, rec)
		})
	}
}

// TestReloadKeepsUploads: an upload started through one configuration
// continues through the next (a reload), after the first is cleaned up.
func TestReloadKeepsUploads(t *testing.T) {
	root := t.TempDir()
	oldCfg := &DAVSpaces{Root: root}
	mustProvision(t, oldCfg)
	created := tusCreate(t, oldCfg)
	newCfg := &DAVSpaces{Root: root}
	mustProvision(t, newCfg)
	cleanup(t, oldCfg)
	tusFinish(t, newCfg, created)
}
