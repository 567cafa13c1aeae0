package boltstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// An upload that needs room evicts the oldest version and reads no
// further: a trash item and a version newer than it, here ones that
// cannot even be read, are not looked at.
func TestEvictionReadsOnlyTheOldest(t *testing.T) {
	f := newFixture(t)
	project, err := f.s.PutSpace(ctx, storage.Space{ID: "project", Name: "P", Quota: 35})
	if err != nil {
		t.Fatal(err)
	}
	g := f.inSpace(project.ID)
	var a storage.Node
	for i := range 3 { // two versions of 10 bytes, the file's 10
		a = g.put(t, g.root(), "a.txt", fmt.Sprintf("content %02d", i))
		f.clk.Advance(time.Minute)
	}
	oldest := versionKeys(t, f, project.ID, a.ID)[1] // newest first
	f.corrupt(t, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketTrash).Put(trashItemKey(project.ID, storage.TrashKey(f.clk.Now(), "unreadable")), []byte{0xff}); err != nil {
			return err
		}
		return tx.Bucket(bucketVersions).Put(versionRecKey(project.ID, "unreadable", "v"), []byte{0xff})
	})
	g.put(t, g.root(), "b.txt", "ten bytes!") // 40 bytes: 5 over the quota
	if got := versionKeys(t, f, project.ID, a.ID); len(got) != 1 || got[0] == oldest {
		t.Fatalf("versions after the eviction %v; want one, not %s", got, oldest)
	}
}

func versionKeys(t *testing.T, f *fixture, spaceID, fileID string) []string {
	t.Helper()
	vs, err := f.s.FileVersions(ctx, spaceID, fileID)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, v := range vs {
		keys = append(keys, v.Key)
	}
	return keys
}

// oldestKept lists what storage.Evictions would choose from the space's
// whole trash and versions, reading no more of them than it chooses, for
// every need: trash items and versions interleaved in time, some at the
// same time (trash items first, then by key).
func TestOldestKeptIsThePrefixOfAll(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 1000}})
	for i := range 60 {
		f.put(t, f.root(), fmt.Sprintf("f%d", i%4), fmt.Sprintf("content %d %s", i, bytes.Repeat([]byte("x"), i)))
		if i%3 == 0 {
			n := f.put(t, f.root(), fmt.Sprintf("gone%d", i), fmt.Sprint("deleted ", i))
			f.remove(t, n.ID)
		}
		if i%2 == 0 {
			f.clk.Advance(time.Second)
		}
	}
	all := allKept(t, f, f.space.ID)
	var total int64
	for _, k := range all {
		total += k.Size
	}
	for need := int64(1); need <= total+1; need += 37 {
		want := storage.Evictions(all, need)
		var kept []storage.Kept
		if err := f.s.view(func(tx *txn) (err error) {
			kept, err = tx.oldestKept(f.space.ID, need)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := storage.Evictions(kept, need); !slices.Equal(got, want) {
			t.Fatalf("need %d: evictions %v, want %v", need, got, want)
		}
		if want != nil && len(kept) != len(want) {
			t.Fatalf("need %d: read %d things kept to evict %d", need, len(kept), len(want))
		}
	}
}

// allKept is what space spaceID keeps for undo, read as the eviction did
// before the version age index: every trash item, then every version.
func allKept(t *testing.T, f *fixture, spaceID string) []storage.Kept {
	t.Helper()
	var kept []storage.Kept
	err := f.s.view(func(tx *txn) error {
		items, err := tx.trashItems(spaceID)
		if err != nil {
			return err
		}
		for _, item := range items {
			top, err := tx.itemNode(item)
			if err != nil {
				return err
			}
			kept = append(kept, storage.Kept{TrashKey: item.Key, Size: top.Size, Since: item.Deleted})
		}
		prefix := append([]byte(spaceID), 0)
		c := tx.versions().Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			file, key, _ := bytes.Cut(k[len(prefix):], []byte{0})
			r, err := decodeVersion(string(key), v)
			if err != nil {
				return err
			}
			kept = append(kept, storage.Kept{FileID: string(file), VersionKey: r.Key, Size: r.File.Size, Since: r.Replaced})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kept
}

// A database of layout 3 has no version age index: the first open builds
// it, a few versions per transaction here, and the check finds it whole.
func TestOpenBuildsTheVersionAgeIndex(t *testing.T) {
	f := newFixture(t)
	for i := range 7 {
		f.put(t, f.root(), fmt.Sprintf("f%d", i%2), fmt.Sprint("content ", i))
		f.clk.Advance(time.Second)
	}
	want := ageEntries(t, f)
	if len(want) != 5 {
		t.Fatalf("%d entries in the index, want 5", len(want))
	}
	f.corrupt(t, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketVersionAges); err != nil {
			return err
		}
		return setLayout(tx, layoutSpaceFromRoot)
	})
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(f.dir, dbFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := buildVersionAges(db, 2); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f.s = openStore(t, f.dir, f.clk)
	if got := ageEntries(t, f); !slices.Equal(got, want) {
		t.Fatalf("rebuilt index %q, want %q", got, want)
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{}); len(found) > 0 {
		t.Fatalf("problems after the migration: %v", found)
	}
}

func ageEntries(t *testing.T, f *fixture) []string {
	t.Helper()
	var out []string
	f.s.view(func(tx *txn) error {
		return tx.versionAges().ForEach(func(k, v []byte) error {
			out = append(out, string(k)+"="+string(v))
			return nil
		})
	})
	return out
}

// BenchmarkEvictionRead is what an eviction reads to find the room of one
// version, in a space keeping n versions: the same at every n.
func BenchmarkEvictionRead(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n, "-versions"), func(b *testing.B) {
			f := newFixture(b)
			file := f.put(b, f.root(), "a.txt", "content")
			err := f.s.update(func(t *txn) error {
				rec, _, err := t.node(file.ID)
				if err != nil {
					return err
				}
				for i := range n {
					v := versionRec{Key: fmt.Sprintf("v%07d", i), File: rec, Replaced: f.clk.Now().Add(time.Duration(i))}
					if err := t.versions().Put(versionRecKey(f.space.ID, file.ID, v.Key), encodeVersion(&v)); err != nil {
						return err
					}
					if err := t.indexVersionAge(f.space.ID, file.ID, &v); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				err := f.s.view(func(t *txn) error {
					kept, err := t.oldestKept(f.space.ID, 1)
					if len(kept) != 1 {
						b.Fatalf("read %d things kept, want 1", len(kept))
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
