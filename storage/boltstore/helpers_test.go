package boltstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d and returns the new time.
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

var ctx = context.Background()

// openStore opens a store in dir with a fake clock and closes it at the end
// of the test. It keeps every file in a content file: most tests here are
// about content files; inline_test.go and the conformance suite cover
// inline content.
func openStore(t testing.TB, dir string, clk *clock) *Store {
	t.Helper()
	opts := Options{InlineLimit: -1}
	if clk != nil {
		opts.Now = clk.Now
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fixture is a store with one personal space.
type fixture struct {
	s     *Store
	clk   *clock
	dir   string
	space storage.Space
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{clk: newClock(), dir: t.TempDir()}
	f.s = openStore(t, f.dir, f.clk)
	sp, err := f.s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	f.space = sp
	return f
}

// newFixtureWith is newFixture on a store opened with opts, whose clock is
// clk unless opts sets Now.
func newFixtureWith(t testing.TB, clk *clock, opts Options) *fixture {
	t.Helper()
	f := &fixture{clk: clk, dir: t.TempDir()}
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	s, err := Open(f.dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
	if f.space, err = s.PersonalSpace(ctx, storage.User{ID: "einstein"}); err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	return f
}

func (f *fixture) root() string { return f.space.ID }

func (f *fixture) mkdir(t testing.TB, parent, name string) storage.Node {
	t.Helper()
	n, err := f.s.Mkdir(ctx, f.space.ID, parent, name)
	if err != nil {
		t.Fatalf("Mkdir %q: %v", name, err)
	}
	return n
}

// put uploads content as parent/name.
func (f *fixture) put(t testing.TB, parent, name, content string) storage.Node {
	t.Helper()
	n, _, err := f.commit(parent, name, content, storage.Commit{})
	if err != nil {
		t.Fatalf("put %q: %v", name, err)
	}
	return n
}

// commit uploads content with the given commit options (ParentID and Name
// are filled in).
func (f *fixture) commit(parent, name, content string, c storage.Commit) (storage.Node, bool, error) {
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		return storage.Node{}, false, err
	}
	defer u.Discard()
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		return storage.Node{}, false, err
	}
	c.ParentID, c.Name = parent, name
	return u.Commit(ctx, c)
}

func (f *fixture) node(t testing.TB, id string) storage.Node {
	t.Helper()
	n, err := f.s.Node(ctx, f.space.ID, id)
	if err != nil {
		t.Fatalf("Node %s: %v", id, err)
	}
	return n
}

func (f *fixture) read(t testing.TB, id string) string {
	t.Helper()
	_, c, err := f.s.Open(ctx, f.space.ID, id)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return string(b)
}

// blob returns the content file id of a file node.
func (f *fixture) blob(t testing.TB, id string) string {
	t.Helper()
	var r rec
	err := f.s.view(func(tx *txn) (err error) {
		r, err = tx.nodeIn(f.space.ID, id)
		return err
	})
	if err != nil {
		t.Fatalf("rec %s: %v", id, err)
	}
	return r.Blob
}

// names lists the names of a folder's children.
func (f *fixture) names(t testing.TB, folder string) []string {
	t.Helper()
	nodes, err := f.s.ReadDir(ctx, f.space.ID, folder, "", 0)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

// keepNoUndo makes the store keep no trash and no versions: removing and
// replacing destroy at once, as before the trash.
func (f *fixture) keepNoUndo() {
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
}
