package boltstore

import (
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// A database from before the usage counters gets them recounted when it
// opens: dead properties, session and chunked upload reservations, and
// each user's open uploads.
func TestUsageRecountedAtOpen(t *testing.T) {
	f := newFixture(t)
	s, sp := f.s, f.space
	file := f.put(t, f.root(), "f", "").ID
	user := sp.Owner
	value := strings.Repeat("v", 100)
	name := storage.PropName{Space: "urn:x", Local: "p"}
	if err := s.PatchProps(ctx, sp.ID, file, []storage.PropPatch{{Property: storage.Property{Name: name, Value: value}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, storage.UploadSession{SpaceID: sp.ID, User: user, Length: 70,
		Target: storage.Commit{ParentID: sp.ID, Name: "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "c", User: user, SpaceID: sp.ID, Length: 30}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Usage(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want.Props != storage.PropBytes(name, value) || want.Reserved != 100 {
		t.Fatalf("usage = %+v", want)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketUsage) }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openStore(t, f.dir, f.clk)
	got, err := s.Usage(ctx, sp.ID)
	if err != nil || got != want {
		t.Fatalf("usage after the recount = %+v, %v; want %+v", got, err, want)
	}
	_, err = s.CreateSession(ctx, storage.UploadSession{SpaceID: sp.ID, User: user, Length: 1, OpenLimit: 2,
		Target: storage.Commit{ParentID: sp.ID, Name: "t"}})
	wantErr(t, err, storage.ErrTooManyUploads)
}

// A database from before the node counters has its nodes counted once
// when it opens: files and folders, the trash's nodes and the versions.
func TestNodesCountedAtOpen(t *testing.T) {
	f := newFixture(t)
	s, sp := f.s, f.space
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f", "one")
	f.put(t, a.ID, "f", "two") // keeps a version
	gone := f.put(t, f.root(), "gone", "")
	if err := s.Remove(ctx, sp.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Usage(ctx, sp.ID)
	if err != nil || want.Nodes != 4 {
		t.Fatalf("usage = %+v, %v; want 4 nodes (a, f, its version, gone)", want, err)
	}
	err = s.update(func(tx *txn) error {
		c := tx.spaceCounters(sp.ID)
		c.nodes = 0
		if err := tx.putSpaceCounters(sp.ID, c); err != nil {
			return err
		}
		return tx.usageBucket().Delete(keyNodesCounted)
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := s.Usage(ctx, sp.ID); u.Nodes != 0 {
		t.Fatalf("nodes before the reopen: %d", u.Nodes)
	}
	s.Close()

	s = openStore(t, f.dir, f.clk)
	if got, err := s.Usage(ctx, sp.ID); err != nil || got != want {
		t.Fatalf("usage after the count at open = %+v, %v; want %+v", got, err, want)
	}
	if _, err := s.Node(ctx, sp.ID, file.ID); err != nil {
		t.Fatal(err)
	}
}
