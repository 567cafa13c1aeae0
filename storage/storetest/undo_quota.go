package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// undoQuotaTests pin how the trash and versions count against the quota:
// they are used bytes, and an upload that needs their room takes it,
// oldest first, before it is refused.
var undoQuotaTests = []conformanceTest{
	{"QuotaEvictsOldestFirst", testQuotaEvictsOldestFirst},
	{"QuotaRefusalEvictsNothing", testQuotaRefusalEvictsNothing},
	{"QuotaReplacingKeepsVersionsWithinQuota", testQuotaReplacingKeepsVersionsWithinQuota},
	{"QuotaEvictionsForSessions", testQuotaEvictionsForSessions},
	{"QuotaEvictionsForChunkedUploads", testQuotaEvictionsForChunkedUploads},
	{"QuotaPurgeGivesRoomBack", testQuotaPurgeGivesRoomBack},
	{"QuotaRestoresInFullSpace", testQuotaRestoresInFullSpace},
	{"QuotaLoweredBelowUndo", testQuotaLoweredBelowUndo},
}

// bytesOf returns n bytes of content made of c.
func bytesOf(c string, n int) string { return strings.Repeat(c, n) }

// An upload that needs room only the trash and versions hold takes it
// from the oldest of them, and no more than it needs.
func testQuotaEvictsOldestFirst(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	a := f.put(t, f.root(), "a", bytesOf("a", 30))
	b := f.put(t, f.root(), "b", bytesOf("b", 30))
	f.put(t, f.root(), "c", bytesOf("c", 30))
	f.remove(t, a.ID)
	f.tick()
	f.remove(t, b.ID)
	f.tick()
	f.wantUsage(t, storage.Usage{Files: 30, Trash: 60})

	f.put(t, f.root(), "d", bytesOf("d", 35)) // 25 bytes short: a goes
	f.wantTrashed(t, b.ID)
	f.wantUsage(t, storage.Usage{Files: 65, Trash: 30})

	// Versions and trash items go by age together.
	f.s.SetPersonalQuota(200)
	e := f.put(t, f.root(), "e", bytesOf("e", 20))
	f.tick()
	f.replace(t, e.ID, bytesOf("E", 20))
	f.tick()
	g := f.put(t, f.root(), "g", bytesOf("g", 20))
	f.remove(t, g.ID)
	f.tick()
	f.wantUsage(t, storage.Usage{Files: 85, Trash: 50, Versions: 20})
	// 45 free, 35 bytes short: b (the oldest) and e's version go, g stays.
	f.put(t, f.root(), "h", bytesOf("h", 80))
	f.wantTrashed(t, g.ID)
	f.wantVersions(t, e.ID)
	f.wantUsage(t, storage.Usage{Files: 165, Trash: 20})
}

// An upload refused for want of room destroys nothing, even where the
// trash and versions hold some of what it needs.
func testQuotaRefusalEvictsNothing(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	a := f.put(t, f.root(), "a", bytesOf("a", 40))
	f.replace(t, a.ID, bytesOf("A", 40))
	b := f.put(t, f.root(), "b", bytesOf("b", 10))
	f.remove(t, b.ID)
	usage := storage.Usage{Files: 40, Trash: 10, Versions: 40}
	f.wantUsage(t, usage)

	_, _, err := f.commit(f.space.ID, bytesOf("x", 61), storage.Commit{ParentID: f.root(), Name: "x"})
	wantErr(t, "a PUT past the quota and all undo", err, storage.ErrInsufficientStorage)
	_, err = f.s.CreateSession(f.ctx, f.sessionFor("x", 61))
	wantErr(t, "a session past the quota and all undo", err, storage.ErrInsufficientStorage)
	_, err = f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: "einstein/ng/refused", User: user.ID, SpaceID: f.space.ID,
		Length: 61, Expires: time.Now().Add(chunkTTL)})
	wantErr(t, "a chunked upload past the quota and all undo", err, storage.ErrInsufficientStorage)
	_, _, err = f.commit(f.space.ID, bytesOf("A", 101), storage.Commit{NodeID: a.ID})
	wantErr(t, "a replacement growing past the quota and all undo", err, storage.ErrInsufficientStorage)

	f.wantUsage(t, usage)
	f.wantTrashed(t, b.ID)
	f.wantVersions(t, a.ID, bytesOf("a", 40))
}

// A replacement keeps the replaced content as a version as long as the
// quota has room for it: in a full space the file is still replaced (the
// version, newest of what is kept, goes last), and the versions a space
// keeps never push it past its quota.
func testQuotaReplacingKeepsVersionsWithinQuota(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(10)
	full := f.put(t, f.root(), "full", bytesOf("1", 10))
	f.replace(t, full.ID, bytesOf("2", 10))
	f.wantVersions(t, full.ID)
	f.wantUsage(t, storage.Usage{Files: 10})
	f.replace(t, full.ID, bytesOf("3", 4))
	f.wantVersions(t, full.ID)
	f.wantUsage(t, storage.Usage{Files: 4})
	f.remove(t, full.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}

	f.s.SetPersonalQuota(25)
	file := f.put(t, f.root(), "f", bytesOf("a", 10))
	f.tick()
	f.replace(t, file.ID, bytesOf("b", 10))
	f.wantUsage(t, storage.Usage{Files: 10, Versions: 10})
	f.tick()
	f.replace(t, file.ID, bytesOf("c", 10)) // 5 bytes short: the oldest version goes
	f.wantVersions(t, file.ID, bytesOf("b", 10))
	f.wantUsage(t, storage.Usage{Files: 10, Versions: 10})
	f.tick()
	f.replace(t, file.ID, bytesOf("d", 15)) // 10 bytes short
	f.wantVersions(t, file.ID, bytesOf("c", 10))
	f.wantUsage(t, storage.Usage{Files: 15, Versions: 10})
}

// A resumable upload takes the room it needs from the trash and versions
// at its creation and, for the version of the file it replaces, at its
// completion.
func testQuotaEvictionsForSessions(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	x := f.put(t, f.root(), "x", bytesOf("x", 60))
	f.remove(t, x.ID)
	us := f.newSession(t, "new", 80)
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Reserved: 80})
	f.appendPart(t, us.ID, 0, bytesOf("n", 80))
	if _, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 80})

	// Replacing 80 bytes by 60 keeps them as a version: 10 bytes short at
	// the completion, which the older trash item gives.
	f.s.SetPersonalQuota(150)
	g := f.put(t, f.root(), "g", bytesOf("g", 20))
	f.remove(t, g.ID)
	f.tick()
	s := f.sessionFor("new", 60)
	s.Replaces = 80
	us, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession replacing a file: %v", err)
	}
	f.appendPart(t, us.ID, 0, bytesOf("m", 60))
	n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession replacing a file: %v", err)
	}
	f.wantTrashed(t)
	f.wantVersions(t, n.ID, bytesOf("n", 80))
	f.wantUsage(t, storage.Usage{Files: 60, Versions: 80})
}

// A chunked upload takes the room it needs from the trash and versions at
// its creation and for each part beyond what it announced.
func testQuotaEvictionsForChunkedUploads(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	x := f.put(t, f.root(), "x", bytesOf("x", 60))
	f.remove(t, x.ID)
	const announced = "einstein/ng/announced"
	if _, err := f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: announced, User: user.ID, SpaceID: f.space.ID,
		Length: 70, Expires: time.Now().Add(chunkTTL)}); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Reserved: 70})

	y := f.put(t, f.root(), "y", bytesOf("y", 20))
	f.remove(t, y.ID)
	f.wantUsage(t, storage.Usage{Trash: 20, Reserved: 70})
	const silent = "einstein/ng/silent"
	if _, err := f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: silent, User: user.ID, SpaceID: f.space.ID,
		Expires: time.Now().Add(chunkTTL)}); err != nil {
		t.Fatalf("CreateChunkedUpload without a length: %v", err)
	}
	f.putChunk(t, silent, "1", bytesOf("s", 15))
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Reserved: 85})
	if err := f.s.RemoveChunkedUpload(f.ctx, silent); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}

	f.putChunk(t, announced, "1", bytesOf("1", 35))
	f.putChunk(t, announced, "2", bytesOf("2", 35))
	parts, err := f.s.ClaimChunkedUpload(f.ctx, announced)
	if err != nil {
		t.Fatalf("ClaimChunkedUpload: %v", err)
	}
	if _, err := f.assemble(f.space.ID, announced, parts, storage.Commit{ParentID: f.root(), Name: "assembled", Assembles: announced}); err != nil {
		t.Fatalf("assembly: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 70})
}

// Purging and emptying give the room back at once: an upload that only
// fits without the trash fits right after, with nothing left to evict.
func testQuotaPurgeGivesRoomBack(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	a := f.put(t, f.root(), "a", bytesOf("a", 50))
	b := f.put(t, f.root(), "b", bytesOf("b", 50))
	f.remove(t, a.ID)
	f.remove(t, b.ID)
	if err := f.s.PurgeTrash(f.ctx, f.space.ID, f.trashed(t, a.ID).Key); err != nil {
		t.Fatalf("PurgeTrash: %v", err)
	}
	f.wantUsage(t, storage.Usage{Trash: 50})
	if free, _ := f.usage(t).Free(100); free != 50 {
		t.Fatalf("free after a purge = %d, want 50", free)
	}
	f.put(t, f.root(), "c", bytesOf("c", 50))
	f.wantTrashed(t, b.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 50})
}

// Restoring a version or a trash item moves bytes the space holds already:
// a full space can do both, and evicts nothing for them.
func testQuotaRestoresInFullSpace(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(100)
	file := f.put(t, f.root(), "f", bytesOf("a", 30))
	f.tick()
	f.replace(t, file.ID, bytesOf("b", 40))
	gone := f.put(t, f.root(), "gone", bytesOf("g", 10))
	f.remove(t, gone.ID)
	other := f.put(t, f.root(), "other", bytesOf("o", 20))
	full := storage.Usage{Files: 60, Trash: 10, Versions: 30}
	f.wantUsage(t, full)

	v := f.versions(t, file.ID)[0]
	if _, err := f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, v.Key, storage.Conditions{}); err != nil {
		t.Fatalf("RestoreVersion in a full space: %v", err)
	}
	f.wantVersions(t, file.ID, bytesOf("b", 40))
	f.wantUsage(t, storage.Usage{Files: 50, Trash: 10, Versions: 40})

	it := f.trashed(t, gone.ID)
	n, replaced, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key,
		storage.Transfer{NodeID: gone.ID, NewParentID: f.root(), NewName: "other", Overwrite: true})
	if err != nil || !replaced || n.ID != gone.ID {
		t.Fatalf("RestoreTrash over a file in a full space = %+v, replaced %v, %v", n, replaced, err)
	}
	f.wantTrashed(t, other.ID)
	f.wantUsage(t, storage.Usage{Files: 40, Trash: 20, Versions: 40})
}

// In a space whose quota was lowered below what it holds, an upload takes
// from the trash what it is over by as well as what it needs.
func testQuotaLoweredBelowUndo(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(200)
	f.put(t, f.root(), "kept", bytesOf("k", 50))
	var gone []storage.Node
	for i, size := range []int{20, 20, 40} {
		n := f.put(t, f.root(), fmt.Sprint("gone", i), bytesOf("g", size))
		f.remove(t, n.ID)
		f.tick()
		gone = append(gone, n)
	}
	f.s.SetPersonalQuota(100) // 130 used
	f.put(t, f.root(), "new", bytesOf("n", 10))
	f.wantTrashed(t, gone[2].ID)
	f.wantUsage(t, storage.Usage{Files: 60, Trash: 40})
}
