package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

const ocNS = "http://owncloud.org/ns"

// ReadDirProps lists what ReadDir lists, each child with what Props
// returns, page by page.
func testReadDirPropsMatches(t *testing.T, f *fixture) {
	dir := f.mkdir(t, f.root(), "dir")
	for i := range 7 {
		var n storage.Node
		if i%3 == 0 {
			n = f.mkdir(t, dir.ID, fmt.Sprint("child", i))
		} else {
			n = f.put(t, dir.ID, fmt.Sprint("child", i), strings.Repeat("x", i))
		}
		switch i % 4 {
		case 1:
			f.patch(t, n.ID, set(prop("urn:x", "color", "", fmt.Sprint("<b>", i, "</b>"))))
		case 2:
			f.patch(t, n.ID, set(prop(ocNS, "favorite", user.ID, "1")), set(prop(ocNS, "favorite", "marie", "1")))
		case 3:
			f.patch(t, n.ID, set(prop("urn:x", "a", "", "1")), set(prop("urn:x", "b", "", "2")), set(prop(ocNS, "favorite", user.ID, "1")))
		}
	}
	for _, page := range []struct {
		after string
		limit int
	}{{"", 0}, {"", 3}, {"child2", 3}, {"child6", 0}, {"zzz", 2}} {
		for _, who := range []string{"", user.ID, "marie"} {
			nodes, err := f.s.ReadDir(f.ctx, f.space.ID, dir.ID, page.after, page.limit)
			if err != nil {
				t.Fatalf("ReadDir: %v", err)
			}
			entries, err := f.s.ReadDirProps(f.ctx, f.space.ID, dir.ID, who, page.after, page.limit)
			if err != nil {
				t.Fatalf("ReadDirProps: %v", err)
			}
			if len(entries) != len(nodes) {
				t.Fatalf("page %+v for %q: %d entries, ReadDir has %d", page, who, len(entries), len(nodes))
			}
			for i, e := range entries {
				props, err := f.s.Props(f.ctx, f.space.ID, e.ID, who)
				if err != nil {
					t.Fatalf("Props: %v", err)
				}
				if e.Node != nodes[i] || !slices.Equal(e.Props, props) {
					t.Fatalf("entry %d for %q = %+v, want %+v with %+v", i, who, e, nodes[i], props)
				}
			}
		}
	}
}

// Listing while children are removed and created again never fails and
// never yields a child without the properties it was given in one patch.
func testReadDirPropsUnderChurn(t *testing.T, f *fixture) {
	dir := f.mkdir(t, f.root(), "dir")
	both := []storage.PropPatch{set(prop("urn:x", "color", "", "red")), set(prop(ocNS, "favorite", user.ID, "1"))}
	for i := range 4 {
		f.patch(t, f.put(t, dir.ID, fmt.Sprint("stable", i), "s").ID, both...)
	}
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			if err := f.churn(dir.ID, fmt.Sprint("churn", w), both, stop); err != nil {
				errs <- err
			}
		})
	}
	for range 150 {
		entries, err := f.s.ReadDirProps(f.ctx, f.space.ID, dir.ID, user.ID, "", 0)
		if err != nil {
			t.Errorf("ReadDirProps: %v", err)
			break
		}
		if err := checkChurnListing(entries, len(both)); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// churn removes and creates again the file name in folder dir, with the
// given properties, until stop is closed.
func (f *fixture) churn(dir, name string, props []storage.PropPatch, stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		n, _, err := f.commit(f.space.ID, "c", storage.Commit{ParentID: dir, Name: name})
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		if err := f.s.PatchProps(f.ctx, f.space.ID, n.ID, props); err != nil {
			return fmt.Errorf("patch %s: %w", name, err)
		}
		if err := f.s.Remove(f.ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			return fmt.Errorf("remove %s: %w", name, err)
		}
	}
}

// checkChurnListing checks a listing of the churn test: every stable child
// is there with all its properties, and every child has all or none.
func checkChurnListing(entries []storage.Entry, props int) error {
	stable := 0
	for _, e := range entries {
		if e.ID == "" || e.Name == "" || e.ETag == "" {
			return fmt.Errorf("half entry %+v", e)
		}
		isStable := strings.HasPrefix(e.Name, "stable")
		if isStable {
			stable++
		}
		if len(e.Props) != props && (isStable || len(e.Props) != 0) {
			return fmt.Errorf("%s listed with %d of %d properties", e.Name, len(e.Props), props)
		}
	}
	if stable != 4 {
		return fmt.Errorf("%d of 4 stable children listed", stable)
	}
	return nil
}
