package pgstore

import (
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Expired uploads release what they reserved and count no more against
// their user's cap once the sweep has ended them.
func TestExpiredUploadsReleaseTheirReservation(t *testing.T) {
	clk := &testClock{}
	a, _ := openTwoNodes(t, Options{Now: clk.Now})
	ctx := t.Context()
	sp := personal(t, a)
	a.SetPersonalQuota(100)
	us := storage.UploadSession{SpaceID: sp.ID, User: "einstein", Length: 60, Target: storage.Commit{ParentID: sp.ID, Name: "f"},
		Expires: clk.Now().Add(time.Hour), OpenLimit: 2}
	if _, err := a.CreateSession(ctx, us); err != nil {
		t.Fatal(err)
	}
	cu := storage.ChunkedUpload{ID: "c", User: "einstein", SpaceID: sp.ID, Length: 40, Expires: clk.Now().Add(time.Hour), OpenLimit: 2}
	if _, err := a.CreateChunkedUpload(ctx, cu); err != nil {
		t.Fatal(err)
	}
	if u, err := a.Usage(ctx, sp.ID); err != nil || u.Reserved != 100 {
		t.Fatalf("usage = %+v, %v", u, err)
	}
	if _, err := a.CreateSession(ctx, us); err == nil {
		t.Fatal("a third upload under a cap of 2 was taken")
	}
	clk.Advance(2 * time.Hour)
	if err := a.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if u, err := a.Usage(ctx, sp.ID); err != nil || u.Reserved != 0 {
		t.Fatalf("usage after expiry = %+v, %v", u, err)
	}
	us.Expires = clk.Now().Add(time.Hour)
	if _, err := a.CreateSession(ctx, us); err != nil {
		t.Fatalf("an upload after the expired ones ended: %v", err)
	}
}

// A database from before the counters has its dead properties recounted
// when a node migrates it.
func TestMigrationRecountsProps(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	sp := personal(t, s)
	n := put(t, s, sp.ID, sp.ID, "f", "")
	name := storage.PropName{Space: "urn:x", Local: "p"}
	value := strings.Repeat("v", 100)
	if err := s.PatchProps(ctx, sp.ID, n.ID, []storage.PropPatch{{Property: storage.Property{Name: name, Value: value}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE spaces SET props_bytes = 0; DELETE FROM meta WHERE key = 'usage_counted'`); err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage(ctx, sp.ID)
	if err != nil || u.Props != storage.PropBytes(name, value) {
		t.Fatalf("usage after the migration = %+v, %v; want %d bytes of properties", u, err, storage.PropBytes(name, value))
	}
}

// A database from before the node counters has its nodes counted when a
// node migrates it: files and folders, the trash's nodes and the versions.
func TestMigrationCountsNodes(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	sp := personal(t, s)
	put(t, s, sp.ID, sp.ID, "f", "one")
	put(t, s, sp.ID, sp.ID, "f", "two") // keeps a version
	gone := put(t, s, sp.ID, sp.ID, "gone", "")
	if err := s.Remove(ctx, sp.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(ctx, sp.ID); err != nil || u.Nodes != 3 {
		t.Fatalf("usage = %+v, %v; want 3 nodes (f, its version, gone)", u, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE spaces SET nodes = 0; DELETE FROM meta WHERE key = 'nodes_counted'`); err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(ctx, sp.ID); err != nil || u.Nodes != 3 {
		t.Fatalf("usage after the migration = %+v, %v; want 3 nodes", u, err)
	}
}
