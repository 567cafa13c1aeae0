package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

const testStorageID = "storage-1"

// env is a handler over a fresh embedded store with the configured project
// spaces "Physics" (einstein manager, marie editor, group:chemists viewer)
// and "Lab Notes" (marie only, 1000 bytes of quota), and the unconfigured
// "Archive" (einstein manager). Personal spaces have 4000 bytes of quota
// unless the test's options say otherwise.
type env struct {
	t     testing.TB
	h     *Handler
	store *boltstore.Store
}

func newEnv(t testing.TB) *env {
	t.Helper()
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{StorageID: testStorageID, NoSync: true, PersonalQuota: 4000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	spaces := []storage.Space{
		{ID: "physics", Type: storage.SpaceProject, Name: "Physics", Quota: storage.NoQuota,
			Members: map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleEditor, "group:chemists": storage.RoleViewer}},
		{ID: "lab", Type: storage.SpaceProject, Name: "Lab Notes", Quota: 1000,
			Members: map[string]storage.Role{"marie": storage.RoleEditor}},
		{ID: "archive", Type: storage.SpaceProject, Name: "Archive", Quota: storage.NoQuota,
			Members: map[string]storage.Role{"einstein": storage.RoleManager}},
	}
	for _, s := range spaces {
		if _, err := store.PutSpace(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	h, err := New(Config{Store: store, Shares: store, Directory: store, User: testUser, Spaces: storage.NewSpacePolicy([]string{"physics", "lab", "physics", "missing"})})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, h: h, store: store}
}

// testUser trusts the Basic user name and reads groups from the password
// (comma separated); authentication is Caddy's job.
func testUser(r *http.Request) (storage.User, bool) {
	u, p, ok := r.BasicAuth()
	if !ok {
		return storage.User{}, false
	}
	user := storage.User{ID: u, DisplayName: strings.ToUpper(u[:1]) + u[1:]}
	if p != "" {
		user.Groups = strings.Split(p, ",")
	}
	return user, true
}

// do sends a request as user ("" for none, "user:group,group" for groups)
// through Route, as the Caddy module does.
func (e *env) do(user, method, target string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if user != "" {
		name, groups, _ := strings.Cut(user, ":")
		req.SetBasicAuth(name, groups)
	}
	rec := httptest.NewRecorder()
	h, ok := e.h.Route(req)
	if !ok {
		e.t.Fatalf("Route did not claim %s", target)
	}
	h.ServeHTTP(rec, req)
	return rec
}

// drives lists user's drives, checking the answer is a 200.
func (e *env) drives(user string) []drive {
	e.t.Helper()
	rec := e.do(user, http.MethodGet, "https://cloud.example.org/graph/v1.0/me/drives")
	wantStatus(e.t, rec, http.StatusOK)
	var body drivesBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		e.t.Fatalf("decoding %s: %v", rec.Body.String(), err)
	}
	return body.Value
}

// put commits a file of size bytes at the root of a space through the
// store, as a PUT would.
func (e *env) put(spaceID, name string, size int) {
	e.t.Helper()
	ctx := context.Background()
	up, err := e.store.NewUpload(ctx, spaceID)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := up.Write([]byte(strings.Repeat("x", size))); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := up.Commit(ctx, storage.Commit{ParentID: spaceID, Name: name}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) personalID(user string) string {
	e.t.Helper()
	s, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user, DisplayName: strings.ToUpper(user[:1]) + user[1:]})
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

func wantStatus(t testing.TB, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body:\n%s", rec.Code, status, rec.Body.String())
	}
}

// driveByID finds a drive in a listing.
func driveByID(ds []drive, id string) (drive, bool) {
	for _, d := range ds {
		if d.ID == id {
			return d, true
		}
	}
	return drive{}, false
}
