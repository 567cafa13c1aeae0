package caddymodule

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// writtenDirectory records the writes a directoryWriter makes; fail
// makes them fail.
type writtenDirectory struct {
	storage.Directory // only RememberUser is called
	mu                sync.Mutex
	writes            []storage.DirectoryEntry
	fail              error
}

func (d *writtenDirectory) RememberUser(_ context.Context, e storage.DirectoryEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	d.writes = append(d.writes, e)
	return nil
}

func (d *writtenDirectory) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.writes)
}

func TestDirectoryWriterWritesWhenStale(t *testing.T) {
	dir := &writtenDirectory{}
	w := newDirectoryWriter(dir, zap.NewNop(), 10)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return clock }
	ctx := context.Background()
	alice := storage.User{ID: "alice", DisplayName: "Alice", Groups: []string{"b", "a"}}

	steps := []struct {
		name    string
		user    storage.User
		email   string
		advance time.Duration
		writes  int
	}{
		{"first sign-in", alice, "alice@example.org", 0, 1},
		{"unchanged", alice, "alice@example.org", time.Hour, 1},
		{"same groups in another order", storage.User{ID: "alice", DisplayName: "Alice", Groups: []string{"a", "b", "a"}}, "alice@example.org", 0, 1},
		{"new email", alice, "alice@example.com", 0, 2},
		{"new group", storage.User{ID: "alice", DisplayName: "Alice", Groups: []string{"a", "b", "c"}}, "alice@example.com", 0, 3},
		{"a day later", storage.User{ID: "alice", DisplayName: "Alice", Groups: []string{"a", "b", "c"}}, "alice@example.com", storage.DirectoryRefresh, 4},
		{"another user", storage.User{ID: "bob"}, "", 0, 5},
		{"not a user id", storage.User{ID: "a/b"}, "", 0, 5},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		w.remember(ctx, s.user, s.email)
		if got := dir.count(); got != s.writes {
			t.Fatalf("%s: %d writes, want %d", s.name, got, s.writes)
		}
	}
	if dir.writes[0].Email != "alice@example.org" || dir.writes[1].Email != "alice@example.com" ||
		!slices.Equal(dir.writes[2].Groups, []string{"a", "b", "c"}) || dir.writes[4].ID != "bob" {
		t.Errorf("written %+v", dir.writes)
	}
}

func TestDirectoryWriterRetriesAfterFailure(t *testing.T) {
	dir := &writtenDirectory{fail: errors.New("disk on fire")}
	w := newDirectoryWriter(dir, zap.NewNop(), 10)
	u := storage.User{ID: "carol"}
	w.remember(context.Background(), u, "")
	dir.fail = nil
	w.remember(context.Background(), u, "")
	w.remember(context.Background(), u, "")
	if got := dir.count(); got != 1 {
		t.Fatalf("%d writes after a failed one, want 1", got)
	}
}

func TestDirectoryWriterBounded(t *testing.T) {
	dir := &writtenDirectory{}
	w := newDirectoryWriter(dir, zap.NewNop(), 2)
	ctx := context.Background()
	for _, id := range []string{"a1", "b1", "a1", "c1", "a1", "b1"} {
		w.remember(ctx, storage.User{ID: id}, "")
	}
	// a1 stays cached (recently used); b1 was evicted by c1 and is
	// written again.
	if got := dir.count(); got != 4 {
		t.Fatalf("%d writes, want 4 (a1, b1, c1, b1 again)", got)
	}
	if len(w.entries) != 2 || w.order.Len() != 2 {
		t.Fatalf("cache holds %d entries", len(w.entries))
	}
}
