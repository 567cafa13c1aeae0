package boltstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// BenchmarkRemoveFolder10000Shared removes a folder of 10,000 files from a
// space with 100 shared items elsewhere, three levels down: what finding
// the shares of a removed subtree adds to a remove that takes none.
func BenchmarkRemoveFolder10000Shared(b *testing.B) {
	f := newFixture(b)
	f.shareItemsElsewhere(b, 100)
	benchmarkRemoveFolder10000(b, f)
}

// shareItemsElsewhere makes n shared folders, each three levels below the
// space's root, with a link each.
func (f *fixture) shareItemsElsewhere(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		parent := f.root()
		for level := range 3 {
			parent = f.mkdir(t, parent, fmt.Sprintf("shared-%d-%d", i, level)).ID
		}
		_, err := f.s.CreateShare(ctx, storage.Share{Kind: storage.ShareLink, SpaceID: f.space.ID, NodeID: parent,
			Creator: "einstein", Role: storage.ShareViewer})
		if err != nil {
			t.Fatalf("CreateShare: %v", err)
		}
	}
}

// Check finds a share whose item is gone, a share missing from an index
// and index entries of no share, and repairs them: the share of a missing
// item is deleted, the index entries put back or dropped.
func TestCheckShares(t *testing.T) {
	f := newCheckFixture(t)
	link := f.share(t, storage.Share{Kind: storage.ShareLink, NodeID: f.a.ID, Role: storage.ShareViewer})
	withMarie := f.share(t, storage.Share{Kind: storage.ShareWithUser, NodeID: f.docs.ID, Role: storage.ShareEditor, Grantee: "marie"})
	f.corrupt(t, func(tx *bolt.Tx) error {
		t := f.s.newTxn(tx)
		orphan := storage.Share{ID: "orphan", Kind: storage.ShareWithGroup, SpaceID: f.space.ID, NodeID: "ghost",
			Creator: "einstein", Role: storage.ShareViewer, Grantee: "physics", Created: time.Now()}
		if err := t.putShare(&orphan); err != nil {
			return err
		}
		_, _, grantee := indexKeys(&withMarie)
		if err := t.shareGrantees().Delete(grantee); err != nil {
			return err
		}
		return t.shareTokens().Put([]byte("stale-token"), []byte(link.ID))
	})
	// A damaged share blocks no remove in its space.
	if err := f.s.Remove(ctx, f.space.ID, f.top.ID, storage.Conditions{}); err != nil {
		t.Fatalf("Remove beside a share of a missing node: %v", err)
	}
	want := []wantProblem{
		{kind: storage.ProblemDangling, repairable: true},               // the share of ghost
		{kind: storage.ProblemDangling, path: "docs", repairable: true}, // marie's, not indexed
		{kind: storage.ProblemDangling, repairable: true, global: true}, // the stale token
	}
	found, _ := runCheck(t, f.s, storage.CheckOptions{})
	wantProblems(t, f.fixture, found, want)
	repaired, sum := runCheck(t, f.s, storage.CheckOptions{Repair: true})
	if sum.Repaired != len(want) {
		t.Fatalf("repaired %d of %v", sum.Repaired, repaired)
	}
	if again, _ := runCheck(t, f.s, storage.CheckOptions{}); len(again) > 0 {
		t.Fatalf("a check after the repair found %v", again)
	}
	shares, err := f.s.SharesWith(ctx, storage.User{ID: "marie", Groups: []string{"physics"}})
	if err != nil || len(shares) != 1 || shares[0].ID != withMarie.ID {
		t.Fatalf("SharesWith marie after the repair = %+v, %v", shares, err)
	}
	if _, err := f.s.LinkByToken(ctx, "stale-token"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("LinkByToken of the stale token: %v", err)
	}
}

// share creates sh by einstein in the fixture's space.
func (f *fixture) share(t *testing.T, sh storage.Share) storage.Share {
	t.Helper()
	sh.SpaceID, sh.Creator = f.space.ID, "einstein"
	got, err := f.s.CreateShare(ctx, sh)
	if err != nil {
		t.Fatalf("CreateShare: %v", err)
	}
	return got
}

// BenchmarkSharesBelowUnshared is what a remove of a folder with no shares
// below it pays for the shares of its space: 100 shared folders elsewhere,
// three levels down, each walked up.
func BenchmarkSharesBelowUnshared(b *testing.B) {
	f := newFixture(b)
	f.shareItemsElsewhere(b, 100)
	dir := f.mkdir(b, f.root(), "unshared")
	b.ReportAllocs()
	for b.Loop() {
		// Nothing to delete: a read-only transaction does.
		err := f.s.view(func(t *txn) error {
			r, _, err := t.node(dir.ID)
			if err != nil {
				return err
			}
			return t.deleteSharesBelow(f.space.ID, r)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
