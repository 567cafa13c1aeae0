package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// trashPagingTests pin that TrashItems pages the trash: in TrashOrder,
// every item once whatever the page size, and a pass that goes on while
// the trash changes neither repeats nor skips what it had to list.
var trashPagingTests = []conformanceTest{
	{"TrashPagesCoverAll", testTrashPagesCoverAll},
	{"TrashPagesUnderChanges", testTrashPagesUnderChanges},
	{"TrashPageRefusals", testTrashPageRefusals},
}

// trashedFiles puts n files (and a folder with a file in it, as one more
// item) into the trash and returns their items in TrashOrder.
func (f *fixture) trashedFiles(t *testing.T, n int) []storage.TrashItem {
	t.Helper()
	dir := f.mkdir(t, f.root(), "paged")
	f.put(t, dir.ID, "inside", "inside")
	f.remove(t, dir.ID)
	for i := range n {
		f.remove(t, f.put(t, f.root(), fmt.Sprint("p", i), bytesOf("p", i+1)).ID)
	}
	items := f.trash(t)
	if len(items) != n+1 {
		t.Fatalf("%d items in the trash, want %d", len(items), n+1)
	}
	if !slices.IsSortedFunc(items, storage.TrashOrder) {
		t.Fatalf("the trash is not in TrashOrder: %v", trashKeys(items))
	}
	return items
}

// pages reads the trash limit items at a time, calling between (if set)
// after each page but the last with that page.
func (f *fixture) pages(t *testing.T, limit int, between func(page []storage.TrashItem)) []storage.TrashItem {
	t.Helper()
	var all []storage.TrashItem
	after := ""
	for range 1000 {
		page, err := f.s.TrashItems(f.ctx, f.space.ID, after, limit)
		if err != nil {
			t.Fatalf("TrashItems(after %q, limit %d): %v", after, limit, err)
		}
		if len(page) > limit {
			t.Fatalf("TrashItems(limit %d) returned %d items", limit, len(page))
		}
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		if between != nil {
			between(page)
		}
		after = page[len(page)-1].Key
	}
	t.Fatalf("TrashItems(limit %d) never ends", limit)
	return nil
}

func trashKeys(items []storage.TrashItem) []string {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	return keys
}

// Pages of every size list the trash as one page does, in order.
func testTrashPagesCoverAll(t *testing.T, f *fixture) {
	want := trashKeys(f.trashedFiles(t, 12))
	for _, limit := range []int{1, 2, 3, 5, 12, 13, 14, 100} {
		if got := trashKeys(f.pages(t, limit, nil)); !slices.Equal(got, want) {
			t.Errorf("pages of %d list %v, want %v", limit, got, want)
		}
	}
}

// Between two pages, new deletes (newer than every item listed), a
// restore and a purge of items not yet listed, and a restore of the
// item the next page starts after: the pass lists every item it had to
// that is still there, once, in order, and none of the new ones.
func testTrashPagesUnderChanges(t *testing.T, f *fixture) {
	before := f.trashedFiles(t, 12)
	restored, purged := before[7], before[9]
	round := 0
	got := f.pages(t, 3, func(page []storage.TrashItem) {
		round++
		f.remove(t, f.put(t, f.root(), fmt.Sprint("new", round), "new").ID)
		switch round {
		case 1:
			f.restore(t, restored.Key, restored.Node.ID, f.root(), "restored")
			if err := f.s.PurgeTrash(f.ctx, f.space.ID, purged.Key); err != nil {
				t.Fatalf("PurgeTrash: %v", err)
			}
		case 2:
			last := page[len(page)-1]
			f.restore(t, last.Key, last.Node.ID, f.root(), "cursor")
		}
	})
	var want []string
	for _, it := range before {
		if it.Key != restored.Key && it.Key != purged.Key {
			want = append(want, it.Key)
		}
	}
	if keys := trashKeys(got); !slices.Equal(keys, want) {
		t.Fatalf("a pass under changes lists %v, want %v", keys, want)
	}
	if after := len(f.trash(t)); after != len(want)-1+round {
		t.Fatalf("%d items after the pass, want %d", after, len(want)-1+round)
	}
}

// A page below one item, a cursor that is no key, and a missing space are
// refused.
func testTrashPageRefusals(t *testing.T, f *fixture) {
	f.trashedFiles(t, 2)
	for _, tc := range []struct {
		space, after string
		limit        int
		want         error
	}{
		{f.space.ID, "", 0, storage.ErrInvalid},
		{f.space.ID, "", -1, storage.ErrInvalid},
		{f.space.ID, "no-key", 5, storage.ErrInvalid},
		{f.space.ID, "12.", 5, storage.ErrInvalid},
		{f.space.ID, "a/b.c", 5, storage.ErrInvalid},
		{"no-such-space", "", 5, storage.ErrNotFound},
	} {
		if _, err := f.s.TrashItems(f.ctx, tc.space, tc.after, tc.limit); !errors.Is(err, tc.want) {
			t.Errorf("TrashItems(%q, after %q, limit %d) = %v, want %v", tc.space, tc.after, tc.limit, err, tc.want)
		}
	}
	// A cursor past the oldest item is an empty page, not an error.
	if page, err := f.s.TrashItems(f.ctx, f.space.ID, "1.x", 5); err != nil || len(page) != 0 {
		t.Errorf("TrashItems after the oldest = %v, %v; want none", trashKeys(page), err)
	}
}
