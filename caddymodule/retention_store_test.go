package caddymodule

import (
	"context"
	"net/http"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestRetentionReachesStore: the settings reach the store. A DELETE keeps
// the file in the trash of a space that keeps one and destroys it in a
// space whose trash is off; a replacement keeps the old content as a
// version unless versions are off for the space.
func TestRetentionReachesStore(t *testing.T) {
	root := t.TempDir()
	d := &DAVSpaces{Root: root, Spaces: []ProjectSpace{
		{ID: "keeps", Name: "Keeps", Managers: []string{"einstein"}},
		{ID: "notrash", Name: "No trash", Managers: []string{"einstein"}, TrashRetention: durationOf(0)},
		{ID: "noversions", Name: "No versions", Managers: []string{"einstein"}, Versions: &VersionsRetention{Off: true}},
	}}
	mustProvision(t, d)
	store := pooledStoreOf(t, root)
	ctx := context.Background()
	for _, tc := range []struct {
		space           string
		trash, versions int
	}{
		{"keeps", 1, 1},
		{"notrash", 0, 1},
		{"noversions", 1, 0},
	} {
		target := "/dav/spaces/" + store.StorageID() + "$" + tc.space + "/f.txt"
		for i, want := range []int{http.StatusCreated, http.StatusNoContent} {
			put := request{method: http.MethodPut, target: target, body: string(rune('a' + i)), user: "einstein"}
			if rec := serve(t, d, put); rec.Code != want {
				t.Fatalf("%s: PUT %d: %d %s", tc.space, i, rec.Code, rec.Body)
			}
		}
		f, err := store.Child(ctx, tc.space, tc.space, "f.txt")
		if err != nil {
			t.Fatal(err)
		}
		versions, err := store.FileVersions(ctx, tc.space, f.ID)
		if err != nil || len(versions) != tc.versions {
			t.Errorf("%s: %d versions (%v), want %d", tc.space, len(versions), err, tc.versions)
		}
		if rec := serve(t, d, request{method: http.MethodDelete, target: target, user: "einstein"}); rec.Code != http.StatusNoContent {
			t.Fatalf("%s: DELETE: %d %s", tc.space, rec.Code, rec.Body)
		}
		items, err := storage.AllTrashItems(ctx, store, tc.space)
		if err != nil || len(items) != tc.trash {
			t.Errorf("%s: %d trash items (%v), want %d", tc.space, len(items), err, tc.trash)
		}
	}
}
