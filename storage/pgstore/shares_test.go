package pgstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The behaviour of shares is storetest's table (TestConformance); these
// are what only this store has: the cap counted in SQL at its real size,
// several nodes racing, and times PostgreSQL keeps as it does.

// linkOn is a view link to node of space spaceID, made by einstein.
func linkOn(spaceID string, node storage.Node) storage.Share {
	return storage.Share{Kind: storage.ShareLink, SpaceID: spaceID, NodeID: node.ID, Creator: "einstein", Role: storage.ShareViewer}
}

func createShare(t *testing.T, s *Store, sh storage.Share) storage.Share {
	t.Helper()
	out, err := s.CreateShare(t.Context(), sh)
	if err != nil {
		t.Fatalf("CreateShare(%+v): %v", sh, err)
	}
	return out
}

// TestShareCountPerCreator: the cap is MaxSharesPerCreator itself, not a
// lowered one, counted per creator.
func TestShareCountPerCreator(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	sp := personal(t, s)
	file := put(t, s, sp.ID, sp.ID, "a.txt", "hello")
	// The shares up to the cap, but one, made in SQL: ten thousand
	// creations would take long.
	_, err := s.pool.Exec(ctx, `
		INSERT INTO shares (id, kind, space_id, node_id, creator, role, token, created_ns)
		SELECT 'bulk-' || i, $1, $2, $3, 'einstein', $4, 'token-' || i, i FROM generate_series(2, $5) AS i`,
		storage.ShareLink, sp.ID, file.ID, storage.ShareViewer, storage.MaxSharesPerCreator)
	if err != nil {
		t.Fatal(err)
	}
	last := createShare(t, s, linkOn(sp.ID, file))
	if _, err := s.CreateShare(ctx, linkOn(sp.ID, file)); !errors.Is(err, storage.ErrTooManyShares) {
		t.Fatalf("CreateShare over the cap = %v, want ErrTooManyShares", err)
	}
	other := linkOn(sp.ID, file)
	other.Creator = "bohr"
	createShare(t, s, other)
	if err := s.DeleteShare(ctx, last.ID); err != nil {
		t.Fatal(err)
	}
	createShare(t, s, linkOn(sp.ID, file))
}

// TestShareFarExpiry: an expiry past what Unix nanoseconds hold, as
// clients send for "never", is kept as their last instant, not wrapped
// into the past.
func TestShareFarExpiry(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	file := put(t, s, sp.ID, sp.ID, "a.txt", "hello")
	far := linkOn(sp.ID, file)
	far.Expires = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	link := createShare(t, s, far)
	got, err := s.LinkByToken(t.Context(), link.Token)
	if err != nil || got.Expires.Year() != 2262 || got.Expired(time.Now()) || !got.Expires.Equal(link.Expires) {
		t.Fatalf("LinkByToken = %+v, %v; want it to expire in 2262", got, err)
	}
}

// shareRows counts the rows of shares, live or not.
func shareRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM shares`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestShareCreateRacesRemove: creating shares on two nodes while one
// removes their folder never leaves a share on a trashed item.
func TestShareCreateRacesRemove(t *testing.T) {
	nodes := openNodes(t, 2)
	ctx := t.Context()
	sp := personal(t, nodes[0])
	var created atomic.Int32
	for round := range 10 {
		dir, err := nodes[0].Mkdir(ctx, sp.ID, sp.ID, fmt.Sprintf("round-%d", round))
		if err != nil {
			t.Fatal(err)
		}
		file := put(t, nodes[0], sp.ID, dir.ID, "f", "x")
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				target := file
				if i%2 == 0 {
					target = dir
				}
				sh := storage.Share{Kind: storage.ShareWithUser, SpaceID: sp.ID, NodeID: target.ID,
					Creator: "einstein", Role: storage.ShareViewer, Grantee: fmt.Sprintf("user-%d", i)}
				_, err := nodes[i%2].CreateShare(ctx, sh)
				if err == nil {
					created.Add(1)
				} else if !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("CreateShare: %v", err)
				}
			}()
		}
		if err := nodes[1].Remove(ctx, sp.ID, dir.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	t.Logf("%d of 40 shares were made before their item went", created.Load())
	if n := shareRows(t, nodes[0]); n != 0 {
		t.Errorf("%d share rows left on trashed items", n)
	}
}

// TestSharesGoWithTheirSpace: no method deletes a space yet, but the
// schema already takes a space's shares with its row.
func TestSharesGoWithTheirSpace(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	createShare(t, s, linkOn(sp.ID, put(t, s, sp.ID, sp.ID, "a.txt", "hello")))
	if _, err := s.pool.Exec(t.Context(), `DELETE FROM spaces WHERE id = $1`, sp.ID); err != nil {
		t.Fatal(err)
	}
	if n := shareRows(t, s); n != 0 {
		t.Errorf("%d share rows outlive their space", n)
	}
}
