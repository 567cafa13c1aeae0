package davhandler

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Clients of the mass-delete tests, by their User-Agent.
const (
	laptopAgent = "Mozilla/5.0 (Linux) mirall/3.16.0 (Nextcloud, fedora ClientArchitecture: x86_64)"
	phoneAgent  = "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"
)

// brakeEnv is an env whose brake has rules and a clock the test moves.
type brakeEnv struct {
	*env
	clock  time.Time
	opened []storage.MassDelete
}

func newBrakeEnv(t *testing.T, rules MassDeleteRules) *brakeEnv {
	t.Helper()
	b := &brakeEnv{clock: time.Date(2026, 3, 14, 14, 2, 0, 0, time.UTC)}
	b.env = newEnv(t, func(c *Config) {
		c.MassDelete = rules
		c.MassDeleteOpened = func(e storage.MassDelete) { b.opened = append(b.opened, e) }
	})
	if b.h.brake != nil {
		b.h.brake.now = func() time.Time { return b.clock }
	}
	return b
}

// files puts n files into folder (a path in Physics, made when missing)
// and returns their paths.
func (b *brakeEnv) files(folder string, n int) []string {
	b.t.Helper()
	if folder != "" {
		b.do("einstein", "MKCOL", physicsPath+"/"+folder, "")
		folder += "/"
	}
	paths := make([]string, n)
	for i := range n {
		paths[i] = physicsPath + "/" + folder + "f" + strconv.Itoa(i) + ".txt"
		wantStatus(b.t, b.do("einstein", http.MethodPut, paths[i], "content "+strconv.Itoa(i)), http.StatusCreated)
	}
	return paths
}

// remove deletes path as user from client agent, after step.
func (b *brakeEnv) remove(user, agent, path string, step time.Duration) int {
	b.clock = b.clock.Add(step)
	return b.do(user, http.MethodDelete, path, "", "User-Agent", agent).Code
}

func (b *brakeEnv) events(user string) []massDeleteJSON {
	b.t.Helper()
	rec := b.do(user, http.MethodGet, "/dav/spaces/mass-deletes/"+testStorageID+"$physics", "")
	wantStatus(b.t, rec, http.StatusOK)
	var out struct{ Events []massDeleteJSON }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		b.t.Fatalf("events: %v\n%s", err, rec.Body.String())
	}
	return out.Events
}

// TestMassDeleteDetection pins what makes a burst an event: the files of
// one client in one space within the window, a folder counting the files
// below it.
func TestMassDeleteDetection(t *testing.T) {
	type deletion struct {
		agent string
		path  int // index into the files, or -1 for the folder "dir"
		after time.Duration
	}
	each := func(n int, agent string, after time.Duration) []deletion {
		var ds []deletion
		for i := range n {
			ds = append(ds, deletion{agent, i, after})
		}
		return ds
	}
	tests := []struct {
		name      string
		rules     MassDeleteRules
		files     int // in the space's root
		dirFiles  int // in the folder "dir"
		deletions []deletion
		// wantFiles is the files of the one event expected, 0 for none.
		wantFiles int64
	}{
		{name: "below the files threshold", rules: MassDeleteRules{Files: 5, Share: -1}, files: 6,
			deletions: each(4, laptopAgent, time.Second)},
		{name: "at the files threshold", rules: MassDeleteRules{Files: 5, Share: -1}, files: 6,
			deletions: each(5, laptopAgent, time.Second), wantFiles: 5},
		{name: "an event goes on after the threshold", rules: MassDeleteRules{Files: 5, Share: -1}, files: 8,
			deletions: each(8, laptopAgent, time.Second), wantFiles: 8},
		{name: "outside the window", rules: MassDeleteRules{Files: 5, Share: -1, Window: time.Minute}, files: 6,
			deletions: each(6, laptopAgent, 20*time.Second)},
		{name: "two clients of one user counted apart", rules: MassDeleteRules{Files: 5, Share: -1}, files: 8,
			deletions: append(each(4, laptopAgent, time.Second), deletion{phoneAgent, 4, time.Second}, deletion{phoneAgent, 5, time.Second},
				deletion{phoneAgent, 6, time.Second}, deletion{phoneAgent, 7, time.Second})},
		{name: "a folder counts its files", rules: MassDeleteRules{Files: 5, Share: -1}, files: 1, dirFiles: 4,
			deletions: []deletion{{laptopAgent, 0, time.Second}, {laptopAgent, -1, time.Second}}, wantFiles: 5},
		{name: "a folder counts up to the threshold", rules: MassDeleteRules{Files: 5, Share: -1}, dirFiles: 12,
			deletions: []deletion{{laptopAgent, -1, time.Second}}, wantFiles: 5},
		{name: "the share of a small space needs 100 files", rules: MassDeleteRules{Files: 1000, Share: 0.2}, files: 20,
			deletions: each(20, laptopAgent, time.Second)},
		{name: "the share of a space", rules: MassDeleteRules{Files: 1000, Share: 0.9}, files: 112,
			deletions: each(101, laptopAgent, 0), wantFiles: 101},
		{name: "off", rules: MassDeleteRules{Off: true, Files: 1}, files: 3,
			deletions: each(3, laptopAgent, time.Second)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrakeEnv(t, tc.rules)
			paths := b.files("", tc.files)
			if tc.dirFiles > 0 {
				b.files("dir", tc.dirFiles)
			}
			for _, d := range tc.deletions {
				p := physicsPath + "/dir"
				if d.path >= 0 {
					p = paths[d.path]
				}
				if code := b.remove("marie", d.agent, p, d.after); code != http.StatusNoContent {
					t.Fatalf("DELETE %s: %d", p, code)
				}
			}
			if tc.rules.Off {
				if b.h.brake != nil {
					t.Fatal("the brake is on")
				}
				return
			}
			events := b.events("einstein")
			if tc.wantFiles == 0 {
				if len(events) != 0 || len(b.opened) != 0 {
					t.Fatalf("events %+v; want none", events)
				}
				return
			}
			if len(events) != 1 || events[0].Files != tc.wantFiles || len(b.opened) != 1 {
				t.Fatalf("events %+v (opened %d); want one of %d files", events, len(b.opened), tc.wantFiles)
			}
			if e := events[0]; e.User != "marie" || e.Client != "marie's Nextcloud desktop client" || e.State != "open" {
				t.Fatalf("event %+v; want marie's open event", e)
			}
		})
	}
}

// TestMassDeleteMoveReplacing counts a target a MOVE replaces as deleted.
func TestMassDeleteMoveReplacing(t *testing.T) {
	b := newBrakeEnv(t, MassDeleteRules{Files: 2, Share: -1})
	paths := b.files("", 4)
	for _, p := range []struct{ from, to string }{{paths[0], paths[1]}, {paths[2], paths[3]}} {
		b.clock = b.clock.Add(time.Second)
		rec := b.do("marie", "MOVE", p.from, "", "Destination", p.to, "User-Agent", laptopAgent)
		wantStatus(t, rec, http.StatusNoContent)
	}
	if events := b.events("marie"); len(events) != 1 || events[0].Files != 2 {
		t.Fatalf("events %+v; want one of the 2 replaced files", events)
	}
}

// TestMassDeleteVisibility shows an event to the space's managers and to
// its user, and to nobody else.
func TestMassDeleteVisibility(t *testing.T) {
	b := newBrakeEnv(t, MassDeleteRules{Files: 2, Share: -1})
	for _, p := range b.files("", 2) {
		b.remove("marie", laptopAgent, p, time.Second)
	}
	if got := b.events("einstein"); len(got) != 1 || !got[0].Manage {
		t.Fatalf("the manager sees %+v; want the event, manageable", got)
	}
	if got := b.events("marie"); len(got) != 1 || got[0].Manage {
		t.Fatalf("marie sees %+v; want her event, not manageable", got)
	}
	wantStatus(t, b.do("richard", http.MethodGet, "/dav/spaces/mass-deletes/"+testStorageID+"$physics", ""), http.StatusForbidden)
	wantStatus(t, b.do("nobody", http.MethodGet, "/dav/spaces/mass-deletes/"+testStorageID+"$physics", ""), http.StatusNotFound)
	scoped := newEnv(t, func(c *Config) {
		c.Store = b.store
		c.User = func(r *http.Request) (storage.User, bool) {
			return storage.User{ID: "einstein", Scope: storage.Scope{Space: "physics"}}, true
		}
	})
	wantStatus(t, scoped.do("einstein", http.MethodGet, "/dav/spaces/mass-deletes/"+testStorageID+"$physics", ""), http.StatusNotFound)
	id := b.events("einstein")[0].ID
	wantError(t, b.do("marie", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/confirm", ""),
		http.StatusForbidden, "Forbidden", "Only a manager of the space may keep the deletions of a mass delete")
	wantStatus(t, b.do("einstein", http.MethodPut, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/restore", ""), http.StatusMethodNotAllowed)
	wantStatus(t, b.do("einstein", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/nonsense/restore", ""), http.StatusNotFound)
}

// TestMassDeleteHold answers a held client's further deletes 503 and
// deletes nothing, until a manager confirms the event.
func TestMassDeleteHold(t *testing.T) {
	b := newBrakeEnv(t, MassDeleteRules{Files: 3, Share: -1, Hold: true})
	paths := b.files("", 6)
	for i, p := range paths[:3] {
		if code := b.remove("marie", laptopAgent, p, time.Second); code != http.StatusNoContent {
			t.Fatalf("delete %d: %d", i, code)
		}
	}
	rec := b.do("marie", http.MethodDelete, paths[3], "", "User-Agent", laptopAgent)
	wantStatus(t, rec, http.StatusServiceUnavailable)
	if rec.Header().Get("Retry-After") != strconv.Itoa(massDeleteRetryAfter) {
		t.Fatalf("Retry-After %q", rec.Header().Get("Retry-After"))
	}
	wantStatus(t, b.do("marie", "PROPFIND", paths[3], "", "Depth", "0"), http.StatusMultiStatus)
	// Another client of hers is not held.
	wantStatus(t, b.do("marie", http.MethodDelete, paths[4], "", "User-Agent", phoneAgent), http.StatusNoContent)

	id := b.events("einstein")[0].ID
	wantStatus(t, b.do("einstein", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/confirm", ""), http.StatusOK)
	wantStatus(t, b.do("einstein", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/confirm", ""), http.StatusConflict)
	wantStatus(t, b.do("marie", http.MethodDelete, paths[3], "", "User-Agent", laptopAgent), http.StatusNoContent)
}

// TestMassDeleteRestore brings every item of an event back with its id in
// one request; a file created since at the same place is the deleted one
// revived, its deleted content the newest version.
func TestMassDeleteRestore(t *testing.T) {
	b := newBrakeEnv(t, MassDeleteRules{Files: 5, Share: -1})
	inDir := b.files("dir", 1)[0]
	paths := b.files("", 4)
	dirFileID := fileID(t, b.env, "marie", inDir)
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = fileID(t, b.env, "marie", p)
		b.remove("marie", laptopAgent, p, time.Second)
	}
	b.remove("marie", laptopAgent, physicsPath+"/dir", time.Second)
	wantStatus(t, b.do("einstein", http.MethodPut, paths[0], "new"), http.StatusCreated)

	id := b.events("marie")[0].ID
	rec := b.do("marie", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/restore", "")
	wantStatus(t, rec, http.StatusOK)
	var out massDeleteRestored
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Event.State != "restored" || out.Restored != 4 || out.Revived != 1 || out.Missing != 0 || out.Failed != 0 || len(out.Renamed) != 0 {
		t.Fatalf("restore answered %+v; want 3 files and the folder restored, one file revived", out)
	}
	for i, p := range paths[1:] {
		wantContent(t, b.env, p, "content "+strconv.Itoa(i+1))
		if got := fileID(t, b.env, "marie", p); got != ids[i+1] {
			t.Fatalf("%s has id %s, want %s", p, got, ids[i+1])
		}
	}
	wantContent(t, b.env, inDir, "content 0")
	if got := fileID(t, b.env, "marie", inDir); got != dirFileID {
		t.Fatalf("%s has id %s, want %s", inDir, got, dirFileID)
	}
	wantContent(t, b.env, paths[0], "new")
	_, node, _ := strings.Cut(ids[0], "!")
	versions, err := b.store.FileVersions(t.Context(), "physics", node)
	if err != nil || len(versions) != 1 || fileID(t, b.env, "marie", paths[0]) != ids[0] {
		t.Fatalf("versions of the recreated file: %+v, %v; want the deleted content, same id", versions, err)
	}
	if _, c, err := b.store.OpenVersion(t.Context(), "physics", node, versions[0].Key); err != nil {
		t.Fatal(err)
	} else {
		got, _ := io.ReadAll(c)
		c.Close()
		if string(got) != "content 0" {
			t.Fatalf("the version holds %q, want the deleted content", got)
		}
	}
	wantStatus(t, b.do("marie", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/restore", ""), http.StatusConflict)
}

// fileID reads a node's oc:fileid.
func fileID(t *testing.T, e *env, user, path string) string {
	t.Helper()
	rec := e.do(user, "PROPFIND", path, `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>`, "Depth", "0")
	wantStatus(t, rec, http.StatusMultiStatus)
	var ms struct {
		ID string `xml:"response>propstat>prop>fileid"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &ms); err != nil || ms.ID == "" {
		t.Fatalf("PROPFIND %s: %v\n%s", path, err, rec.Body.String())
	}
	return ms.ID
}

func TestRestoredName(t *testing.T) {
	long := strings.Repeat("é", 126) + ".txt"
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"report.txt", 1, "report (restored).txt"},
		{"report.txt", 3, "report (restored 3).txt"},
		{"Makefile", 1, "Makefile (restored)"},
		{".bashrc", 1, ".bashrc (restored)"},
		{"archive.tar.gz", 2, "archive.tar (restored 2).gz"},
		{long, 1, strings.Repeat("é", 120) + " (restored).txt"},
	} {
		got := restoredName(tc.name, tc.n)
		if got != tc.want || len(got) > maxNameBytes {
			t.Errorf("restoredName(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
}

// TestMassDeleteConcurrent sends one client's deletes side by side: below
// the threshold they are no event, however they interleave; with Hold,
// exactly the threshold's worth are deleted and the rest answered 503.
func TestMassDeleteConcurrent(t *testing.T) {
	for _, tc := range []struct {
		name                string
		rules               MassDeleteRules
		files               int
		wantDeleted, wantEv int
	}{
		{"below the threshold", MassDeleteRules{Files: 5, Share: -1}, 4, 4, 0},
		{"past the threshold", MassDeleteRules{Files: 5, Share: -1}, 12, 12, 1},
		{"held", MassDeleteRules{Files: 5, Share: -1, Hold: true}, 12, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrakeEnv(t, tc.rules)
			paths := b.files("", tc.files)
			codes := make([]int, len(paths))
			var wg sync.WaitGroup
			for i, p := range paths {
				wg.Go(func() { codes[i] = b.do("marie", http.MethodDelete, p, "", "User-Agent", laptopAgent).Code })
			}
			wg.Wait()
			deleted := 0
			for _, c := range codes {
				switch c {
				case http.StatusNoContent:
					deleted++
				case http.StatusServiceUnavailable:
				default:
					t.Fatalf("a DELETE answered %d", c)
				}
			}
			events := b.events("einstein")
			if deleted != tc.wantDeleted || len(events) != tc.wantEv {
				t.Fatalf("%d deleted, events %+v; want %d deleted, %d events", deleted, events, tc.wantDeleted, tc.wantEv)
			}
			if tc.wantEv == 1 && events[0].Files != int64(tc.wantDeleted) {
				t.Fatalf("the event counts %d files, want %d", events[0].Files, tc.wantDeleted)
			}
		})
	}
}

// restoreCounter counts the restores a trash is asked for: one by one,
// and by batch.
type restoreCounter struct {
	storage.Backend
	mu              sync.Mutex
	single, batches int
}

func (c *restoreCounter) RestoreTrash(ctx context.Context, spaceID, key string, t storage.Transfer) (storage.Node, bool, error) {
	c.mu.Lock()
	c.single++
	c.mu.Unlock()
	return c.Backend.RestoreTrash(ctx, spaceID, key, t)
}

func (c *restoreCounter) RestoreTrashBatch(ctx context.Context, spaceID string, rs []storage.TrashRestore) ([]error, int, error) {
	c.mu.Lock()
	c.batches++
	c.mu.Unlock()
	return c.Backend.RestoreTrashBatch(ctx, spaceID, rs)
}

// TestMassDeleteRestoreBatched: an event of many separate files goes back
// in batches of the store's, not a restore per file; a file whose place a
// folder took since comes back beside it, renamed, in the next round.
func TestMassDeleteRestoreBatched(t *testing.T) {
	const files = 300
	counter := &restoreCounter{}
	b := &brakeEnv{clock: time.Date(2026, 3, 14, 14, 2, 0, 0, time.UTC)}
	b.env = newEnv(t, func(c *Config) {
		c.MassDelete = MassDeleteRules{Files: 5, Share: -1}
		counter.Backend = c.Store.(storage.Backend)
		c.Trash = counter
	})
	b.h.brake.now = func() time.Time { return b.clock }
	paths := b.files("many", files)
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = fileID(t, b.env, "marie", p)
		if code := b.remove("marie", laptopAgent, p, time.Millisecond); code != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d", p, code)
		}
	}
	wantStatus(t, b.do("einstein", "MKCOL", paths[7], ""), http.StatusCreated)

	id := b.events("marie")[0].ID
	rec := b.do("marie", http.MethodPost, "/dav/spaces/mass-deletes/"+testStorageID+"$physics/"+id+"/restore", "")
	wantStatus(t, rec, http.StatusOK)
	var out massDeleteRestored
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Restored != files || out.Failed != 0 || out.Missing != 0 || len(out.Renamed) != 1 {
		t.Fatalf("restore answered %+v; want %d files back, one renamed", out, files)
	}
	if counter.single != 0 || counter.batches != 2 {
		t.Errorf("%d restores one by one, %d batches; want none, and one batch a round of names", counter.single, counter.batches)
	}
	for i, p := range paths {
		if i == 7 {
			continue
		}
		if got := fileID(t, b.env, "marie", p); got != ids[i] {
			t.Fatalf("%s has id %s, want %s", p, got, ids[i])
		}
	}
	wantContent(t, b.env, physicsPath+"/many/f7 (restored).txt", "content 7")
}
