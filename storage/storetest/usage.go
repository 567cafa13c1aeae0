package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// usageTests pin what a space holds against its quota besides its files:
// the reservations of unfinished uploads and dead properties.
var usageTests = []conformanceTest{
	{"UsageSessionsReserve", testUsageSessionsReserve},
	{"UsageConcurrentReservations", testUsageConcurrentReservations},
	{"UsageOpenUploadsCap", testUsageOpenUploadsCap},
	{"UsageChunkedUploadsReserve", testUsageChunkedUploadsReserve},
	{"UsagePropsCount", testUsagePropsCount},
	{"UsageReplacingReservesGrowth", testUsageReplacingReservesGrowth},
}

func (f *fixture) usage(t *testing.T) storage.Usage {
	t.Helper()
	u, err := f.s.Usage(f.ctx, f.space.ID)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	return u
}

// wantUsage checks the bytes the space holds; wantNodes its nodes.
func (f *fixture) wantUsage(t *testing.T, want storage.Usage) {
	t.Helper()
	got := f.usage(t)
	got.Nodes, want.Nodes = 0, 0
	if got != want {
		t.Fatalf("usage = %+v, want %+v", got, want)
	}
}

// A session reserves its length at creation, within the quota; removing it
// releases the reservation, completing it turns it into the file.
func testUsageSessionsReserve(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000)
	a := f.newSession(t, "a", 300)
	f.newSession(t, "b", 300)
	c := f.newSession(t, "c", 300)
	f.wantUsage(t, storage.Usage{Reserved: 900})
	_, err := f.s.CreateSession(f.ctx, f.sessionFor("d", 200))
	wantErr(t, "a session past the free quota", err, storage.ErrInsufficientStorage)
	_, _, err = f.commit(f.space.ID, strings.Repeat("x", 200), storage.Commit{ParentID: f.root(), Name: "put"})
	wantErr(t, "a commit into reserved bytes", err, storage.ErrInsufficientStorage)
	if err := f.s.RemoveSession(f.ctx, c.ID); err != nil {
		t.Fatalf("RemoveSession: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 600})
	f.appendPart(t, a.ID, 0, strings.Repeat("a", 300))
	if _, _, err := f.s.CompleteSession(f.ctx, a.ID, nil, time.Time{}); err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 300, Reserved: 300})
	if free, _ := f.usage(t).Free(1000); free != 400 {
		t.Fatalf("free = %d, want 400", free)
	}
}

// Concurrent creations never promise more than the quota.
func testUsageConcurrentReservations(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000)
	ok, failures := race(20, storage.ErrInsufficientStorage, func(i int) error {
		_, err := f.s.CreateSession(f.ctx, f.sessionFor("s"+strings.Repeat("x", i), 100))
		return err
	})
	if len(ok) != 10 || len(failures) > 0 {
		t.Fatalf("%d sessions of 100 bytes in a 1000 byte quota, errors %v; want 10", len(ok), failures)
	}
	f.wantUsage(t, storage.Usage{Reserved: 1000})
}

// OpenLimit caps a user's unfinished uploads of both kinds together, with
// or without a quota; ending one makes room.
func testUsageOpenUploadsCap(t *testing.T, f *fixture) {
	s := f.sessionFor("a", 1)
	s.OpenLimit = 3
	first, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if _, err := f.s.CreateSession(f.ctx, s); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	cu := storage.ChunkedUpload{ID: "cap-1", User: user.ID, SpaceID: f.space.ID, Expires: time.Now().Add(chunkTTL), OpenLimit: 3}
	if _, err := f.s.CreateChunkedUpload(f.ctx, cu); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	_, err = f.s.CreateSession(f.ctx, s)
	wantErr(t, "a fourth upload", err, storage.ErrTooManyUploads)
	cu.ID = "cap-2"
	_, err = f.s.CreateChunkedUpload(f.ctx, cu)
	wantErr(t, "a fourth upload", err, storage.ErrTooManyUploads)
	other := s
	other.User = "someone-else"
	if _, err := f.s.CreateSession(f.ctx, other); err != nil {
		t.Fatalf("another user's upload: %v", err)
	}
	if err := f.s.RemoveSession(f.ctx, first.ID); err != nil {
		t.Fatalf("RemoveSession: %v", err)
	}
	if _, err := f.s.CreateChunkedUpload(f.ctx, cu); err != nil {
		t.Fatalf("CreateChunkedUpload after one ended: %v", err)
	}
}

// A chunked upload reserves the greater of its announced length and its
// parts in its space from its creation; a part or a reservation past the
// quota is refused and keeps nothing; the claim keeps it, the removal
// releases it.
func testUsageChunkedUploadsReserve(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000)
	announced := storage.ChunkedUpload{ID: "announced", User: user.ID, SpaceID: f.space.ID, Length: 600, Expires: time.Now().Add(chunkTTL)}
	if _, err := f.s.CreateChunkedUpload(f.ctx, announced); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 600})
	tooBig := announced
	tooBig.ID, tooBig.Length = "too-big", 500
	_, err := f.s.CreateChunkedUpload(f.ctx, tooBig)
	wantErr(t, "an announced length past the quota", err, storage.ErrInsufficientStorage)

	silent := storage.ChunkedUpload{ID: "silent", User: user.ID, SpaceID: f.space.ID, Expires: time.Now().Add(chunkTTL)}
	if _, err := f.s.CreateChunkedUpload(f.ctx, silent); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	f.putChunk(t, "silent", "1", strings.Repeat("s", 300))
	f.wantUsage(t, storage.Usage{Reserved: 900})
	_, err = f.s.PutChunk(f.ctx, "silent", "2", strings.NewReader(strings.Repeat("s", 200)))
	wantErr(t, "a part past the quota", err, storage.ErrInsufficientStorage)
	f.wantChunks(t, "silent", map[string]string{"1": strings.Repeat("s", 300)})
	err = f.s.ReserveChunkedUpload(f.ctx, "silent", 500)
	wantErr(t, "a reservation past the quota", err, storage.ErrInsufficientStorage)
	if err := f.s.ReserveChunkedUpload(f.ctx, "silent", 400); err != nil {
		t.Fatalf("ReserveChunkedUpload: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 1000})
	f.putChunk(t, "announced", "1", strings.Repeat("a", 600)) // within its own reservation
	f.wantUsage(t, storage.Usage{Reserved: 1000})

	if _, err := f.s.ClaimChunkedUpload(f.ctx, "announced"); err != nil {
		t.Fatalf("ClaimChunkedUpload: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 1000}) // until its commit or removal
	if err := f.s.RemoveChunkedUpload(f.ctx, "announced"); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 400})
	if err := f.s.RemoveChunkedUpload(f.ctx, "silent"); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	f.wantUsage(t, storage.Usage{})
}

// Dead properties count against the quota: names and values, shared and
// per-user; a patch past it changes nothing; a removal that keeps no trash
// releases them (TrashPurge pins the release of those in the trash) and a
// copy counts its copies.
func testUsagePropsCount(t *testing.T, f *fixture) {
	f.keepNoUndo()
	f.s.SetPersonalQuota(1000)
	file := f.put(t, f.root(), "f", "")
	color := prop("urn:x", "color", "", strings.Repeat("c", 400))
	fav := prop("urn:x", "fav", user.ID, "1")
	f.patch(t, file.ID, set(color), set(fav))
	want := storage.PropBytes(color.Name, color.Value) + storage.PropBytes(fav.Name, fav.Value)
	f.wantUsage(t, storage.Usage{Props: want})

	big := prop("urn:x", "big", "", strings.Repeat("b", 1000-int(want)))
	err := f.s.PatchProps(f.ctx, f.space.ID, file.ID, []storage.PropPatch{set(big)})
	wantErr(t, "a property past the quota", err, storage.ErrInsufficientStorage)
	if f.countProps(t, file.ID, "") != 1 {
		t.Fatalf("the refused patch changed the properties")
	}
	f.wantUsage(t, storage.Usage{Props: want})

	if _, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "g"}); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	copied := storage.PropBytes(color.Name, color.Value) // shared ones only
	f.wantUsage(t, storage.Usage{Props: want + copied})
	_, _, err = f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "h"})
	wantErr(t, "a copy whose properties pass the quota", err, storage.ErrInsufficientStorage)
	f.wantUsage(t, storage.Usage{Props: want + copied})

	if err := f.s.Remove(f.ctx, f.space.ID, file.ID, storage.Conditions{}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	f.wantUsage(t, storage.Usage{Props: copied})
}

// An upload that replaces a file reserves only its growth: the commit
// frees the old file. A nearly full space can still replace its files.
func testUsageReplacingReservesGrowth(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000)
	old := f.put(t, f.root(), "f", strings.Repeat("o", 800))
	s := f.sessionFor("f", 900)
	s.Replaces = old.Size
	us, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession replacing a file: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 800, Reserved: 100})
	cu := storage.ChunkedUpload{ID: "replacing", User: user.ID, SpaceID: f.space.ID, Length: 900, Replaces: 800,
		Expires: time.Now().Add(chunkTTL)}
	if _, err := f.s.CreateChunkedUpload(f.ctx, cu); err != nil {
		t.Fatalf("CreateChunkedUpload replacing a file: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 800, Reserved: 200})
	if err := f.s.RemoveChunkedUpload(f.ctx, cu.ID); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	f.appendPart(t, us.ID, 0, strings.Repeat("n", 900))
	if _, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); err != nil {
		t.Fatalf("CompleteSession replacing a file: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 900})
}
