package storetest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// versionTests are the conformance tests of storage.Versions and of the
// retention of the trash and versions.
var versionTests = []conformanceTest{
	{"VersionsOnEveryReplacingPath", testVersionsOnEveryReplacingPath},
	{"VersionRestore", testVersionRestore},
	{"VersionRestoreConditions", testVersionRestoreConditions},
	{"VersionsFollowTheirFile", testVersionsFollowTheirFile},
	{"VersionsRefusals", testVersionsRefusals},
	{"VersionReadableWhileOpen", testVersionReadableWhileOpen},
	{"RecreatedFileKeepsHistory", testRecreatedFileKeepsHistory},
	{"RecreatedFileTakesNewestItem", testRecreatedFileTakesNewestItem},
	{"VersionsPrunedToMax", testVersionsPrunedToMax},
	{"VersionsPrunedByAgeOnCommit", testVersionsPrunedByAgeOnCommit},
	{"VersionsOff", testVersionsOff},
	{"ExpiryOfVersions", testExpiryOfVersions},
	{"ExpiryOfTrash", testExpiryOfTrash},
}

// Every commit that replaces a file's content keeps the content it
// replaces as a version of the file: a PUT by name or by id, a resumable
// upload's completion, a chunked upload's assembly.
func testVersionsOnEveryReplacingPath(t *testing.T, f *fixture) {
	mtime := time.Date(2021, 2, 3, 4, 5, 6, 0, time.UTC)
	first, created, err := f.commit(f.space.ID, "put-1", storage.Commit{ParentID: f.root(), Name: "f", ModTime: mtime, ContentType: "text/plain"})
	if err != nil || !created {
		t.Fatalf("commit: created %v, %v", created, err)
	}
	f.tick()
	if _, created, err := f.commit(f.space.ID, "put-2", storage.Commit{ParentID: f.root(), Name: "f"}); err != nil || created {
		t.Fatalf("replace by name: created %v, %v", created, err)
	}
	f.tick()
	f.replace(t, first.ID, "put-3")
	f.tick()
	us := f.newSession(t, "f", 5)
	f.appendPart(t, us.ID, 0, "tus-4")
	if n, created, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); err != nil || created || n.ID != first.ID {
		t.Fatalf("CompleteSession replacing the file = %+v, created %v, %v", n, created, err)
	}
	f.tick()
	const id = "einstein/ng/versions"
	parts := f.startFullChunkedUpload(t, id, 6)
	if n, err := f.assemble(f.space.ID, id, parts, storage.Commit{ParentID: f.root(), Name: "f", Assembles: id}); err != nil || n.ID != first.ID {
		t.Fatalf("assembly replacing the file = %+v, %v", n, err)
	}

	if got := f.read(t, first.ID); got != "111222" {
		t.Fatalf("current content %q", got)
	}
	vs := f.wantVersions(t, first.ID, "tus-4", "put-3", "put-2", "put-1")
	f.wantUsage(t, storage.Usage{Files: 6, Versions: 20})
	keys := map[string]bool{}
	for i, v := range vs {
		if err := storage.ValidVersionKey(first.ID, v.Key); err != nil || keys[v.Key] {
			t.Fatalf("version key %q: %v (or not unique)", v.Key, err)
		}
		keys[v.Key] = true
		if v.Node.ID != first.ID || v.Node.Size != 5 || v.Replaced.IsZero() {
			t.Fatalf("version %+v of %+v", v, first)
		}
		if i > 0 && !v.Replaced.Before(vs[i-1].Replaced) {
			t.Fatalf("versions not newest first: %+v", vs)
		}
	}
	oldest := vs[len(vs)-1].Node
	if oldest.ETag != first.ETag || !oldest.ModTime.Equal(mtime) || oldest.ContentType != "text/plain" ||
		oldest.Checksums != sums("put-1") {
		t.Fatalf("the first content's version = %+v, the file was %+v", oldest, first)
	}
	v, c, err := f.s.OpenVersion(f.ctx, f.space.ID, first.ID, vs[1].Key)
	if err != nil {
		t.Fatalf("OpenVersion: %v", err)
	}
	defer c.Close()
	if v.Key != vs[1].Key || v.Node.ETag != vs[1].Node.ETag || v.Node.Checksums != sums("put-3") {
		t.Fatalf("OpenVersion = %+v, listed %+v", v, vs[1])
	}
	if _, err := c.Seek(4, io.SeekStart); err != nil {
		t.Fatalf("Seek in a version: %v", err)
	}
	if rest, err := io.ReadAll(c); err != nil || string(rest) != "3" {
		t.Fatalf("version read from 4 = %q, %v", rest, err)
	}
}

// A restored version becomes the file's content, with a fresh etag and
// its own modification time; the content it replaces becomes the newest
// version, and the restored one is no version any more.
func testVersionRestore(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	one := f.put(t, a.ID, "f", "1")
	f.tick()
	two := f.replace(t, one.ID, "22")
	f.tick()
	three := f.replace(t, one.ID, "333")
	vs := f.wantVersions(t, one.ID, "22", "1")
	f.wantUsage(t, storage.Usage{Files: 3, Versions: 3})
	before := f.node(t, a.ID)
	f.tick()

	n, err := f.s.RestoreVersion(f.ctx, f.space.ID, one.ID, vs[1].Key, storage.Conditions{})
	if err != nil {
		t.Fatalf("RestoreVersion: %v", err)
	}
	if n.ID != one.ID || n.Size != 1 || n.Checksums != sums("1") || !n.ModTime.Equal(one.ModTime) ||
		slices.Contains([]string{one.ETag, two.ETag, three.ETag}, n.ETag) {
		t.Fatalf("restored %+v; the version was %+v", n, vs[1].Node)
	}
	if got := f.node(t, one.ID); !sameNode(got, n) {
		t.Fatalf("Node = %+v, RestoreVersion returned %+v", got, n)
	}
	if got := f.read(t, one.ID); got != "1" {
		t.Fatalf("restored content %q", got)
	}
	vs2 := f.wantVersions(t, one.ID, "333", "22")
	if vs2[0].Node.ETag != three.ETag || vs2[1].Key != vs[0].Key {
		t.Fatalf("versions after a restore = %+v, before %+v", vs2, vs)
	}
	_, c, err := f.s.OpenVersion(f.ctx, f.space.ID, one.ID, vs[1].Key)
	if err == nil {
		c.Close()
	}
	wantErr(t, "OpenVersion of the restored version", err, storage.ErrNotFound)
	_, err = f.s.RestoreVersion(f.ctx, f.space.ID, one.ID, vs[1].Key, storage.Conditions{})
	wantErr(t, "RestoreVersion again", err, storage.ErrNotFound)
	f.wantUsage(t, storage.Usage{Files: 1, Versions: 5})
	if got := f.node(t, a.ID); got.Size != 1 || got.ETag == before.ETag {
		t.Fatalf("folder after the restore = %+v, before %+v", got, before)
	}
}

// RestoreVersion checks the file's etag and locks as a commit to it does;
// a refused restore changes nothing.
func testVersionRestoreConditions(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "old")
	f.tick()
	cur := f.replace(t, file.ID, "new")
	v := f.versions(t, file.ID)[0]
	l := f.lock(t, file.ID, false, storage.LockExclusive)
	refusals := []struct {
		name string
		c    storage.Conditions
		want error
	}{
		{"If-Match of another etag", storage.Conditions{IfMatch: file.ETag}, storage.ErrPrecondition},
		{"a lock not held", storage.Conditions{Locks: &storage.LockTokens{User: user.ID}}, storage.ErrLocked},
		{"a token of another user", storage.Conditions{Locks: &storage.LockTokens{User: "intruder", Tokens: []string{l.Token}}}, storage.ErrLocked},
	}
	for _, tc := range refusals {
		_, err := f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, v.Key, tc.c)
		wantErr(t, "RestoreVersion with "+tc.name, err, tc.want)
	}
	if got := f.node(t, file.ID); !sameNode(got, cur) {
		t.Fatalf("file after refused restores = %+v, was %+v", got, cur)
	}
	f.wantVersions(t, file.ID, "old")
	held := storage.Conditions{IfMatch: cur.ETag, Locks: &storage.LockTokens{User: user.ID, Tokens: []string{l.Token}}}
	if _, err := f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, v.Key, held); err != nil {
		t.Fatalf("RestoreVersion with the etag and the lock: %v", err)
	}
	if got := f.read(t, file.ID); got != "old" {
		t.Fatalf("restored content %q", got)
	}
	wantTokens(t, "locks after the restore", f.spaceLocks(t), l)
}

// Versions belong to their file wherever it goes: moved, into the trash
// (where they still count) and back; they are destroyed with it. A copy
// is a new file, without versions.
func testVersionsFollowTheirFile(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, f.root(), "b")
	file := f.put(t, a.ID, "f", "v1")
	f.tick()
	f.replace(t, file.ID, "v22")
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: b.ID, NewName: "g"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	f.wantVersions(t, file.ID, "v1")
	cp, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "copy"})
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	f.wantVersions(t, cp.ID)
	f.remove(t, cp.ID)
	f.wantUsage(t, storage.Usage{Files: 3, Trash: 3, Versions: 2})

	f.remove(t, b.ID)
	f.wantGone(t, file)
	f.wantUsage(t, storage.Usage{Trash: 6, Versions: 2})
	f.restoreItem(t, f.trashed(t, b.ID))
	f.wantVersions(t, file.ID, "v1")
	f.wantUsage(t, storage.Usage{Files: 3, Trash: 3, Versions: 2})

	f.remove(t, file.ID)
	if err := f.s.PurgeTrash(f.ctx, f.space.ID, f.trashed(t, file.ID).Key); err != nil {
		t.Fatalf("PurgeTrash: %v", err)
	}
	f.wantUsage(t, storage.Usage{Trash: 3})
}

// Unknown and malformed keys, unknown files and files in the trash have
// no versions: ErrNotFound, never another file's.
func testVersionsRefusals(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "a")
	f.replace(t, file.ID, "b")
	other := f.put(t, f.root(), "other", "c")
	f.replace(t, other.ID, "d")
	v := f.versions(t, file.ID)[0]
	otherV := f.versions(t, other.ID)[0]
	_, err := f.s.FileVersions(f.ctx, f.space.ID, "no-such-file")
	wantErr(t, "FileVersions of an unknown file", err, storage.ErrNotFound)
	for _, key := range []string{"", "1", "x.1", "1.x", "../" + v.Key, v.Key + "/x", "1.0", otherV.Key} {
		if key == v.Key {
			continue
		}
		_, c, err := f.s.OpenVersion(f.ctx, f.space.ID, file.ID, key)
		if err == nil {
			c.Close()
		}
		wantErr(t, fmt.Sprintf("OpenVersion %q", key), err, storage.ErrNotFound)
		_, err = f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, key, storage.Conditions{})
		wantErr(t, fmt.Sprintf("RestoreVersion %q", key), err, storage.ErrNotFound)
	}
	_, c, err := f.s.OpenVersion(f.ctx, f.space.ID, "no-such-file", v.Key)
	if err == nil {
		c.Close()
	}
	wantErr(t, "OpenVersion of an unknown file", err, storage.ErrNotFound)
	f.remove(t, file.ID)
	_, c, err = f.s.OpenVersion(f.ctx, f.space.ID, file.ID, v.Key)
	if err == nil {
		c.Close()
	}
	wantErr(t, "OpenVersion of a file in the trash", err, storage.ErrNotFound)
	_, err = f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, v.Key, storage.Conditions{})
	wantErr(t, "RestoreVersion of a file in the trash", err, storage.ErrNotFound)
	f.wantVersions(t, other.ID, "c")
}

// An open version, and an open file, read to their end even when they are
// purged meanwhile, as open content does when its file is replaced.
func testVersionReadableWhileOpen(t *testing.T, f *fixture) {
	big := strings.Repeat("0123456789abcdef", 4096) // past any inline limit
	current := strings.Repeat("fedcba9876543210", 4096)
	file := f.put(t, f.root(), "f", big)
	f.replace(t, file.ID, current)
	v := f.versions(t, file.ID)[0]
	_, old, err := f.s.OpenVersion(f.ctx, f.space.ID, file.ID, v.Key)
	if err != nil {
		t.Fatalf("OpenVersion: %v", err)
	}
	defer old.Close()
	_, cur, err := f.s.Open(f.ctx, f.space.ID, file.ID)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer cur.Close()
	heads := make([][]byte, 2)
	for i, c := range []storage.Content{old, cur} {
		heads[i] = make([]byte, 16)
		if _, err := io.ReadFull(c, heads[i]); err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	f.remove(t, file.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	for i, want := range []string{big, current} {
		rest, err := io.ReadAll([]storage.Content{old, cur}[i])
		if err != nil || string(heads[i])+string(rest) != want {
			t.Fatalf("open content %d after its purge read %d bytes, %v; want %d", i, len(heads[i])+len(rest), err, len(want))
		}
	}
	f.wantUsage(t, storage.Usage{})
}

// A file deleted and created again at its place is the deleted file back,
// replaced: its id, properties and versions, and the deleted content as
// its newest version. The commit still creates (nothing was there).
func testRecreatedFileKeepsHistory(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f", "v1")
	color := prop("urn:x", "color", "", "teal")
	f.patch(t, file.ID, set(color))
	f.tick()
	f.replace(t, file.ID, "v22")
	f.tick()
	f.remove(t, file.ID)
	f.tick()

	n, created, err := f.commit(f.space.ID, "v333", storage.Commit{ParentID: a.ID, Name: "f"})
	if err != nil || !created || n.ID != file.ID || n.Size != 4 {
		t.Fatalf("a file created where it was deleted = %+v, created %v, %v; want id %s", n, created, err, file.ID)
	}
	f.wantVersions(t, file.ID, "v22", "v1")
	f.wantProps(t, file.ID, color)
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Files: 4, Versions: 5, Props: propBytes(color)})
	if got := f.node(t, a.ID).Size; got != 4 {
		t.Fatalf("folder size %d, want 4", got)
	}

	// So does a resumable upload, in the root.
	rootFile := f.put(t, f.root(), "r", "r1")
	f.tick()
	f.remove(t, rootFile.ID)
	f.tick()
	us := f.newSession(t, "r", 3)
	f.appendPart(t, us.ID, 0, "r22")
	n, created, err = f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil || !created || n.ID != rootFile.ID {
		t.Fatalf("a resumable upload where a file was deleted = %+v, created %v, %v; want id %s", n, created, err, rootFile.ID)
	}
	f.wantVersions(t, rootFile.ID, "r1")

	// Another name, another folder or a folder of that name takes nothing.
	gone := f.put(t, a.ID, "gone", "g")
	f.remove(t, gone.ID)
	f.tick()
	dir := f.mkdir(t, a.ID, "dir")
	f.remove(t, dir.ID)
	for _, c := range []storage.Commit{
		{ParentID: a.ID, Name: "Gone"},
		{ParentID: f.root(), Name: "gone"},
		{ParentID: a.ID, Name: "dir"},
	} {
		n, created, err := f.commit(f.space.ID, "x", c)
		if err != nil || !created || n.ID == gone.ID || n.ID == dir.ID {
			t.Fatalf("a new file %q = %+v, created %v, %v", c.Name, n, created, err)
		}
		f.wantVersions(t, n.ID)
	}
	f.wantTrashed(t, dir.ID, gone.ID)
}

// Of two files deleted from one place, a file created there takes the
// history of the newer.
func testRecreatedFileTakesNewestItem(t *testing.T, f *fixture) {
	older := f.put(t, f.root(), "x", "older")
	f.remove(t, older.ID)
	f.tick()
	dir := f.mkdir(t, f.root(), "dir")
	newer := f.put(t, dir.ID, "x", "newer")
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: newer.ID, NewParentID: f.root(), NewName: "x"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	f.remove(t, newer.ID)
	f.tick()
	n, created, err := f.commit(f.space.ID, "third", storage.Commit{ParentID: f.root(), Name: "x"})
	if err != nil || !created || n.ID != newer.ID {
		t.Fatalf("a file created where two were deleted = %+v, created %v, %v; want id %s", n, created, err, newer.ID)
	}
	f.wantVersions(t, newer.ID, "newer")
	f.wantTrashed(t, older.ID)
}

// A commit prunes its file's versions to VersionsMax, oldest first.
func testVersionsPrunedToMax(t *testing.T, f *fixture) {
	f.retain(storage.Retention{Trash: storage.DefaultTrashRetention, VersionsFor: storage.DefaultVersionsRetention, VersionsMax: 2})
	file := f.put(t, f.root(), "f", "0")
	for _, content := range []string{"11", "222", "3333"} {
		f.tick()
		f.replace(t, file.ID, content)
	}
	f.wantVersions(t, file.ID, "222", "11")
	f.wantUsage(t, storage.Usage{Files: 4, Versions: 5})
}

// A commit prunes its file's versions older than VersionsFor.
func testVersionsPrunedByAgeOnCommit(t *testing.T, f *fixture) {
	f.needClock(t)
	f.retain(storage.Retention{Trash: storage.DefaultTrashRetention, VersionsFor: time.Hour, VersionsMax: storage.DefaultVersionsMax})
	file := f.put(t, f.root(), "f", "a")
	f.replace(t, file.ID, "bb")
	f.after(2 * time.Hour)
	f.replace(t, file.ID, "ccc")
	f.wantVersions(t, file.ID, "bb")
	f.wantUsage(t, storage.Usage{Files: 3, Versions: 2})
}

// A space that keeps no versions forgets replaced content.
func testVersionsOff(t *testing.T, f *fixture) {
	for _, r := range []storage.Retention{
		{Trash: storage.DefaultTrashRetention, VersionsOff: true, VersionsFor: time.Hour, VersionsMax: 5},
		{Trash: storage.DefaultTrashRetention, VersionsFor: time.Hour},
		{Trash: storage.DefaultTrashRetention, VersionsMax: 5},
	} {
		f.retain(r)
		file := f.put(t, f.root(), "f", "one")
		f.replace(t, file.ID, "two")
		us := f.newSession(t, "f", 5)
		f.appendPart(t, us.ID, 0, "three")
		if _, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); err != nil {
			t.Fatalf("CompleteSession: %v", err)
		}
		f.wantVersions(t, file.ID)
		f.wantUsage(t, storage.Usage{Files: 5})
		// A file created where it was deleted is still that file back,
		// without a version of what it held.
		f.remove(t, file.ID)
		if n, created, err := f.commit(f.space.ID, "four", storage.Commit{ParentID: f.root(), Name: "f"}); err != nil || !created || n.ID != file.ID {
			t.Fatalf("a file created where it was deleted = %+v, created %v, %v; want id %s", n, created, err, file.ID)
		}
		f.wantVersions(t, file.ID)
		f.wantUsage(t, storage.Usage{Files: 4})
		f.remove(t, file.ID)
		if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
			t.Fatalf("EmptyTrash: %v", err)
		}
	}
}

// expireAll runs the expiry passes until one removes nothing, and returns
// how many things they removed.
func (f *fixture) expireAll(t *testing.T) int {
	t.Helper()
	const maxPasses = 100
	total := 0
	for range maxPasses {
		n, err := f.s.ExpireUndo(f.ctx)
		if err != nil {
			t.Fatalf("ExpireUndo: %v", err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
	t.Fatalf("ExpireUndo still removing after %d passes", maxPasses)
	return total
}

// The expiry pass removes the versions older than VersionsFor, of files
// live or in the trash, and a new retention applies to what is kept
// already.
func testExpiryOfVersions(t *testing.T, f *fixture) {
	f.needClock(t)
	f.retain(storage.Retention{Trash: storage.DefaultTrashRetention, VersionsFor: time.Hour, VersionsMax: storage.DefaultVersionsMax})
	file := f.put(t, f.root(), "f", "a")
	f.replace(t, file.ID, "bb")
	trashed := f.put(t, f.root(), "t", "x")
	f.replace(t, trashed.ID, "yy")
	f.after(30 * time.Minute)
	f.replace(t, file.ID, "ccc")
	f.remove(t, trashed.ID)
	if n := f.expireAll(t); n != 0 {
		t.Fatalf("ExpireUndo removed %d things before any expired", n)
	}
	f.after(45 * time.Minute)
	if n := f.expireAll(t); n < 2 {
		t.Fatalf("ExpireUndo removed %d things, want the two versions older than an hour", n)
	}
	f.wantVersions(t, file.ID, "bb")
	f.wantUsage(t, storage.Usage{Files: 3, Trash: 2, Versions: 2})

	f.retain(storage.Retention{Trash: storage.DefaultTrashRetention, VersionsFor: 10 * time.Minute, VersionsMax: storage.DefaultVersionsMax})
	if n := f.expireAll(t); n < 1 {
		t.Fatalf("ExpireUndo under a shorter retention removed %d things", n)
	}
	f.wantVersions(t, file.ID)
	f.wantUsage(t, storage.Usage{Files: 3, Trash: 2})
}

// The expiry pass purges the trash items older than the trash retention,
// with the versions of their files, and a new retention applies to what is
// kept already.
func testExpiryOfTrash(t *testing.T, f *fixture) {
	f.needClock(t)
	f.retain(storage.Retention{Trash: time.Hour, VersionsFor: storage.DefaultVersionsRetention, VersionsMax: storage.DefaultVersionsMax})
	color := prop("urn:x", "color", "", "grey")
	old := f.deepTree(t, f.root())
	f.patch(t, old.f1.ID, set(color))
	f.replace(t, old.g.ID, "g-2")
	young := f.put(t, f.root(), "young", "yyyy")
	f.remove(t, old.a.ID)
	f.after(30 * time.Minute)
	f.remove(t, young.ID)
	f.wantUsage(t, storage.Usage{Trash: deepTreeSize + 1 + 4, Versions: 2, Props: propBytes(color)})
	f.after(45 * time.Minute)
	if n := f.expireAll(t); n < 1 {
		t.Fatalf("ExpireUndo removed %d things, want the item older than an hour", n)
	}
	f.wantTrashed(t, young.ID)
	f.wantUsage(t, storage.Usage{Trash: 4})
	for _, n := range old.all() {
		f.wantGone(t, n)
	}

	f.retain(storage.Retention{Trash: 10 * time.Minute, VersionsFor: storage.DefaultVersionsRetention, VersionsMax: storage.DefaultVersionsMax})
	if n := f.expireAll(t); n < 1 {
		t.Fatalf("ExpireUndo under a shorter retention removed %d things", n)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{})

	// A retention that keeps no trash any more lets none of it stay.
	f.retain(storage.DefaultRetention)
	kept := f.put(t, f.root(), "kept", "kk")
	f.remove(t, kept.ID)
	f.retain(storage.Retention{VersionsFor: storage.DefaultVersionsRetention, VersionsMax: storage.DefaultVersionsMax})
	if n := f.expireAll(t); n < 1 {
		t.Fatalf("ExpireUndo once the trash is off removed %d things", n)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{})
}
