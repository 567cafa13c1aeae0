package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucketTest = []byte("t")

// newGroupCommit is a groupCommit over a fresh database with bucketTest.
func newGroupCommit(t *testing.T) *groupCommit {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "g.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket(bucketTest)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return &groupCommit{db: db}
}

// queued returns how many writes wait for the next group.
func (g *groupCommit) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// idle reports whether no write waits and nobody leads.
func (g *groupCommit) idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue) == 0 && !g.leading
}

// commits counts the transactions that committed, by registering every
// write's transaction.
type commits struct {
	mu  sync.Mutex
	txs map[*bolt.Tx]bool
}

func (c *commits) register(tx *bolt.Tx) {
	tx.OnCommit(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.txs[tx] = true
	})
}

func (c *commits) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.txs)
}

// put is a write of key, counted by c.
func put(c *commits, key string) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		c.register(tx)
		return tx.Bucket(bucketTest).Put([]byte(key), []byte("v"))
	}
}

// outcome is what one writer's update returned, or panicked with.
type outcome struct {
	err      error
	panicked any
}

// runGroup runs a first write that holds the transaction until the writes
// of fns have all queued behind it, so that they run as one group, and
// returns their outcomes.
func runGroup(t *testing.T, g *groupCommit, c *commits, fns ...func(*bolt.Tx) error) []outcome {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- g.update(func(tx *bolt.Tx) error {
			close(entered)
			<-release
			return put(c, "first")(tx)
		})
	}()
	<-entered
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	out := make([]outcome, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() { out[i].panicked = recover() }()
			out[i].err = g.update(fn)
		})
	}
	for deadline := time.Now().Add(10 * time.Second); g.queued() < len(fns); {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes queued", g.queued(), len(fns))
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	released = true
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	wg.Wait()
	return out
}

// has reports whether key was committed.
func (g *groupCommit) has(t *testing.T, key string) bool {
	t.Helper()
	found := false
	if err := g.db.View(func(tx *bolt.Tx) error { found = tx.Bucket(bucketTest).Get([]byte(key)) != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	return found
}

// Writes that queue while a transaction runs share the next one.
func TestGroupCommitShares(t *testing.T) {
	g := newGroupCommit(t)
	c := &commits{txs: map[*bolt.Tx]bool{}}
	var fns []func(*bolt.Tx) error
	for i := range 20 {
		fns = append(fns, put(c, fmt.Sprint("k", i)))
	}
	for i, o := range runGroup(t, g, c, fns...) {
		if o.err != nil || o.panicked != nil {
			t.Fatalf("write %d: %+v", i, o)
		}
		if !g.has(t, fmt.Sprint("k", i)) {
			t.Fatalf("write %d not committed", i)
		}
	}
	if got := c.count(); got != 2 {
		t.Fatalf("%d commits for 21 writes, want 2 (the first, then the rest)", got)
	}
	// A lone writer commits at once, in a group of its own.
	if err := g.update(put(c, "alone")); err != nil || c.count() != 3 {
		t.Fatalf("lone write = %v, %d commits", err, c.count())
	}
}

// A write of a group that fails or panics changes nothing and gets its own
// outcome; the others commit.
func TestGroupCommitFailureIsIsolated(t *testing.T) {
	errRefused := errors.New("refused")
	tests := []struct {
		name string
		fail func(tx *bolt.Tx) error
		want outcome
	}{
		{"error", func(tx *bolt.Tx) error {
			tx.Bucket(bucketTest).Put([]byte("bad"), []byte("v"))
			return errRefused
		}, outcome{err: errRefused}},
		{"panic", func(tx *bolt.Tx) error {
			tx.Bucket(bucketTest).Put([]byte("bad"), []byte("v"))
			panic("boom")
		}, outcome{panicked: "boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroupCommit(t)
			c := &commits{txs: map[*bolt.Tx]bool{}}
			out := runGroup(t, g, c, put(c, "a"), tc.fail, put(c, "b"))
			if out[1] != tc.want {
				t.Fatalf("failing write = %+v, want %+v", out[1], tc.want)
			}
			for _, i := range []int{0, 2} {
				if out[i] != (outcome{}) {
					t.Fatalf("write %d = %+v", i, out[i])
				}
			}
			if !g.has(t, "a") || !g.has(t, "b") || g.has(t, "bad") {
				t.Fatalf("committed a=%v b=%v bad=%v", g.has(t, "a"), g.has(t, "b"), g.has(t, "bad"))
			}
			if !g.idle() {
				t.Fatal("the group is not idle after its writes")
			}
		})
	}
}

// Many concurrent writers all commit and none is left waiting.
func TestGroupCommitConcurrent(t *testing.T) {
	g := newGroupCommit(t)
	c := &commits{txs: map[*bolt.Tx]bool{}}
	const writers, writes = 16, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				if err := g.update(put(c, fmt.Sprint(w, "-", i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	n := 0
	g.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketTest).Stats().KeyN; return nil })
	if n != writers*writes {
		t.Fatalf("%d keys, want %d", n, writers*writes)
	}
	if !g.idle() {
		t.Fatal("the group is not idle after its writes")
	}
	t.Logf("%d writes in %d commits", writers*writes, c.count())
}
