package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// massDeleteTests are the conformance tests of storage.MassDeletes.
var massDeleteTests = []conformanceTest{
	{"MassDeleteOpenedExtendedRead", testMassDeleteRoundTrip},
	{"MassDeleteItemsKeptOnce", testMassDeleteItemsOnce},
	{"MassDeletesCappedPerSpace", testMassDeletesCapped},
	{"MassDeletesOfTheirSpace", testMassDeletesOfSpace},
	{"MassDeleteResolvedOnce", testMassDeleteResolvedOnce},
	{"MassDeleteResolvedConcurrently", testMassDeleteResolvedConcurrently},
	{"MassDeletesRefuseInvalid", testMassDeletesInvalid},
}

// newMassDelete is an open event of the fixture's space starting at start
// with items.
func (f *fixture) newMassDelete(start time.Time, nonce string, items ...string) storage.MassDelete {
	return storage.MassDelete{
		ID: storage.MassDeleteID(start, nonce), SpaceID: f.space.ID,
		User: user.ID, Client: user.ID + " app password 7", Label: "Albert Einstein's laptop",
		Files: int64(len(items)), Items: items, Start: start, End: start,
	}
}

func (f *fixture) openMassDelete(t *testing.T, e storage.MassDelete) {
	t.Helper()
	if err := f.s.OpenMassDelete(f.ctx, e); err != nil {
		t.Fatalf("OpenMassDelete: %v", err)
	}
}

func testMassDeleteRoundTrip(t *testing.T, f *fixture) {
	start := appPasswordStart()
	e := f.newMassDelete(start, "a1", "n1", "n2")
	f.openMassDelete(t, e)
	wantErr(t, "the same id again", f.s.OpenMassDelete(f.ctx, e), storage.ErrExists)

	got, err := f.s.ExtendMassDelete(f.ctx, f.space.ID, e.ID, []string{"n3"}, 1000, start.Add(time.Minute))
	if err != nil || got.Files != 1002 || !got.End.Equal(start.Add(time.Minute)) || got.State != storage.MassDeleteOpen {
		t.Fatalf("ExtendMassDelete = %+v, %v; want 1002 files ending a minute later", got, err)
	}
	// An extension never moves the end back.
	if got, err = f.s.ExtendMassDelete(f.ctx, f.space.ID, e.ID, nil, 0, start); err != nil || !got.End.Equal(start.Add(time.Minute)) {
		t.Fatalf("ExtendMassDelete back in time = %+v, %v", got, err)
	}

	full, err := f.s.MassDelete(f.ctx, f.space.ID, e.ID)
	if err != nil {
		t.Fatalf("MassDelete: %v", err)
	}
	slices.Sort(full.Items)
	if !slices.Equal(full.Items, []string{"n1", "n2", "n3"}) || full.User != e.User || full.Client != e.Client ||
		full.Label != e.Label || !full.Start.Equal(start) || full.Files != 1002 {
		t.Fatalf("MassDelete = %+v; want %+v with items n1 n2 n3", full, e)
	}
	list, err := f.s.MassDeletes(f.ctx, f.space.ID)
	if err != nil || len(list) != 1 || list[0].ID != e.ID || list[0].Items != nil || list[0].Files != 1002 {
		t.Fatalf("MassDeletes = %+v, %v; want the event without its items", list, err)
	}
	_, err = f.s.MassDelete(f.ctx, f.space.ID, storage.MassDeleteID(start, "b2"))
	wantErr(t, "an unknown event", err, storage.ErrNotFound)
	_, err = f.s.ExtendMassDelete(f.ctx, f.space.ID, storage.MassDeleteID(start, "b2"), nil, 1, start)
	wantErr(t, "extending an unknown event", err, storage.ErrNotFound)
}

func testMassDeleteItemsOnce(t *testing.T, f *fixture) {
	start := appPasswordStart()
	e := f.newMassDelete(start, "c3", "n1", "n1", "n2")
	f.openMassDelete(t, e)
	if _, err := f.s.ExtendMassDelete(f.ctx, f.space.ID, e.ID, []string{"n2", "n3", "n3"}, 2, start); err != nil {
		t.Fatalf("ExtendMassDelete: %v", err)
	}
	got, err := f.s.MassDelete(f.ctx, f.space.ID, e.ID)
	slices.Sort(got.Items)
	if err != nil || !slices.Equal(got.Items, []string{"n1", "n2", "n3"}) {
		t.Fatalf("MassDelete items = %v, %v; want n1 n2 n3 once each", got.Items, err)
	}
}

func testMassDeletesCapped(t *testing.T, f *fixture) {
	start := appPasswordStart()
	var ids []string
	for i := range storage.MaxMassDeletesPerSpace + 3 {
		e := f.newMassDelete(start.Add(time.Duration(i)*time.Second), fmt.Sprintf("%x", i+1), fmt.Sprint("n", i))
		f.openMassDelete(t, e)
		ids = append(ids, e.ID)
	}
	list, err := f.s.MassDeletes(f.ctx, f.space.ID)
	if err != nil || len(list) != storage.MaxMassDeletesPerSpace {
		t.Fatalf("MassDeletes = %d events, %v; want the newest %d", len(list), err, storage.MaxMassDeletesPerSpace)
	}
	if list[0].ID != ids[len(ids)-1] || list[len(list)-1].ID != ids[3] {
		t.Fatalf("MassDeletes from %s to %s; want newest first, from %s to %s", list[0].ID, list[len(list)-1].ID, ids[len(ids)-1], ids[3])
	}
	_, err = f.s.MassDelete(f.ctx, f.space.ID, ids[0])
	wantErr(t, "the oldest event beyond the cap", err, storage.ErrNotFound)
}

func testMassDeletesOfSpace(t *testing.T, f *fixture) {
	other := f.projectSpace(t)
	start := appPasswordStart()
	e := f.newMassDelete(start, "d4", "n1")
	f.openMassDelete(t, e)
	if list, err := other.s.MassDeletes(f.ctx, other.space.ID); err != nil || len(list) != 0 {
		t.Fatalf("MassDeletes of another space = %+v, %v; want none", list, err)
	}
	_, err := f.s.MassDelete(f.ctx, other.space.ID, e.ID)
	wantErr(t, "an event through another space", err, storage.ErrNotFound)
	_, err = f.s.ResolveMassDelete(f.ctx, other.space.ID, e.ID, storage.MassDeleteConfirmed, user.ID, start)
	wantErr(t, "resolving through another space", err, storage.ErrNotFound)
}

func testMassDeleteResolvedOnce(t *testing.T, f *fixture) {
	start := appPasswordStart()
	e := f.newMassDelete(start, "e5", "n1")
	f.openMassDelete(t, e)
	got, err := f.s.ResolveMassDelete(f.ctx, f.space.ID, e.ID, storage.MassDeleteRestored, "marie", start.Add(time.Hour))
	if err != nil || got.State != storage.MassDeleteRestored || got.ResolvedBy != "marie" || !got.Resolved.Equal(start.Add(time.Hour)) {
		t.Fatalf("ResolveMassDelete = %+v, %v; want restored by marie", got, err)
	}
	_, err = f.s.ResolveMassDelete(f.ctx, f.space.ID, e.ID, storage.MassDeleteConfirmed, "marie", start.Add(time.Hour))
	wantErr(t, "a second resolution", err, storage.ErrConflict)
	_, err = f.s.ExtendMassDelete(f.ctx, f.space.ID, e.ID, []string{"n2"}, 1, start.Add(2*time.Hour))
	wantErr(t, "extending a resolved event", err, storage.ErrConflict)
	list, err := f.s.MassDeletes(f.ctx, f.space.ID)
	if err != nil || len(list) != 1 || list[0].State != storage.MassDeleteRestored {
		t.Fatalf("MassDeletes = %+v, %v; want the restored event", list, err)
	}
}

func testMassDeleteResolvedConcurrently(t *testing.T, f *fixture) {
	start := appPasswordStart()
	e := f.newMassDelete(start, "f6", "n1")
	f.openMassDelete(t, e)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			state := storage.MassDeleteConfirmed
			if i%2 == 0 {
				state = storage.MassDeleteRestored
			}
			_, errs[i] = f.s.ResolveMassDelete(f.ctx, f.space.ID, e.ID, state, "marie", start)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			wantErr(t, "a losing resolution", err, storage.ErrConflict)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent resolutions won; want 1", won, n)
	}
}

func testMassDeletesInvalid(t *testing.T, f *fixture) {
	start := appPasswordStart()
	for name, change := range map[string]func(*storage.MassDelete){
		"malformed id":     func(e *storage.MassDelete) { e.ID = "not-an-id" },
		"no client":        func(e *storage.MassDelete) { e.Client = "" },
		"no user":          func(e *storage.MassDelete) { e.User = "" },
		"long label":       func(e *storage.MassDelete) { e.Label = string(make([]byte, storage.MaxMassDeleteLabel+1)) },
		"end before start": func(e *storage.MassDelete) { e.End = start.Add(-time.Second) },
		"resolved":         func(e *storage.MassDelete) { e.State = storage.MassDeleteConfirmed },
	} {
		e := f.newMassDelete(start, "aa", "n1")
		change(&e)
		wantErr(t, name, f.s.OpenMassDelete(f.ctx, e), storage.ErrInvalid)
	}
	if list, err := f.s.MassDeletes(f.ctx, f.space.ID); err != nil || len(list) != 0 {
		t.Fatalf("MassDeletes after refusals = %+v, %v; want none", list, err)
	}
	e := f.newMassDelete(start, "ab", "n1")
	f.openMassDelete(t, e)
	_, err := f.s.ResolveMassDelete(f.ctx, f.space.ID, e.ID, storage.MassDeleteOpen, "marie", start)
	wantErr(t, "resolving as open", err, storage.ErrInvalid)
	_, err = f.s.ExtendMassDelete(f.ctx, f.space.ID, e.ID, nil, -1, start)
	wantErr(t, "negative files", err, storage.ErrInvalid)
}
