package boltstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// A database of layout 2, whose node and version records hold their
// space, opens under layout 3 without a record rewritten: every node,
// listing, property, trash item, version and share reads back, every file
// with its SHA1, and check finds nothing. A folder of such records then
// goes to the trash and back writing as much as a fresh one.
func TestMigrateFromLayout2(t *testing.T) {
	f := &fixture{clk: newClock(), dir: t.TempDir()}
	f.s = openMigrated(t, f)
	sp, err := f.s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	f.space = sp
	big := f.mkdir(t, f.root(), "big")
	var files []storage.Node
	for part := range 20 {
		folder := f.mkdir(t, f.mkdir(t, big.ID, fmt.Sprintf("part-%02d", part)).ID, "sub")
		for i := range 100 {
			files = append(files, f.put(t, folder.ID, fmt.Sprintf("file-%04d.txt", part*100+i), migratedContent(part*100+i)))
		}
	}
	before := f.layout2World(t, files)
	trashed := f.mkdir(t, f.root(), "trashed")
	gone := f.put(t, f.mkdir(t, trashed.ID, "inner").ID, "gone.txt", "in the trash, below a folder")
	f.remove(t, trashed.ID)
	if _, _, err := f.commit(files[0].ParentID, files[0].Name, "a newer content", storage.Commit{NodeID: files[0].ID}); err != nil {
		t.Fatal(err)
	}
	link, err := f.s.CreateShare(ctx, storage.Share{Kind: storage.ShareLink, SpaceID: f.space.ID, NodeID: files[3].ID, Creator: "einstein", Role: storage.ShareViewer})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.PatchProps(ctx, f.space.ID, files[5].ID, []storage.PropPatch{set(prop("urn:x", "color", "", "red"))}); err != nil {
		t.Fatal(err)
	}
	want := f.layout2World(t, files)
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteAsLayout2(t, filepath.Join(f.dir, dbFile))

	f.s = openMigrated(t, f)
	if got := f.layout2World(t, files); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the migration:\n%+v\nwant\n%+v", got, want)
	}
	if reflect.DeepEqual(before, want) {
		t.Fatal("the trash, the version, the share and the property changed nothing")
	}
	f.s.view(func(tx *txn) error {
		if got := string(tx.tx.Bucket(bucketMeta).Get(keyLayout)); got != strconv.Itoa(layoutVersion) {
			t.Errorf("layout %q, want %d", got, layoutVersion)
		}
		k := tx.nodes().Get([]byte(files[1].ID))
		if v := tx.children().Get(k); len(v) == 0 || v[0] != nodeFormatWithSpace {
			t.Errorf("the record of %s was rewritten: format %v", files[1].Name, v[:1])
		}
		return nil
	})
	for _, n := range files[1:] {
		if sum := sha1.Sum([]byte(f.read(t, n.ID))); hex.EncodeToString(sum[:]) != n.Checksums.SHA1 {
			t.Fatalf("%s reads back with SHA1 %x, was %s", n.Name, sum, n.Checksums.SHA1)
		}
	}
	if _, err := f.s.Node(ctx, f.space.ID, gone.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Node of a file in the trash = %v, want not found", err)
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{}); len(found) != 0 {
		t.Fatalf("check after the migration found %v", found)
	}

	// big's records below it are of format 2 and say it is in the live space.
	writes := f.s.RecordsWritten()
	f.remove(t, big.ID)
	if got := f.s.RecordsWritten() - writes; got > 32 {
		t.Fatalf("deleting the migrated folder wrote %d records", got)
	}
	for _, id := range []string{files[1].ID, files[1].ParentID} {
		if _, err := f.s.Node(ctx, f.space.ID, id); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Node %s below the trashed folder = %v, want not found", id, err)
		}
	}
	if _, err := f.s.ItemShares(ctx, f.space.ID, link.NodeID); err != nil {
		t.Fatal(err)
	}
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Node.ID == big.ID {
			if _, _, err := f.s.RestoreTrash(ctx, f.space.ID, it.Key, storage.Transfer{NodeID: big.ID, NewParentID: f.root(), NewName: "big"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := f.s.Node(ctx, f.space.ID, files[1].ID); err != nil || n.SpaceID != f.space.ID {
		t.Fatalf("Node after the restore = %+v, %v", n, err)
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{}); len(found) != 0 {
		t.Fatalf("check after a delete and a restore found %v", found)
	}
}

func openMigrated(t *testing.T, f *fixture) *Store {
	t.Helper()
	s, err := Open(f.dir, Options{Now: f.clk.Now, NoSync: true, InlineLimit: 16})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// migratedContent is the content of file i: every other one too long to
// be kept inline.
func migratedContent(i int) string {
	if i%2 == 0 {
		return strconv.Itoa(i)
	}
	return strings.Repeat("content of file "+strconv.Itoa(i)+" ", 3)
}

// layout2World is what a client sees of the fixture's space: its tree
// with properties and contents, its trash, the versions of files[0] and
// the shares.
type layout2World struct {
	Tree     spaceDump
	Trash    []storage.TrashItem
	Versions []storage.Version
	Shares   []storage.Share
}

func (f *fixture) layout2World(t *testing.T, files []storage.Node) layout2World {
	t.Helper()
	var w layout2World
	var err error
	w.Tree = f.dumpSpaces(t, []string{f.space.ID})
	if w.Trash, err = storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil {
		t.Fatal(err)
	}
	if w.Versions, err = f.s.FileVersions(ctx, f.space.ID, files[0].ID); err != nil {
		t.Fatal(err)
	}
	if w.Shares, err = f.s.ItemShares(ctx, f.space.ID, ""); err != nil {
		t.Fatal(err)
	}
	return w
}

func (f *fixture) remove(t *testing.T, id string) {
	t.Helper()
	if err := f.s.Remove(ctx, f.space.ID, id, storage.Conditions{}); err != nil {
		t.Fatalf("Remove %s: %v", id, err)
	}
}

// rewriteAsLayout2 turns the database at path into one of layout 2, as
// the code before layout 3 wrote it: every node record and every
// version's record holds its node's space.
func rewriteAsLayout2(t *testing.T, path string) {
	t.Helper()
	updateDB(t, path, func(tx *bolt.Tx) error {
		tree := &txn{tx: tx}
		type kv struct{ k, v []byte }
		var nodes, versions []kv
		err := tx.Bucket(bucketChildren).ForEach(func(k, v []byte) error {
			r, err := decodeNode(v)
			if err == nil {
				r.SpaceID, err = tree.nodeSpace(&r)
			}
			nodes = append(nodes, kv{bytes.Clone(k), encodeNodeWithSpace(&r)})
			return err
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
			sp, _, _ := strings.Cut(string(k), "\x00")
			r, err := decodeVersion("", v)
			r.File.SpaceID = sp
			b := append([]byte{versionFormat}, binary.AppendVarint(nil, r.Replaced.UnixNano())...)
			versions = append(versions, kv{bytes.Clone(k), append(b, encodeNodeWithSpace(&r.File)...)})
			return err
		})
		if err != nil {
			return err
		}
		for _, x := range nodes {
			if err := tx.Bucket(bucketChildren).Put(x.k, x.v); err != nil {
				return err
			}
		}
		for _, x := range versions {
			if err := tx.Bucket(bucketVersions).Put(x.k, x.v); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyLayout, []byte(strconv.Itoa(layoutSpaceInRecords)))
	})
}

// encodeNodeWithSpace is the encoding of format 2, as layout 2 stored
// records: that of format 3 with the space after the id.
func encodeNodeWithSpace(r *rec) []byte {
	b := []byte{nodeFormatWithSpace, byte(r.Kind)}
	b = appendString(b, r.ID)
	b = appendString(b, r.SpaceID)
	b = appendString(b, r.ParentID)
	b = appendString(b, r.Name)
	b = binary.AppendVarint(b, r.Size)
	b = binary.AppendVarint(b, r.ModTime.Unix())
	b = binary.AppendUvarint(b, uint64(r.ModTime.Nanosecond()))
	b = appendString(b, r.ETag)
	b = appendString(b, r.ContentType)
	b = appendString(b, r.Checksums.SHA1)
	b = appendString(b, r.Checksums.MD5)
	b = appendString(b, r.Checksums.Adler32)
	b = appendString(b, r.Blob)
	if r.inlined() {
		b = binary.AppendUvarint(b, r.Inline)
	}
	return b
}
