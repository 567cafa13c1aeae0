package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// directoryTests are the conformance tests of storage.Directory: the users
// who signed in, found again by id, name, email or group.
var directoryTests = []conformanceTest{
	{"DirectoryRemember", testDirectoryRemember},
	{"DirectoryReplace", testDirectoryReplace},
	{"DirectoryKeepsWhatItIsGiven", testDirectoryKeepsWhatItIsGiven},
	{"DirectoryRefusals", testDirectoryRefusals},
	{"DirectorySearchUsers", testDirectorySearchUsers},
	{"DirectorySearchLimit", testDirectorySearchLimit},
	{"DirectorySearchGroups", testDirectorySearchGroups},
	{"DirectoryConcurrentWriters", testDirectoryConcurrentWriters},
}

// seenAt is a time every store keeps exactly (PostgreSQL keeps
// microseconds).
var seenAt = time.Date(2026, 11, 25, 10, 30, 0, 123_000, time.UTC)

// remember keeps e as NormalizeDirectoryEntry makes it, and returns that.
func (f *fixture) remember(t *testing.T, e storage.DirectoryEntry) storage.DirectoryEntry {
	t.Helper()
	e, err := storage.NormalizeDirectoryEntry(e, seenAt)
	if err != nil {
		t.Fatalf("NormalizeDirectoryEntry %s: %v", e.ID, err)
	}
	if err := f.s.RememberUser(f.ctx, e); err != nil {
		t.Fatalf("RememberUser %s: %v", e.ID, err)
	}
	return e
}

func sameEntry(a, b storage.DirectoryEntry) bool {
	return a.ID == b.ID && a.DisplayName == b.DisplayName && a.Email == b.Email &&
		slices.Equal(a.Groups, b.Groups) && a.Seen.Equal(b.Seen)
}

func entryIDs(entries []storage.DirectoryEntry) string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return strings.Join(ids, ",")
}

func testDirectoryRemember(t *testing.T, f *fixture) {
	if _, err := f.s.DirectoryUser(f.ctx, "marie"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("DirectoryUser of a user never seen: %v, want ErrNotFound", err)
	}
	want := f.remember(t, storage.DirectoryEntry{ID: "marie", DisplayName: "Marie Curie",
		Email: "marie@example.org", Groups: []string{"physics", "chemistry"}})
	got, err := f.s.DirectoryUser(f.ctx, "marie")
	if err != nil || !sameEntry(got, want) {
		t.Fatalf("DirectoryUser = %+v, %v; want %+v", got, err, want)
	}
	u, err := storage.UserWithGroups(f.ctx, f.s, "marie")
	if err != nil || !slices.Equal(u.Groups, []string{"chemistry", "physics"}) {
		t.Errorf("UserWithGroups = %+v, %v", u, err)
	}
	if _, err := f.s.DirectoryUser(f.ctx, "Marie"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("DirectoryUser of another case: %v, want ErrNotFound (ids are exact)", err)
	}
	none := f.remember(t, storage.DirectoryEntry{ID: "richard"})
	if got, err := f.s.DirectoryUser(f.ctx, "richard"); err != nil || !sameEntry(got, none) || got.Groups != nil && len(got.Groups) != 0 {
		t.Errorf("DirectoryUser without groups = %+v, %v", got, err)
	}
}

func testDirectoryReplace(t *testing.T, f *fixture) {
	f.remember(t, storage.DirectoryEntry{ID: "marie", DisplayName: "Marie Skłodowska",
		Email: "ms@example.org", Groups: []string{"chemistry", "physics"}})
	want := f.remember(t, storage.DirectoryEntry{ID: "marie", DisplayName: "Marie Curie",
		Email: "marie@example.org", Groups: []string{"nobel", "physics"}})
	got, err := f.s.DirectoryUser(f.ctx, "marie")
	if err != nil || !sameEntry(got, want) {
		t.Fatalf("DirectoryUser after a replace = %+v, %v; want %+v", got, err, want)
	}
	if found, err := f.s.SearchUsers(f.ctx, "skłodowska", 10); err != nil || len(found) != 0 {
		t.Errorf("the old name still finds %q (%v)", entryIDs(found), err)
	}
	groups, err := f.s.SearchGroups(f.ctx, "", 10)
	if err != nil || strings.Join(groups, ",") != "nobel,physics" {
		t.Errorf("groups after a replace = %q, %v; the dropped group must go", groups, err)
	}
}

// testDirectoryKeepsWhatItIsGiven: normalizing is the caller's
// (NormalizeDirectoryEntry); a store keeps an entry as given.
func testDirectoryKeepsWhatItIsGiven(t *testing.T, f *fixture) {
	given := storage.DirectoryEntry{ID: "marie", DisplayName: "  Marie  ", Email: "MARIE@Example.org",
		Groups: []string{"physics", "chemistry", "physics"}, Seen: seenAt}
	if err := f.s.RememberUser(f.ctx, given); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.DirectoryUser(f.ctx, "marie")
	if err != nil || !sameEntry(got, given) {
		t.Fatalf("DirectoryUser = %+v, %v; want %+v as given", got, err, given)
	}
	if groups, err := f.s.SearchGroups(f.ctx, "", 10); err != nil || strings.Join(groups, ",") != "chemistry,physics" {
		t.Errorf("SearchGroups = %q, %v; want each group once, sorted", groups, err)
	}
	unseen := storage.DirectoryEntry{ID: "richard"}
	if err := f.s.RememberUser(f.ctx, unseen); err != nil {
		t.Fatal(err)
	}
	if got, err := f.s.DirectoryUser(f.ctx, "richard"); err != nil || !got.Seen.IsZero() {
		t.Errorf("the zero Seen came back as %v (%v)", got.Seen, err)
	}
}

func testDirectoryRefusals(t *testing.T, f *fixture) {
	for _, e := range []storage.DirectoryEntry{
		{ID: ""},
		{ID: "a/b"},
		{ID: "marie", DisplayName: "Ma\x00rie"},
		{ID: "marie", Groups: []string{"phys\x00ics"}},
	} {
		if err := f.s.RememberUser(f.ctx, e); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("RememberUser %+q = %v, want ErrInvalid", e, err)
		}
	}
	if found, err := f.s.SearchUsers(f.ctx, "", 10); err != nil || len(found) != 0 {
		t.Errorf("a refused entry was kept: %q (%v)", entryIDs(found), err)
	}
}

func testDirectorySearchUsers(t *testing.T, f *fixture) {
	for _, e := range []storage.DirectoryEntry{
		{ID: "einstein", DisplayName: "Albert Einstein", Email: "einstein@example.org"},
		{ID: "marie", DisplayName: "Marie Curie", Email: "curie@Example.ORG"},
		{ID: "richard", DisplayName: "Richard Feynman", Email: "rf@caltech.example"},
		{ID: "émile", DisplayName: "Émile Borel", Email: "borel@example.org"},
		{ID: "50%_off", DisplayName: "Pattern Characters"},
	} {
		f.remember(t, e)
	}
	tests := []struct{ query, want string }{
		{"", "50%_off,einstein,marie,richard,émile"},
		{"MARIE", "marie"},                      // id, another case
		{"feyn", "richard"},                     // display name
		{"example.org", "einstein,marie,émile"}, // email, another case
		{"ÉMILE", "émile"},                      // beyond ASCII
		{"bert", "einstein"},                    // inside the name
		{"%", "50%_off"},                        // no pattern
		{"_", "50%_off"},
		{"nobody", ""},
	}
	for _, tc := range tests {
		found, err := f.s.SearchUsers(f.ctx, tc.query, storage.MaxDirectoryResults)
		if err != nil || entryIDs(found) != tc.want {
			t.Errorf("SearchUsers %q = %q, %v; want %q", tc.query, entryIDs(found), err, tc.want)
		}
		for _, e := range found {
			if !storage.MatchesDirectoryQuery(e, tc.query) {
				t.Errorf("SearchUsers %q found %s, which does not match", tc.query, e.ID)
			}
		}
	}
	found, err := f.s.SearchUsers(f.ctx, "curie", 1)
	if err != nil || len(found) != 1 || found[0].Email != "curie@Example.ORG" || found[0].DisplayName != "Marie Curie" {
		t.Errorf("SearchUsers returns the entry as kept: %+v, %v", found, err)
	}
}

func testDirectorySearchLimit(t *testing.T, f *fixture) {
	n := storage.MaxDirectoryResults + 10
	for i := range n {
		f.remember(t, storage.DirectoryEntry{ID: fmt.Sprintf("user%03d", i), Groups: []string{fmt.Sprintf("group%03d", i)}})
	}
	tests := []struct{ limit, want int }{
		{3, 3}, {0, 1}, {-5, 1}, {1000, storage.MaxDirectoryResults},
	}
	for _, tc := range tests {
		found, err := f.s.SearchUsers(f.ctx, "user", tc.limit)
		if err != nil || len(found) != tc.want {
			t.Errorf("SearchUsers with limit %d: %d entries, %v; want %d", tc.limit, len(found), err, tc.want)
			continue
		}
		if found[0].ID != "user000" || !slices.IsSortedFunc(found, func(a, b storage.DirectoryEntry) int { return strings.Compare(a.ID, b.ID) }) {
			t.Errorf("SearchUsers with limit %d: not the first ones by id: %q", tc.limit, entryIDs(found))
		}
		groups, err := f.s.SearchGroups(f.ctx, "GROUP", tc.limit)
		if err != nil || len(groups) != tc.want || groups[0] != "group000" || !slices.IsSorted(groups) {
			t.Errorf("SearchGroups with limit %d: %d groups, %v; want the first %d", tc.limit, len(groups), err, tc.want)
		}
	}
}

func testDirectorySearchGroups(t *testing.T, f *fixture) {
	f.remember(t, storage.DirectoryEntry{ID: "marie", Groups: []string{"physics", "Chemistry", "nobel"}})
	f.remember(t, storage.DirectoryEntry{ID: "richard", Groups: []string{"physics", "caltech", "nobel"}})
	f.remember(t, storage.DirectoryEntry{ID: "einstein", Groups: []string{"physics", "physics-b", "Émigrés"}})
	tests := []struct{ query, want string }{
		{"", "Chemistry,caltech,nobel,physics,physics-b,Émigrés"},
		{"PHYS", "physics,physics-b"},
		{"chem", "Chemistry"},
		{"émigr", "Émigrés"},
		{"no such", ""},
	}
	for _, tc := range tests {
		groups, err := f.s.SearchGroups(f.ctx, tc.query, storage.MaxDirectoryResults)
		if err != nil || strings.Join(groups, ",") != tc.want {
			t.Errorf("SearchGroups %q = %q, %v; want %q", tc.query, groups, err, tc.want)
		}
	}
}

// testDirectoryConcurrentWriters: writers of the same users at once leave
// each user one whole entry of one writer, and the group index agrees.
func testDirectoryConcurrentWriters(t *testing.T, f *fixture) {
	const writers, rounds = 16, 5
	concurrently(t, writers, func(w int) error {
		for r := range rounds {
			e, err := storage.NormalizeDirectoryEntry(storage.DirectoryEntry{
				ID:          fmt.Sprintf("user%d", (w+r)%4),
				DisplayName: fmt.Sprintf("writer %d", w),
				Groups:      []string{fmt.Sprintf("team%d", w), "all"},
			}, seenAt)
			if err == nil {
				err = f.s.RememberUser(f.ctx, e)
			}
			if err != nil {
				return fmt.Errorf("RememberUser: %w", err)
			}
		}
		return nil
	})
	users, err := f.s.SearchUsers(f.ctx, "", storage.MaxDirectoryResults)
	if err != nil || entryIDs(users) != "user0,user1,user2,user3" {
		t.Fatalf("SearchUsers = %q, %v", entryIDs(users), err)
	}
	want := []string{"all"}
	for _, e := range users {
		var w int
		if _, err := fmt.Sscanf(e.DisplayName, "writer %d", &w); err != nil || !slices.Equal(e.Groups, []string{"all", fmt.Sprintf("team%d", w)}) {
			t.Errorf("entry %s mixes writers: %+v", e.ID, e)
		}
		want = append(want, fmt.Sprintf("team%d", w))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	groups, err := f.s.SearchGroups(f.ctx, "", storage.MaxDirectoryResults)
	if err != nil || !slices.Equal(groups, want) {
		t.Errorf("SearchGroups = %q, %v; want the groups of the entries kept, %q", groups, err, want)
	}
}
