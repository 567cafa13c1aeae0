package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 19 through the real Caddy, on both deployments: what a DELETE
// takes (and a target COPY or MOVE replaces) goes to the space's trash, from where MOVE restores it (201 new,
// 204 over an existing file, 412 with Overwrite F, 409 without the
// parent) under its own file id, and DELETE purges an item or empties the
// whole trash.
func TestTrashRoundTrips(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{}, trashRoundTripsScenario)
}

func trashRoundTripsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	ref := personalSpaceRef(t, s, "einstein")
	u := undoSpace{c: c, ref: ref}

	t.Run("file back to its place", func(t *testing.T) {
		u := u.in(t)
		u.put(http.StatusCreated, "note.txt", "a note\n")
		id := u.fileID("note.txt")
		deletedAt := time.Now()
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("note.txt"), "")
		u.c.expect(http.StatusNotFound, http.MethodGet, u.path("note.txt"), "")
		u.c.expect(http.StatusNotFound, http.MethodGet, "/dav/spaces/"+id, "")
		item := u.trashItem("note.txt")
		if item.name != "note.txt" || item.folder || item.size != "7" || item.length != "7" {
			t.Fatalf("trash item of note.txt: %+v", item)
		}
		if ts, err := strconv.ParseInt(item.deleted, 10, 64); err != nil || ts < deletedAt.Unix()-60 || ts > deletedAt.Unix()+60 {
			t.Fatalf("oc:trashbin-delete-timestamp %q, deleted at %d", item.deleted, deletedAt.Unix())
		}
		u.restore(http.StatusCreated, item.key, "note.txt")
		u.wantContent("note.txt", "a note\n")
		if got := u.fileID("note.txt"); got != id {
			t.Fatalf("restored file id %s, want %s as before the delete", got, id)
		}
		if u.hasTrashItem("note.txt") {
			t.Fatal("the restored file is still listed in the trash")
		}
	})

	t.Run("folder and one file from inside it", func(t *testing.T) {
		u := u.in(t)
		u.c.expect(http.StatusCreated, "MKCOL", u.path("dir"), "")
		u.c.expect(http.StatusCreated, "MKCOL", u.path("dir/sub"), "")
		u.put(http.StatusCreated, "dir/a.txt", "file a")
		u.put(http.StatusCreated, "dir/sub/b ✓.txt", "file b, deeper")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("dir"), "")
		item := u.trashItem("dir")
		if !item.folder || item.name != "dir" {
			t.Fatalf("trash item of dir: %+v", item)
		}
		if got := u.trashChildren(item.key); !slices.Equal(got, []string{"a.txt", "sub/"}) {
			t.Fatalf("Depth 1 on the deleted folder lists %q", got)
		}
		if got := u.trashChildren(item.key, "sub"); !slices.Equal(got, []string{"b ✓.txt"}) {
			t.Fatalf("Depth 1 on the deleted folder's sub lists %q", got)
		}
		// Its own folder is gone: 409, and nothing changes.
		u.restore(http.StatusConflict, item.key+"/sub/b ✓.txt", "dir/sub/b ✓.txt")
		u.restore(http.StatusCreated, item.key+"/sub/b ✓.txt", "b ✓.txt")
		u.wantContent("b ✓.txt", "file b, deeper")
		if got := u.trashChildren(item.key, "sub"); len(got) != 0 {
			t.Fatalf("the restored file is still in the deleted folder: %q", got)
		}
		u.restore(http.StatusCreated, item.key, "dir")
		u.wantContent("dir/a.txt", "file a")
		u.c.expect(http.StatusNotFound, http.MethodGet, u.path("dir/sub/b ✓.txt"), "")
		u.c.expect(http.StatusMultiStatus, "PROPFIND", u.path("dir/sub")+"/", "", "Depth", "0")
	})

	t.Run("over an existing file", func(t *testing.T) {
		u := u.in(t)
		u.put(http.StatusCreated, "old.txt", "the deleted one")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("old.txt"), "")
		u.put(http.StatusCreated, "target.txt", "the one in the way")
		item := u.trashItem("old.txt")
		_, body := u.c.expect(http.StatusPreconditionFailed, "MOVE", u.trashPath(item.key), "",
			"Destination", u.url("target.txt"), "Overwrite", "F")
		wantDAVError(t, body, "PreconditionFailed")
		u.wantContent("target.txt", "the one in the way")
		if !u.hasTrashItem("old.txt") {
			t.Fatal("the refused restore took the item out of the trash")
		}
		u.restore(http.StatusNoContent, item.key, "target.txt")
		u.wantContent("target.txt", "the deleted one")
		// The replaced file went to the trash in turn.
		replaced := u.trashItem("target.txt")
		u.restore(http.StatusCreated, replaced.key, "in the way.txt")
		u.wantContent("in the way.txt", "the one in the way")
	})

	t.Run("targets replaced by COPY and MOVE", func(t *testing.T) {
		u := u.in(t)
		u.put(http.StatusCreated, "source.txt", "the source")
		u.put(http.StatusCreated, "copied over.txt", "replaced by a COPY")
		u.put(http.StatusCreated, "moved over.txt", "replaced by a MOVE")
		id := u.fileID("moved over.txt")
		u.c.expect(http.StatusNoContent, "COPY", u.path("source.txt"), "", "Destination", u.url("copied over.txt"))
		u.c.expect(http.StatusNoContent, "MOVE", u.path("source.txt"), "", "Destination", u.url("moved over.txt"))
		for name, content := range map[string]string{"copied over.txt": "replaced by a COPY", "moved over.txt": "replaced by a MOVE"} {
			u.restore(http.StatusCreated, u.trashItem(name).key, "back "+name)
			u.wantContent("back "+name, content)
		}
		if got := u.fileID("back moved over.txt"); got != id {
			t.Fatalf("the file a MOVE replaced came back as %s, want %s", got, id)
		}
	})

	t.Run("purge and empty", func(t *testing.T) {
		u := u.in(t)
		u.put(http.StatusCreated, "purged.txt", "purged")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("purged.txt"), "")
		item := u.trashItem("purged.txt")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.trashPath(item.key), "")
		if u.hasTrashItem("purged.txt") {
			t.Fatal("the purged item is still listed")
		}
		for _, key := range []string{item.key, "1764000000000000000.00000000-0000-0000-0000-000000000000", "not-a-key"} {
			_, body := u.c.expect(http.StatusNotFound, http.MethodDelete, u.trashPath(key), "")
			wantDAVError(t, body, "NotFound")
			_, body = u.c.expect(http.StatusNotFound, "MOVE", u.trashPath(key), "", "Destination", u.url("purged.txt"))
			wantDAVError(t, body, "NotFound")
		}

		u.put(http.StatusCreated, "e1.txt", "one")
		u.c.expect(http.StatusCreated, "MKCOL", u.path("e2"), "")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("e1.txt"), "")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("e2"), "")
		if n := len(u.trash()); n < 2 {
			t.Fatalf("%d items in the trash before emptying it, want at least 2", n)
		}
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.trashPath(""), "")
		if items := u.trash(); len(items) != 0 {
			t.Fatalf("the emptied trash lists %+v", items)
		}
		// The /remote.php form, with the $ escaped, names the same trash.
		remote := "/remote.php/dav/spaces/trash-bin/" + strings.Replace(ref, "$", "%24", 1)
		if got := u.c.propfind(remote, "1", trashPropsBody); len(got) != 1 {
			t.Fatalf("PROPFIND %s of an empty trash: %d responses, want the root alone", remote, len(got))
		}
	})
}

// Who may do what with the trash and the versions of a project space: an
// editor lists and restores but may not purge, a viewer may not use the
// trash, and lists and downloads versions but may not restore one.
func TestUndoRoles(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{}, undoRolesScenario)
}

func undoRolesScenario(t *testing.T, s *server) {
	einstein := newClient(t, s.URL, "einstein")
	physics := projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics")
	manager := undoSpace{c: einstein, ref: physics}
	editor := undoSpace{c: newClient(t, s.URL, "marie"), ref: physics}
	viewer := undoSpace{c: newClient(t, s.URL, "richard"), ref: physics}

	manager.put(http.StatusCreated, "doc.txt", "first")
	manager.put(http.StatusNoContent, "doc.txt", "second")
	id := manager.fileID("doc.txt")
	manager.put(http.StatusCreated, "gone.txt", "deleted by the editor")
	editor.c.expect(http.StatusNoContent, http.MethodDelete, editor.path("gone.txt"), "")

	item := editor.trashItem("gone.txt")
	editor.c.expect(http.StatusForbidden, http.MethodDelete, editor.trashPath(item.key), "")
	editor.c.expect(http.StatusForbidden, http.MethodDelete, editor.trashPath(""), "")
	for _, req := range []struct{ method, path string }{
		{"PROPFIND", viewer.trashPath("")},
		{"PROPFIND", viewer.trashPath(item.key)},
		{"MOVE", viewer.trashPath(item.key)},
		{http.MethodDelete, viewer.trashPath(item.key)},
		{http.MethodDelete, viewer.trashPath("")},
	} {
		_, body := viewer.c.expect(http.StatusForbidden, req.method, req.path, trashPropsBody,
			"Depth", "1", "Destination", viewer.url("stolen.txt"))
		wantDAVError(t, body, "Forbidden")
	}
	editor.restore(http.StatusCreated, item.key, "gone.txt")
	manager.wantContent("gone.txt", "deleted by the editor")

	if got := viewer.versionContents(id, viewer.versions(id)); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("the versions a viewer sees: %q", got)
	}
	key := viewer.versions(id)[0].key
	_, body := viewer.c.expect(http.StatusForbidden, "COPY", versionPath(id, key), "", "Destination", viewer.url("doc.txt"))
	wantDAVError(t, body, "Forbidden")
	manager.wantContent("doc.txt", "second")
	editor.restoreVersion(http.StatusNoContent, id, key, "doc.txt")
	manager.wantContent("doc.txt", "first")
}

// Every replacement keeps the replaced content as a version, listed and
// downloadable at /dav/meta/{fileid}/v; COPY restores one (204) and keeps
// the content it replaces in turn; the versions stay with the file
// through a move, a delete and a restore.
func TestVersionsRoundTrips(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{}, versionsRoundTripsScenario)
}

func versionsRoundTripsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	u := undoSpace{c: c, ref: personalSpaceRef(t, s, "einstein")}
	u.put(http.StatusCreated, "v.txt", "one")
	id := u.fileID("v.txt")
	u.put(http.StatusNoContent, "v.txt", "two, longer")
	u.put(http.StatusNoContent, "v.txt", "three")
	versions := u.versions(id)
	if got := u.versionContents(id, versions); !slices.Equal(got, []string{"two, longer", "one"}) {
		t.Fatalf("versions of v.txt, newest first: %q", got)
	}
	oldest := versions[1]
	if oldest.length != "3" || oldest.etag == "" {
		t.Fatalf("version props: %+v", oldest)
	}
	resp, body := c.expect(http.StatusPartialContent, http.MethodGet, versionPath(id, versions[0].key), "", "Range", "bytes=5-10")
	if body != "longer" || resp.Header.Get("Content-Range") != "bytes 5-10/11" {
		t.Fatalf("Range of a version: %q %q", resp.Header.Get("Content-Range"), body)
	}
	c.expect(http.StatusNotModified, http.MethodGet, versionPath(id, oldest.key), "", "If-None-Match", oldest.etag)
	resp, body = c.expect(http.StatusOK, http.MethodHead, versionPath(id, oldest.key), "")
	if body != "" || resp.ContentLength != 3 {
		t.Fatalf("HEAD of a version: length %d, body %q", resp.ContentLength, body)
	}
	_, body = c.expect(http.StatusNotFound, http.MethodGet, versionPath(id, "1764000000000000000.7"), "")
	wantDAVError(t, body, "NotFound")

	u.restoreVersion(http.StatusNoContent, id, oldest.key, "v.txt")
	u.wantContent("v.txt", "one")
	if got := u.versionContents(id, u.versions(id)); !slices.Equal(got, []string{"three", "two, longer"}) {
		t.Fatalf("versions after restoring the oldest: %q, want the replaced content first", got)
	}

	// Keyed by the file: a move keeps them, and so do a delete and restore.
	if got := u.metaPath(id); got != "/v.txt" {
		t.Fatalf("oc:meta-path-for-user of v.txt: %q", got)
	}
	u.c.expect(http.StatusCreated, "MKCOL", u.path("moved"), "")
	u.c.expect(http.StatusCreated, "MOVE", u.path("v.txt"), "", "Destination", u.url("moved/v.txt"))
	if got := u.metaPath(id); got != "/moved/v.txt" {
		t.Fatalf("oc:meta-path-for-user of the moved v.txt: %q", got)
	}
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("moved"), "")
	u.c.expect(http.StatusNotFound, "PROPFIND", versionPath(id, ""), "", "Depth", "1")
	u.restore(http.StatusCreated, u.trashItem("moved").key, "moved")
	if got := u.versionContents(id, u.versions(id)); !slices.Equal(got, []string{"three", "two, longer"}) {
		t.Fatalf("versions after a delete and restore: %q", got)
	}
}

// Trash and versions count in the space's used bytes; an upload that needs
// the room they hold gets it, the oldest going first, and only when even
// all of them would not make room is it refused (507), destroying nothing.
// Purging gives the bytes back at once.
func TestUndoUnderQuota(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"personal_quota 100KiB"}}, undoUnderQuotaScenario)
}

func undoUnderQuotaScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	u := undoSpace{c: c, ref: personalSpaceRef(t, s, "einstein")}
	const kib = 1 << 10
	base := u.used()

	u.put(http.StatusCreated, "old.bin", strings.Repeat("o", 60*kib))
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("old.bin"), "")
	u.wantUsed(base+60*kib, 60*kib, "with 60 KiB in the trash")

	// 60 KiB more fit only once the trash gives its 60 KiB up.
	u.put(http.StatusCreated, "new.bin", strings.Repeat("n", 60*kib))
	if items := u.trash(); len(items) != 0 {
		t.Fatalf("the trash still holds %+v after an upload needed its room", items)
	}
	u.wantUsed(base+60*kib, 0, "after the trash made room")

	// A replaced content is a version and counts; a new file that needs
	// its room gets it.
	newID := u.fileID("new.bin")
	u.put(http.StatusNoContent, "new.bin", strings.Repeat("N", 30*kib))
	if n := len(u.versions(newID)); n != 1 {
		t.Fatalf("%d versions of new.bin, want 1", n)
	}
	u.wantUsed(base+90*kib, 0, "with a 60 KiB version")
	u.put(http.StatusCreated, "other.bin", strings.Repeat("x", 30*kib))
	if n := len(u.versions(newID)); n != 0 {
		t.Fatalf("%d versions of new.bin left after an upload needed their room", n)
	}
	u.wantUsed(base+60*kib, 0, "after the version made room")

	// Nothing of undo can make room for this one: refused, nothing lost.
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("other.bin"), "")
	u.c.expect(http.StatusInsufficientStorage, http.MethodPut, u.path("huge.bin"), strings.Repeat("h", 200*kib))
	item := u.trashItem("other.bin")
	u.wantUsed(base+60*kib, 30*kib, "after a refused upload")

	// Purging gives the bytes back at once, to the quota and, on the
	// embedded store, to the disk.
	blobs := func() int64 { return 0 }
	if s.Root != "" {
		blobs = func() int64 { return bytesUnder(t, filepath.Join(s.Root, "blobs")) }
	}
	onDisk := blobs()
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.trashPath(item.key), "")
	u.wantUsed(base+30*kib, 0, "after the purge")
	if s.Root != "" {
		u.eventually(30*time.Second, "the purged content file to leave the disk", func() bool {
			return blobs() <= onDisk-30*kib
		})
	}

	// A resumable upload that needs the trash's room gets it too.
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("new.bin"), "")
	u.wantUsed(base+30*kib, 30*kib, "with new.bin in the trash")
	resp, body, err := c.tusCreate(u.path(""), "tus.bin", 90*kib, bytes.Repeat([]byte("t"), 90*kib))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("a TUS upload of 90 KiB with 70 KiB free and 30 KiB in the trash: %v %v\n%s", resp, err, body)
	}
	if items := u.trash(); len(items) != 0 {
		t.Fatalf("the trash still holds %+v after a TUS upload needed its room", items)
	}
	u.wantContent("tus.bin", strings.Repeat("t", 90*kib))
	u.wantUsed(base+90*kib, 0, "after the TUS upload")
}

// trash_retention and versions (per handler and per project space) decide
// what is kept, and for how long; the capabilities tell clients.
func TestUndoRetentionSettings(t *testing.T) {
	// Both stores sweep every two seconds, so that the test waits
	// seconds, not the default minute, for the retention to expire.
	t.Parallel()
	sweep := []string{"sweep_interval 2s"}
	onEachDeployment(t, serverOptions{postgresStore: sweep, boltStore: sweep, davspaces: []string{
		"versions {",
		"\tmax 2",
		"}",
		"space Chemistry {",
		"\tmanager einstein",
		"\ttrash_retention off",
		"\tversions off",
		"}",
		"space Biology {",
		"\tmanager einstein",
		"\ttrash_retention 1s",
		"\tversions {",
		"\t\tkeep 1s",
		"\t}",
		"}",
	}}, retentionSettingsScenario)
}

func retentionSettingsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	personal := personalSpaceRef(t, s, "einstein")
	wantUndoCapabilities(t, c, true, true)

	t.Run("versions max 2", func(t *testing.T) {
		u := undoSpace{c: c.in(t), ref: personal}
		u.put(http.StatusCreated, "max.txt", "1")
		for _, v := range []string{"2", "3", "4"} {
			u.put(http.StatusNoContent, "max.txt", v)
		}
		id := u.fileID("max.txt")
		if got := u.versionContents(id, u.versions(id)); !slices.Equal(got, []string{"3", "2"}) {
			t.Fatalf("versions with max 2: %q", got)
		}
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("max.txt"), "")
		u.trashItem("max.txt")
	})

	t.Run("off in one project space", func(t *testing.T) {
		u := undoSpace{c: c.in(t), ref: projectSpaceRef(personal, "Chemistry")}
		u.put(http.StatusCreated, "f.txt", "1")
		u.put(http.StatusNoContent, "f.txt", "2")
		id := u.fileID("f.txt")
		if n := len(u.versions(id)); n != 0 {
			t.Fatalf("%d versions with versions off", n)
		}
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("f.txt"), "")
		if items := u.trash(); len(items) != 0 {
			t.Fatalf("trash_retention off kept %+v", items)
		}
	})

	t.Run("short retention expires", func(t *testing.T) {
		u := undoSpace{c: c.in(t), ref: projectSpaceRef(personal, "Biology")}
		u.put(http.StatusCreated, "f.txt", "1")
		u.put(http.StatusNoContent, "f.txt", "2")
		id := u.fileID("f.txt")
		u.put(http.StatusCreated, "gone.txt", "gone")
		u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("gone.txt"), "")
		// The sweeps run once a minute (embedded) and every two seconds
		// (cluster).
		u.eventually(3*time.Minute, "the expired trash item and version to go", func() bool {
			return len(u.trash()) == 0 && len(u.versions(id)) == 0
		})
	})
}

// With trash and versions off for the whole handler, a delete destroys, a
// replacement keeps nothing, and the capabilities say so.
func TestUndoOff(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"trash_retention off", "versions off"}}, undoOffScenario)
}

func undoOffScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	wantUndoCapabilities(t, c, false, false)
	u := undoSpace{c: c, ref: personalSpaceRef(t, s, "einstein")}
	u.put(http.StatusCreated, "f.txt", "1")
	u.put(http.StatusNoContent, "f.txt", "2")
	if n := len(u.versions(u.fileID("f.txt"))); n != 0 {
		t.Fatalf("%d versions with versions off", n)
	}
	u.c.expect(http.StatusNoContent, http.MethodDelete, u.path("f.txt"), "")
	if items := u.trash(); len(items) != 0 {
		t.Fatalf("trash_retention off kept %+v", items)
	}
}

// wantUndoCapabilities checks what the OCS capabilities tell clients of
// the trash-bin and versions.
func wantUndoCapabilities(t *testing.T, c *client, undelete, versioning bool) {
	t.Helper()
	var got struct {
		Dav struct {
			Trashbin string `json:"trashbin"`
		} `json:"dav"`
		Files struct {
			Undelete   bool `json:"undelete"`
			Versioning bool `json:"versioning"`
		} `json:"files"`
	}
	readCapabilities(t, c, &got)
	if got.Files.Undelete != undelete || got.Files.Versioning != versioning {
		t.Fatalf("capabilities files.undelete %v, files.versioning %v; want %v, %v", got.Files.Undelete, got.Files.Versioning, undelete, versioning)
	}
	if undelete && got.Dav.Trashbin != "1.0" {
		t.Fatalf("capabilities dav.trashbin %q, want 1.0", got.Dav.Trashbin)
	}
}

// readCapabilities decodes the OCS capabilities c is given into caps, a
// struct of the parts a test reads.
func readCapabilities(t *testing.T, c *client, caps any) {
	t.Helper()
	_, body := c.expect(http.StatusOK, http.MethodGet, "/ocs/v1.php/cloud/capabilities?format=json", "", "OCS-APIREQUEST", "true")
	var envelope struct {
		OCS struct {
			Data struct {
				Capabilities json.RawMessage `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	if err := json.Unmarshal([]byte(body), &envelope); err != nil {
		t.Fatalf("capabilities: %v\n%s", err, body)
	}
	if err := json.Unmarshal(envelope.OCS.Data.Capabilities, caps); err != nil {
		t.Fatalf("capabilities: %v\n%s", err, body)
	}
}

// undoSpace is one space as a member reaches it: its files by path, its
// trash and its files' versions.
type undoSpace struct {
	c   *client
	ref string // the space's resource id, <storage>$<space>
}

// in is the same space reported to t (a subtest).
func (u undoSpace) in(t testing.TB) undoSpace {
	u.c = u.c.in(t)
	return u
}

// path is the escaped request path of name in the space.
func (u undoSpace) path(name string) string {
	return escapePath("/dav/spaces/" + u.ref + "/" + name)
}

// url is the Destination of name in the space.
func (u undoSpace) url(name string) string {
	return u.c.base + u.path(name)
}

func (u undoSpace) put(status int, name, content string) {
	u.c.t.Helper()
	u.c.expect(status, http.MethodPut, u.path(name), content)
}

func (u undoSpace) fileID(name string) string {
	u.c.t.Helper()
	return u.c.prop(u.path(name), ocNS, "fileid")
}

// wantContent checks the content of name with GET.
func (u undoSpace) wantContent(name, want string) {
	u.c.t.Helper()
	if _, got := u.c.expect(http.StatusOK, http.MethodGet, u.path(name), ""); got != want {
		u.c.t.Fatalf("GET %s: %q, want %q", name, got, want)
	}
}

// trashItem is an entry of a space's trash as PROPFIND lists it.
type trashItem struct {
	key      string // the last segment of its href
	name     string // oc:trashbin-original-filename
	location string // oc:trashbin-original-location
	deleted  string // oc:trashbin-delete-timestamp
	size     string // oc:size
	length   string // d:getcontentlength
	folder   bool
}

const trashPropsBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<oc:trashbin-original-filename/><oc:trashbin-original-location/><oc:trashbin-delete-timestamp/>` +
	`<oc:trashbin-delete-datetime/><oc:spaceid/><oc:size/><d:getcontentlength/><d:resourcetype/>` +
	`<d:getcontenttype/><oc:permissions/></d:prop></d:propfind>`

// trashPath is the escaped path of rest ("key/sub/name", "" for the root)
// in the space's trash.
func (u undoSpace) trashPath(rest string) string {
	p := "/dav/spaces/trash-bin/" + u.ref
	if rest != "" {
		p += "/" + rest
	}
	return escapePath(p)
}

// trash lists the space's trash with PROPFIND Depth 1.
func (u undoSpace) trash() []trashItem {
	u.c.t.Helper()
	var items []trashItem
	for _, r := range u.c.propfind(u.trashPath(""), "1", trashPropsBody) {
		key := u.trashHrefRest(r.href)
		if key == "" {
			continue // the trash root
		}
		items = append(items, trashItem{
			key:      key,
			name:     r.props[ocNS+" trashbin-original-filename"],
			location: r.props[ocNS+" trashbin-original-location"],
			deleted:  r.props[ocNS+" trashbin-delete-timestamp"],
			size:     r.props[ocNS+" size"],
			length:   r.props["DAV: getcontentlength"],
			folder:   strings.Contains(r.props["DAV: resourcetype"], "collection"),
		})
	}
	return items
}

// trashHrefRest is what an href of the space's trash names below its root
// ("key" or "key/sub/name"), without a trailing slash.
func (u undoSpace) trashHrefRest(href string) string {
	u.c.t.Helper()
	p, err := url.PathUnescape(href)
	if err != nil {
		u.c.t.Fatalf("href %q: %v", href, err)
	}
	_, rest, ok := strings.Cut(p, "/dav/spaces/trash-bin/"+u.ref)
	if !ok {
		u.c.t.Fatalf("href %q is not in the trash of %s", href, u.ref)
	}
	return strings.Trim(rest, "/")
}

// trashItem finds the newest item deleted from location.
func (u undoSpace) trashItem(location string) trashItem {
	u.c.t.Helper()
	items := u.trash()
	for _, it := range items {
		if it.location == location {
			return it
		}
	}
	u.c.t.Fatalf("nothing deleted from %q in the trash: %+v", location, items)
	return trashItem{}
}

func (u undoSpace) hasTrashItem(location string) bool {
	u.c.t.Helper()
	return slices.ContainsFunc(u.trash(), func(it trashItem) bool { return it.location == location })
}

// trashChildren lists, sorted, the children of a deleted folder (the
// item key, or the folder names lead to below it) with PROPFIND Depth 1,
// folders with a trailing slash.
func (u undoSpace) trashChildren(key string, names ...string) []string {
	u.c.t.Helper()
	folder := path.Join(append([]string{key}, names...)...)
	children := []string{}
	for _, r := range u.c.propfind(u.trashPath(folder)+"/", "1", trashPropsBody) {
		rest := u.trashHrefRest(r.href)
		if rest == folder {
			continue
		}
		name, ok := strings.CutPrefix(rest, folder+"/")
		if !ok || strings.Contains(name, "/") {
			u.c.t.Fatalf("PROPFIND %s lists %q", folder, r.href)
		}
		if strings.Contains(r.props["DAV: resourcetype"], "collection") {
			name += "/"
		}
		children = append(children, name)
	}
	slices.Sort(children)
	return children
}

// restore moves what rest names in the trash ("key" or "key/sub/name") to
// name in the space, and checks the status.
func (u undoSpace) restore(status int, rest, name string, hdr ...string) {
	u.c.t.Helper()
	u.c.expect(status, "MOVE", u.trashPath(rest), "", append([]string{"Destination", u.url(name)}, hdr...)...)
}

// fileVersion is a version of a file as PROPFIND lists it.
type fileVersion struct {
	key    string
	etag   string
	length string
	sums   string
}

const versionPropsBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:getetag/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getcontenttype/><oc:checksums/>` +
	`</d:prop></d:propfind>`

// versionPath is the escaped path of version key of file fileID, or of
// its versions collection for key "".
func versionPath(fileID, key string) string {
	return escapePath(strings.TrimSuffix("/dav/meta/"+fileID+"/v/"+key, "/"))
}

// versions lists the versions of file fileID with PROPFIND Depth 1, as
// the server orders them (newest first).
func (u undoSpace) versions(fileID string) []fileVersion {
	u.c.t.Helper()
	var vs []fileVersion
	for _, r := range u.c.propfind(versionPath(fileID, ""), "1", versionPropsBody) {
		p, err := url.PathUnescape(r.href)
		if err != nil {
			u.c.t.Fatalf("href %q: %v", r.href, err)
		}
		_, key, ok := strings.Cut(strings.TrimSuffix(p, "/"), fileID+"/v")
		if !ok {
			u.c.t.Fatalf("href %q is not among the versions of %s", r.href, fileID)
		}
		if key = strings.TrimPrefix(key, "/"); key == "" {
			continue // the versions collection
		}
		vs = append(vs, fileVersion{
			key:    key,
			etag:   r.props["DAV: getetag"],
			length: r.props["DAV: getcontentlength"],
			sums:   r.props[ocNS+" checksums"],
		})
	}
	return vs
}

// versionContents downloads each of vs.
func (u undoSpace) versionContents(fileID string, vs []fileVersion) []string {
	u.c.t.Helper()
	contents := []string{}
	for _, v := range vs {
		_, body := u.c.expect(http.StatusOK, http.MethodGet, versionPath(fileID, v.key), "")
		if strconv.Itoa(len(body)) != v.length {
			u.c.t.Fatalf("version %s of %s: %d bytes, d:getcontentlength %s", v.key, fileID, len(body), v.length)
		}
		contents = append(contents, body)
	}
	return contents
}

// restoreVersion copies version key back onto the file, named as the
// clients name it: at name in the space.
func (u undoSpace) restoreVersion(status int, fileID, key, name string) {
	u.c.t.Helper()
	u.c.expect(status, "COPY", versionPath(fileID, key), "", "Destination", u.url(name))
}

// metaPath is oc:meta-path-for-user of file fileID.
func (u undoSpace) metaPath(fileID string) string {
	u.c.t.Helper()
	return u.c.prop(escapePath("/dav/meta/"+fileID), ocNS, "meta-path-for-user")
}

// used is what the space's root says of its used bytes.
func (u undoSpace) used() int64 {
	u.c.t.Helper()
	n, err := strconv.ParseInt(u.c.prop(u.path(""), "DAV:", "quota-used-bytes"), 10, 64)
	if err != nil {
		u.c.t.Fatal(err)
	}
	return n
}

// wantUsed checks the used bytes WebDAV and the Graph drive show, and the
// bytes in the trash the Graph drive shows.
func (u undoSpace) wantUsed(used, deleted int64, when string) {
	u.c.t.Helper()
	if got := u.used(); got != used {
		u.c.t.Fatalf("%s: quota-used-bytes %d, want %d", when, got, used)
	}
	q := u.driveQuota()
	if q.Used != used || q.Deleted != deleted {
		u.c.t.Fatalf("%s: Graph drive quota used %d, deleted %d; want %d, %d", when, q.Used, q.Deleted, used, deleted)
	}
}

// graphQuota is the quota of a Graph drive.
type graphQuota struct {
	Used      int64 `json:"used"`
	Deleted   int64 `json:"deleted"`
	Remaining int64 `json:"remaining"`
	Total     int64 `json:"total"`
}

// driveQuota is the quota of the space's Graph drive.
func (u undoSpace) driveQuota() graphQuota {
	u.c.t.Helper()
	_, body := u.c.expect(http.StatusOK, http.MethodGet, "/graph/v1.0/me/drives", "")
	var drives struct {
		Value []struct {
			ID    string     `json:"id"`
			Quota graphQuota `json:"quota"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(body), &drives); err != nil {
		u.c.t.Fatalf("Graph drives: %v\n%s", err, body)
	}
	for _, d := range drives.Value {
		if d.ID == u.ref {
			return d.Quota
		}
	}
	u.c.t.Fatalf("no Graph drive %s in %s", u.ref, body)
	return graphQuota{}
}

// eventually polls cond until it holds, up to limit.
func (u undoSpace) eventually(limit time.Duration, what string, cond func() bool) {
	u.c.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			u.c.t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(time.Second)
	}
}

// sameContent reports whether a and b hold the same bytes, saying where
// they first differ otherwise.
func sameContent(a, b []byte) (bool, string) {
	if bytes.Equal(a, b) {
		return true, ""
	}
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return false, fmt.Sprintf("%d and %d bytes, first difference at byte %d", len(a), len(b), i)
		}
	}
	return false, fmt.Sprintf("%d and %d bytes, one a prefix of the other", len(a), len(b))
}
