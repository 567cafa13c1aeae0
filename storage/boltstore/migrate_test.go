package boltstore

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// A database of layout 1 comes back after Open with every node, listing,
// content and property it had, in the current layout, and the etag
// sequence goes on from where it was.
func TestMigrateFromLayout1(t *testing.T) {
	f := newInlineFixture(t, 8) // "tiny" is inline, the longer contents are not
	dir := f.mkdir(t, f.root(), "dir")
	sub := f.mkdir(t, dir.ID, "sub")
	small := f.put(t, dir.ID, "small", "tiny")
	f.put(t, sub.ID, "big", "more than eight bytes")
	f.put(t, f.root(), "top", "content of a file")
	project, err := f.s.PutSpace(ctx, storage.Space{ID: "project", Name: "P", Quota: storage.NoQuota})
	if err != nil {
		t.Fatal(err)
	}
	f.inSpace(project.ID).put(t, project.ID, "readme", "in another space")
	patches := []storage.PropPatch{
		set(prop("urn:x", "color", "", "red")),
		set(prop("http://owncloud.org/ns", "favorite", "einstein", "1")),
	}
	for _, id := range []string{small.ID, dir.ID, f.root()} {
		if err := f.s.PatchProps(ctx, f.space.ID, id, patches); err != nil {
			t.Fatal(err)
		}
	}
	spaces := []string{f.space.ID, project.ID}
	want := f.dumpSpaces(t, spaces)
	var seq uint64
	f.s.view(func(tx *txn) error { seq = tx.nodes().Sequence(); return nil })
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}

	dbPath := filepath.Join(f.dir, dbFile)
	rewriteAsLayout1(t, dbPath)
	for range 2 { // the second Open finds nothing to migrate
		f.s = openStore(t, f.dir, f.clk)
		if got := f.dumpSpaces(t, spaces); !reflect.DeepEqual(got, want) {
			t.Fatalf("after migration:\n%+v\nwant\n%+v", got, want)
		}
		f.s.view(func(tx *txn) error {
			if got := string(tx.tx.Bucket(bucketMeta).Get(keyLayout)); got != strconv.Itoa(layoutVersion) {
				t.Errorf("layout %q, want %d", got, layoutVersion)
			}
			if tx.tx.Bucket(bucketNodesByID) != nil || tx.tx.Bucket(bucketChildIDs) != nil {
				t.Error("the buckets of layout 1 are left")
			}
			if got := tx.nodes().Sequence(); got < seq {
				t.Errorf("etag sequence %d, was %d", got, seq)
			}
			return nil
		})
		f.put(t, dir.ID, "after", "a write after the migration")
		want = f.dumpSpaces(t, spaces)
		if err := f.s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Open refuses a layout it does not know and a layout 1 database whose
// children index does not match its records.
func TestMigrateRefuses(t *testing.T) {
	for name, spoil := range map[string]func(tx *bolt.Tx) error{
		"newer layout": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keyLayout, []byte(strconv.Itoa(layoutVersion+1)))
		},
		"missing children entry": func(tx *bolt.Tx) error {
			rewriteTxAsLayout1(tx)
			c := tx.Bucket(bucketChildIDs).Cursor()
			k, _ := c.First()
			return tx.Bucket(bucketChildIDs).Delete(k)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.mkdir(t, f.root(), "dir")
			if err := f.s.Close(); err != nil {
				t.Fatal(err)
			}
			updateDB(t, filepath.Join(f.dir, dbFile), spoil)
			s, err := Open(f.dir, Options{})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("Open = %v, want %v", err, errCorrupt)
			}
		})
	}
}

// spaceDump is what a client can see of spaces: each node by path, with
// its shared and own properties, and the content of each file.
type spaceDump struct {
	Nodes    map[string]storage.Entry
	Contents map[string]string
}

func (f *fixture) dumpSpaces(t *testing.T, spaces []string) spaceDump {
	t.Helper()
	d := spaceDump{Nodes: map[string]storage.Entry{}, Contents: map[string]string{}}
	for _, id := range spaces {
		root, err := f.s.Node(ctx, id, id)
		if err != nil {
			t.Fatal(err)
		}
		props, err := f.s.Props(ctx, id, id, "einstein")
		if err != nil {
			t.Fatal(err)
		}
		d.Nodes[id] = storage.Entry{Node: root, Props: props}
		f.dumpFolder(t, &d, id, id, id)
	}
	return d
}

func (f *fixture) dumpFolder(t *testing.T, d *spaceDump, spaceID, folderID, path string) {
	t.Helper()
	entries, err := f.s.ReadDirProps(ctx, spaceID, folderID, "einstein", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := path + "/" + e.Name
		d.Nodes[p] = e
		if e.IsFolder() {
			f.dumpFolder(t, d, spaceID, e.ID, p)
			continue
		}
		d.Contents[p] = f.inSpace(spaceID).read(t, e.ID)
	}
}

// inSpace returns f working in another space of its store.
func (f *fixture) inSpace(spaceID string) *fixture {
	g := *f
	g.space.ID = spaceID
	return &g
}

// rewriteAsLayout1 turns the database at path into one of layout 1, as the
// code before the migration wrote it.
func rewriteAsLayout1(t *testing.T, path string) {
	t.Helper()
	updateDB(t, path, func(tx *bolt.Tx) error { rewriteTxAsLayout1(tx); return nil })
}

func rewriteTxAsLayout1(tx *bolt.Tx) {
	tree, index := tx.Bucket(bucketChildren), tx.Bucket(bucketNodes)
	nodes, _ := tx.CreateBucket(bucketNodesByID)
	children, _ := tx.CreateBucket(bucketChildIDs)
	tree.ForEach(func(k, v []byte) error {
		r, err := decodeNode(v)
		if err != nil {
			panic(err)
		}
		nodes.Put([]byte(r.ID), encodeNodeByID(&r))
		if r.ParentID != "" {
			children.Put(k, []byte(r.ID))
		}
		return nil
	})
	nodes.SetSequence(index.Sequence())
	tx.DeleteBucket(bucketChildren)
	tx.DeleteBucket(bucketNodes)
	tx.Bucket(bucketMeta).Delete(keyLayout)
}

func updateDB(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// encodeNodeByID is the encoding of format 1, as layout 1 stored records:
// that of format 2 without the id.
func encodeNodeByID(r *rec) []byte {
	b := []byte{nodeFormatByID, byte(r.Kind)}
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
