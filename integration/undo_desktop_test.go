package integration

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testDesktopUndo has the real ownCloud and Nextcloud command-line clients
// delete files and a folder locally and overwrite files locally (one of
// them in several passes), and sync: then every deleted file is in the
// trash, listed (inside the deleted folder too) and restorable to its
// place with MOVE, byte for byte, and every overwritten file's earlier
// contents are its versions, each downloadable byte for byte and
// restorable with COPY. A file the client deletes and then creates again
// at the same path keeps its history. After the restores a sync brings
// the local folder back to the tree it started with. It runs on every
// deployment, as TestDesktopClients does.
func testDesktopUndo(t *testing.T) {
	t.Parallel()
	onEachDesktopClient(t, desktopUndoScenario)
}

// The local tree of TestDesktopUndo: what the client deletes, overwrites,
// and deletes then creates again. big.bin is larger than the clients'
// chunk size, so its replacement is a TUS or chunking NG upload.
const (
	undoDeleted     = "delete-me.txt"
	undoGoneFolder  = "gone folder"
	undoOnce        = "once.txt"
	undoMany        = "many.txt"
	undoBig         = "big.bin"
	undoRecreated   = "recreate ✓.txt"
	undoManyPasses  = 3
	undoBigFileSize = 12 << 20
)

func desktopUndoTree() map[string][]byte {
	big := make([]byte, undoBigFileSize)
	rand.New(rand.NewSource(19)).Read(big)
	return map[string][]byte{
		"keep.txt":                      []byte("left alone\n"),
		undoDeleted:                     []byte("deleted on the desktop\n"),
		undoGoneFolder + "/a.txt":       []byte("in a folder deleted on the desktop\n"),
		undoGoneFolder + "/sub/b ✓.txt": []byte("deeper in the deleted folder\n"),
		undoOnce:                        []byte("overwritten once: the first content\n"),
		undoMany:                        manyContent(0),
		undoBig:                         big,
		undoRecreated:                   []byte("deleted, then created again: the first content\n"),
	}
}

// manyContent is the content of undoMany after pass i, a different size
// each time.
func manyContent(i int) []byte {
	return []byte(fmt.Sprintf("pass %d\n%s\n", i, strings.Repeat("+", i*10)))
}

func desktopUndoScenario(t *testing.T, d *desktopSession) {
	tree := desktopUndoTree()
	local := filepath.Join(t.TempDir(), "local")
	writeDesktopTree(t, local, tree)
	d.syncAndCheck("upload", local, undoBig)

	u := undoSpace{c: d.dav, ref: d.dav.prop("/webdav/", ocNS, "spaceid")}
	ids := map[string]string{}
	for _, name := range []string{undoOnce, undoMany, undoBig, undoRecreated} {
		ids[name] = u.fileID(d.spaceName(name))
	}

	// 1. Deletions and overwrites go up in one pass, then undoMany
	// changes in more passes.
	removeLocal(t, local, undoDeleted)
	removeLocal(t, local, undoGoneFolder)
	changeLocalFile(t, local, undoOnce, []byte("overwritten once: the second content, longer\n"))
	big := bytes.Clone(tree[undoBig])
	copy(big, "overwritten on the desktop")
	changeLocalFile(t, local, undoBig, big)
	for i := 1; i <= undoManyPasses; i++ {
		changeLocalFile(t, local, undoMany, manyContent(i))
		if i == 1 {
			d.syncAndCheck("delete and overwrite", local, undoBig)
			continue
		}
		d.syncAndCheck(fmt.Sprintf("overwrite pass %d", i), local)
	}

	// 2. A file deleted and created again at the same path.
	removeLocal(t, local, undoRecreated)
	d.syncAndCheck("delete to recreate", local)
	changeLocalFile(t, local, undoRecreated, []byte("created again\n"))
	d.syncAndCheck("recreate", local)
	if got := u.fileID(d.spaceName(undoRecreated)); got != ids[undoRecreated] {
		t.Errorf("the file created again at %s has id %s, want its old id %s back", undoRecreated, got, ids[undoRecreated])
		ids[undoRecreated] = got
	}

	// 3. Every deleted file is in the trash and comes back.
	d.restoreDeleted(u, tree)

	// 4. Every replaced content is a version and comes back.
	for name, earlier := range map[string][][]byte{
		undoOnce:      {tree[undoOnce]},
		undoBig:       {tree[undoBig]},
		undoMany:      {manyContent(2), manyContent(1), manyContent(0)},
		undoRecreated: {tree[undoRecreated]},
	} {
		d.restoreVersions(u, name, ids[name], earlier)
	}

	// 5. The client brings the restored tree down: the local folder is
	// what it was at the start.
	d.syncAndCheck("restored", local)
	if diffs := diffTrees(treeOfContents(tree), readLocalTree(t, local), "first tree", "local folder"); len(diffs) > 0 {
		t.Errorf("after the restores the local folder is not the first tree:\n%s", strings.Join(diffs, "\n"))
	}
	d.syncExpectingNothing("settled", local)
}

// spaceName is the path in the personal space of name in the synced
// folder.
func (d *desktopSession) spaceName(name string) string {
	return path.Join(d.client.folder, name)
}

// restoreDeleted finds every file the client deleted in the trash, listed
// as an item or inside a deleted folder, and restores it to its place:
// one file from inside a deleted folder on its own, then the rest of the
// folder, and the deleted file. Each comes back byte for byte.
func (d *desktopSession) restoreDeleted(u undoSpace, tree map[string][]byte) {
	t := d.t
	t.Helper()
	items := u.trash()
	folder := d.findDeleted(items, undoGoneFolder)
	if !folder.folder {
		t.Fatalf("the deleted folder's trash item is not a folder: %+v", folder)
	}
	if got := u.trashChildren(folder.key); !slices.Equal(got, []string{"a.txt", "sub/"}) {
		t.Fatalf("Depth 1 on the deleted folder lists %q", got)
	}
	if got := u.trashChildren(folder.key, "sub"); !slices.Equal(got, []string{"b ✓.txt"}) {
		t.Fatalf("Depth 1 on the deleted folder's sub lists %q", got)
	}
	// One file from inside, on its own, to a place of its own; then the
	// folder, and the file back into it.
	single := d.spaceName("restored b.txt")
	u.restore(http.StatusCreated, folder.key+"/sub/b ✓.txt", single)
	d.wantServerContent(u, single, tree[undoGoneFolder+"/sub/b ✓.txt"])
	u.restore(http.StatusCreated, folder.key, d.spaceName(undoGoneFolder))
	d.wantServerContent(u, d.spaceName(undoGoneFolder+"/a.txt"), tree[undoGoneFolder+"/a.txt"])
	u.c.expect(http.StatusCreated, "MOVE", u.path(single), "", "Destination", u.url(d.spaceName(undoGoneFolder+"/sub/b ✓.txt")))

	file := d.findDeleted(items, undoDeleted)
	if file.folder || file.name != undoDeleted || file.length != fmt.Sprint(len(tree[undoDeleted])) {
		t.Fatalf("the deleted file's trash item: %+v", file)
	}
	u.restore(http.StatusCreated, file.key, d.spaceName(undoDeleted))
	for name, data := range tree {
		if strings.HasPrefix(name, undoGoneFolder+"/") || name == undoDeleted {
			d.wantServerContent(u, d.spaceName(name), data)
		}
	}
}

// findDeleted is the trash item of name in the synced folder.
func (d *desktopSession) findDeleted(items []trashItem, name string) trashItem {
	d.t.Helper()
	location := d.spaceName(name)
	for _, it := range items {
		if it.location == location {
			return it
		}
	}
	d.t.Fatalf("%s deleted %s, which is not in the trash: %+v", d.client.program, location, items)
	return trashItem{}
}

// restoreVersions checks that the versions of file id (name in the synced
// folder) hold the earlier contents, newest first among others, each byte
// for byte, and restores each with COPY, the oldest last: GET then gives
// it, and the content it replaced is the newest version.
func (d *desktopSession) restoreVersions(u undoSpace, name, id string, earlier [][]byte) {
	t := d.t
	t.Helper()
	for i, want := range earlier {
		// A restore takes the version out: look the rest up again.
		keys := d.versionsHolding(u, name, id, earlier[i:])
		current := d.serverContent(u, d.spaceName(name))
		u.restoreVersion(http.StatusNoContent, id, keys[0], d.spaceName(name))
		d.wantServerContent(u, d.spaceName(name), want)
		vs := u.versions(id)
		if len(vs) == 0 {
			t.Fatalf("%s: no versions after restoring one", name)
		}
		if newest := u.versionContents(id, vs[:1]); newest[0] != string(current) {
			t.Fatalf("%s: the newest version after a restore is not the content it replaced", name)
		}
	}
}

// versionsHolding finds the versions of file id that hold each of earlier,
// in that order among the versions (newest first), and returns their
// keys.
func (d *desktopSession) versionsHolding(u undoSpace, name, id string, earlier [][]byte) []string {
	d.t.Helper()
	vs := u.versions(id)
	contents := u.versionContents(id, vs)
	var keys []string
	next := 0
	for _, want := range earlier {
		found := false
		for ; next < len(vs); next++ {
			if contents[next] == string(want) {
				keys = append(keys, vs[next].key)
				found = true
				next++
				break
			}
		}
		if !found {
			d.t.Fatalf("%s: %d versions, and none after the first %d holds the earlier content of %d bytes (%q…)",
				name, len(vs), len(keys), len(want), want[:min(len(want), 20)])
		}
	}
	return keys
}

func (d *desktopSession) serverContent(u undoSpace, name string) []byte {
	d.t.Helper()
	resp, body := u.c.send(http.MethodGet, u.path(name), nil, nil)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %d", name, resp.StatusCode)
	}
	return body
}

func (d *desktopSession) wantServerContent(u undoSpace, name string, want []byte) {
	d.t.Helper()
	if same, why := sameContent(want, d.serverContent(u, name)); !same {
		d.t.Fatalf("GET %s after the restore is not what was written: %s", name, why)
	}
}

// treeOfContents is tree (path to content) as a synced folder reads,
// folders included.
func treeOfContents(tree map[string][]byte) syncedTree {
	out := syncedTree{}
	for name, data := range tree {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			out[dir] = treeEntry{dir: true}
		}
		out[name] = treeEntry{size: len(data), sum: sha256.Sum256(data)}
	}
	return out
}
