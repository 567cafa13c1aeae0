package storetest

import (
	"slices"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/davspaces/davspaces/storage"
)

// searchTests are the conformance tests of storage.Searcher.
var searchTests = []conformanceTest{
	{"SearchNames", testSearchNames},
	{"SearchFollowsMovesAndRenames", testSearchFollowsMoves},
	{"SearchLeavesTrashOut", testSearchLeavesTrashOut},
	{"SearchPages", testSearchPages},
	{"SearchFavorites", testSearchFavorites},
	{"SearchRefusals", testSearchRefusals},
}

// search returns the names SearchNames finds below folder under, in order.
func (f *fixture) search(t *testing.T, under, pattern string) []string {
	t.Helper()
	found, err := f.s.SearchNames(f.ctx, storage.SearchScope{SpaceID: f.space.ID, Under: under}, pattern)
	if err != nil {
		t.Fatalf("SearchNames %q: %v", pattern, err)
	}
	if found.Total != len(found.Nodes) {
		t.Fatalf("SearchNames %q: total %d for %d nodes on the only page", pattern, found.Total, len(found.Nodes))
	}
	return nodeNames(found.Nodes)
}

func wantFound(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s found %q, want %q", what, got, want)
	}
}

// Names match by a substring in any case, with spaces and in any script,
// whatever the Unicode form they were written in, at any depth, ordered
// by their folded names; the folder searched is not among its results.
func testSearchNames(t *testing.T, f *fixture) {
	docs := f.mkdir(t, f.root(), "Docs")
	deep := f.mkdir(t, f.mkdir(t, docs.ID, "2024").ID, "Q1 Reports")
	f.put(t, f.root(), "Annual Report 2024.pdf", "a")
	f.put(t, deep.ID, "report q1.TXT", "b")
	f.put(t, docs.ID, "Ärger über Straße.md", "c")
	f.put(t, docs.ID, "ΣΟΦΙΑ.txt", "d")
	f.put(t, docs.ID, norm.NFD.String("café menu.txt"), "e")
	f.put(t, f.root(), "notes.txt", "f")

	wantFound(t, "report", f.search(t, "", "report"), "Annual Report 2024.pdf", "Q1 Reports", "report q1.TXT")
	wantFound(t, "REPORT below Docs", f.search(t, docs.ID, "REPORT"), "Q1 Reports", "report q1.TXT")
	wantFound(t, "a space in the pattern", f.search(t, "", "t 2024"), "Annual Report 2024.pdf")
	wantFound(t, "ärger über", f.search(t, "", "ärger ÜBER"), "Ärger über Straße.md")
	wantFound(t, "σοφ", f.search(t, "", "σοφ"), "ΣΟΦΙΑ.txt")
	wantFound(t, "composed café", f.search(t, "", norm.NFC.String("CAFÉ")), norm.NFD.String("café menu.txt"))
	wantFound(t, "docs", f.search(t, "", "docs"), "Docs")
	wantFound(t, "docs below Docs", f.search(t, docs.ID, "docs"))
	wantFound(t, "nothing", f.search(t, "", "no such name"))
	wantFound(t, ".txt below the deep folder", f.search(t, deep.ID, ".txt"), "report q1.TXT")
}

// A moved folder's descendants are found below its new place and no
// longer below its old one; a renamed node by its new name only.
func testSearchFollowsMoves(t *testing.T, f *fixture) {
	from := f.mkdir(t, f.root(), "from")
	to := f.mkdir(t, f.root(), "to")
	moving := f.mkdir(t, from.ID, "moving")
	f.put(t, f.mkdir(t, moving.ID, "inner").ID, "needle.txt", "x")
	file := f.put(t, f.root(), "old name.txt", "y")

	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: moving.ID, NewParentID: to.ID, NewName: "moved"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "new name.txt"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	wantFound(t, "needle below to", f.search(t, to.ID, "needle"), "needle.txt")
	wantFound(t, "needle below from", f.search(t, from.ID, "needle"))
	wantFound(t, "moving", f.search(t, "", "moving"))
	wantFound(t, "moved", f.search(t, "", "moved"), "moved")
	wantFound(t, "old name", f.search(t, "", "old name"))
	wantFound(t, "new name", f.search(t, "", "new name"), "new name.txt")
}

// What is deleted is not found, nor is anything below a deleted folder;
// restored, it is found again; purged, it is gone for good.
func testSearchLeavesTrashOut(t *testing.T, f *fixture) {
	folder := f.mkdir(t, f.root(), "folder")
	f.put(t, f.mkdir(t, folder.ID, "sub").ID, "needle deep.txt", "x")
	file := f.put(t, f.root(), "needle top.txt", "y")

	f.remove(t, folder.ID)
	f.remove(t, file.ID)
	wantFound(t, "needle after the removes", f.search(t, "", "needle"))
	wantFound(t, "sub after the removes", f.search(t, "", "sub"))

	it := f.trashed(t, folder.ID)
	if _, _, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, storage.Transfer{NodeID: folder.ID, NewParentID: f.root(), NewName: "back"}); err != nil {
		t.Fatalf("RestoreTrash: %v", err)
	}
	wantFound(t, "needle after the restore", f.search(t, "", "needle"), "needle deep.txt")
	wantFound(t, "back", f.search(t, "", "back"), "back")

	f.remove(t, folder.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	wantFound(t, "needle after emptying the trash", f.search(t, "", "needle"))
}

// Limit and Offset page through the matches, each page telling the total.
func testSearchPages(t *testing.T, f *fixture) {
	for _, name := range []string{"page 3", "Page 1", "PAGE 5", "page 2", "Page 4", "other"} {
		f.put(t, f.root(), name, "x")
	}
	for _, tc := range []struct {
		limit, offset int
		want          []string
	}{
		{2, 0, []string{"Page 1", "page 2"}},
		{2, 2, []string{"page 3", "Page 4"}},
		{2, 4, []string{"PAGE 5"}},
		{2, 5, nil},
		{0, 1, []string{"page 2", "page 3", "Page 4", "PAGE 5"}},
	} {
		scope := storage.SearchScope{SpaceID: f.space.ID, Limit: tc.limit, Offset: tc.offset}
		found, err := f.s.SearchNames(f.ctx, scope, "page")
		if err != nil {
			t.Fatalf("SearchNames %+v: %v", scope, err)
		}
		if found.Total != 5 {
			t.Fatalf("SearchNames %+v: total %d, want 5", scope, found.Total)
		}
		wantFound(t, "the page", nodeNames(found.Nodes), tc.want...)
	}
}

// A user's favourites are found below the folder searched; another user's
// and unmarked ones are not, nor deleted ones.
func testSearchFavorites(t *testing.T, f *fixture) {
	sub := f.mkdir(t, f.root(), "sub")
	a := f.put(t, sub.ID, "b.txt", "x")
	b := f.put(t, f.root(), "A.txt", "y")
	other := f.put(t, f.root(), "other's.txt", "z")
	unmarked := f.put(t, f.root(), "unmarked.txt", "z")
	gone := f.put(t, f.root(), "gone.txt", "z")
	fav := func(user, value string) storage.PropPatch {
		return set(prop(storage.FavoriteProp.Space, storage.FavoriteProp.Local, user, value))
	}
	f.patch(t, a.ID, fav(user.ID, "1"))
	f.patch(t, b.ID, fav(user.ID, "1"))
	f.patch(t, sub.ID, fav(user.ID, "1"))
	f.patch(t, other.ID, fav("marie", "1"))
	f.patch(t, unmarked.ID, fav(user.ID, "0"))
	f.patch(t, gone.ID, fav(user.ID, "1"))
	f.remove(t, gone.ID)

	favorites := func(under string, limit, offset int) storage.Found {
		t.Helper()
		found, err := f.s.SearchFavorites(f.ctx, storage.SearchScope{SpaceID: f.space.ID, Under: under, Limit: limit, Offset: offset}, user.ID)
		if err != nil {
			t.Fatalf("SearchFavorites: %v", err)
		}
		return found
	}
	wantFound(t, "favourites", nodeNames(favorites("", 0, 0).Nodes), "A.txt", "b.txt", "sub")
	wantFound(t, "favourites below sub", nodeNames(favorites(sub.ID, 0, 0).Nodes), "b.txt")
	if page := favorites("", 1, 1); page.Total != 3 {
		t.Fatalf("favourites page total %d, want 3", page.Total)
	} else {
		wantFound(t, "the second favourite", nodeNames(page.Nodes), "b.txt")
	}
}

// A page beyond the cap, a negative one, a folder of another space and a
// file to search below are refused.
func testSearchRefusals(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "file", "x")
	s := f.s
	for _, tc := range []struct {
		scope storage.SearchScope
		want  error
	}{
		{storage.SearchScope{SpaceID: f.space.ID, Limit: storage.MaxSearchResults + 1}, storage.ErrInvalid},
		{storage.SearchScope{SpaceID: f.space.ID, Limit: -1}, storage.ErrInvalid},
		{storage.SearchScope{SpaceID: f.space.ID, Offset: -1}, storage.ErrInvalid},
		{storage.SearchScope{SpaceID: f.space.ID, Under: "no-such-node"}, storage.ErrNotFound},
		{storage.SearchScope{SpaceID: "no-such-space"}, storage.ErrNotFound},
		{storage.SearchScope{SpaceID: f.space.ID, Under: file.ID}, storage.ErrConflict},
	} {
		_, err := s.SearchNames(f.ctx, tc.scope, "x")
		wantErr(t, "SearchNames", err, tc.want)
		_, err = s.SearchFavorites(f.ctx, tc.scope, user.ID)
		wantErr(t, "SearchFavorites", err, tc.want)
	}
}
