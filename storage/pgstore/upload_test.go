package pgstore

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// An object is on the sweep's list exactly while no node references it: a
// commit adopts it, a replacement or removal releases it, and a COPY
// shares it, so removing one of two files that share it keeps it. The
// space keeps no trash and no versions here, which would hold the objects
// (TestUndoObjectLifecycle).
func TestObjectLifecycle(t *testing.T) {
	s := openTestStore(t, Options{})
	s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
	sp := personal(t, s)
	ctx := t.Context()
	f := put(t, s, sp.ID, sp.ID, "f", "first")
	first := contentOf(t, s, f.ID)
	if len(first) != 1 || first[0].Size != 5 || swept(t, s, first[0].Key) {
		t.Fatalf("committed content %+v, on the sweep's list: %v", first, swept(t, s, first[0].Key))
	}
	c, _, err := s.Copy(ctx, sp.ID, storage.Transfer{NodeID: f.ID, NewParentID: sp.ID, NewName: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := contentOf(t, s, c.ID); len(got) != 1 || got[0] != first[0] {
		t.Fatalf("copy's content %+v, source's %+v", got, first)
	}
	put(t, s, sp.ID, sp.ID, "f", "second")
	if swept(t, s, first[0].Key) {
		t.Fatal("an object the copy still holds was released")
	}
	second := contentOf(t, s, f.ID)
	if err := s.Remove(ctx, sp.ID, c.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if !swept(t, s, first[0].Key) {
		t.Fatal("the object no node holds any more was not released")
	}
	dir, _ := s.Mkdir(ctx, sp.ID, sp.ID, "dir")
	if _, _, err := s.Move(ctx, sp.ID, storage.Transfer{NodeID: f.ID, NewParentID: dir.ID, NewName: "f"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, sp.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if !swept(t, s, second[0].Key) {
		t.Fatal("the object of a file removed with its folder was not released")
	}
	empty := put(t, s, sp.ID, sp.ID, "empty", "")
	if got := contentOf(t, s, empty.ID); len(got) != 0 {
		t.Fatalf("empty file has content %+v", got)
	}
}

// A large upload streams to its object as it is written; Discard and a
// refused commit leave no object behind.
func TestUploadLeavesNoObjectWhenDropped(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	existing := put(t, s, sp.ID, sp.ID, "existing", "x")
	for _, tc := range []struct {
		name string
		size int
		end  func(storage.Upload) error
	}{
		{"discarded large", 3 * memLimit, func(u storage.Upload) error { return u.Discard() }},
		{"refused small", 10, func(u storage.Upload) error {
			_, _, err := u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "existing", Conditions: storage.Conditions{IfNoneMatch: true}})
			return err
		}},
		{"refused large", 3 * memLimit, func(u storage.Upload) error {
			_, _, err := u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "existing", Conditions: storage.Conditions{IfMatch: "stale"}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []string
			s.pool.QueryRow(ctx, `SELECT coalesce(array_agg(key), '{}') FROM object_sweep`).Scan(&before)
			u, err := s.NewUpload(ctx, sp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Write(bytes.Repeat([]byte("z"), tc.size)); err != nil {
				t.Fatal(err)
			}
			if err := tc.end(u); err != nil && !errors.Is(err, storage.ErrPrecondition) {
				t.Fatal(err)
			}
			rows, _ := s.pool.Query(ctx, `SELECT key FROM object_sweep WHERE NOT key = ANY($1)`, before)
			var keys []string
			for rows.Next() {
				var k string
				rows.Scan(&k)
				keys = append(keys, k)
			}
			if len(keys) != 1 {
				t.Fatalf("the upload left %d pending objects, want 1", len(keys))
			}
			for _, k := range keys {
				if _, err := s.objects.Get(ctx, k, 0, 1); !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("object %s of a dropped upload: %v", k, err)
				}
			}
		})
	}
	if n, _ := s.Node(ctx, sp.ID, existing.ID); n.Size != 1 {
		t.Fatalf("existing file changed: %+v", n)
	}
}

// A file up to inlineLimit bytes is kept in its row: no object, no
// pending row, read back, kept as a version when replaced and found
// sound by a deep check; one byte more is an object.
func TestSmallFileKeptInItsRow(t *testing.T) {
	s := openTestStore(t, Options{inlineLimit: inlineLimit})
	sp := personal(t, s)
	ctx := t.Context()
	small := strings.Repeat("s", inlineLimit)
	f := put(t, s, sp.ID, sp.ID, "small", small)
	if segs := contentOf(t, s, f.ID); len(segs) != 1 || !segs[0].Inline() || segs[0].Size != inlineLimit {
		t.Fatalf("small file's content %+v, want one inline segment", segs)
	}
	put(t, s, sp.ID, sp.ID, "small", "replaced")
	if objects, err := s.objects.List(ctx, prefixFile, "", 10); err != nil || len(objects) != 0 {
		t.Fatalf("bucket holds %v (%v), want no object", objects, err)
	}
	var pending int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM object_sweep`).Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d rows on the sweep's list (%v), want none", pending, err)
	}
	if got := readAll(t, s, sp.ID, f.ID); got != "replaced" {
		t.Errorf("file reads %q", got)
	}
	vs, err := s.FileVersions(ctx, sp.ID, f.ID)
	if err != nil || len(vs) != 1 {
		t.Fatalf("Versions = %d, %v; want 1", len(vs), err)
	}
	_, vc, err := s.OpenVersion(ctx, sp.ID, f.ID, vs[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(vc); err != nil || string(got) != small {
		t.Errorf("version reads %d bytes (%v), want the first content", len(got), err)
	}
	vc.Close()
	large := put(t, s, sp.ID, sp.ID, "large", small+"l")
	if segs := contentOf(t, s, large.ID); len(segs) != 1 || segs[0].Inline() {
		t.Errorf("file of inlineLimit+1 bytes has content %+v, want an object", segs)
	}
	if problems, _ := runCheck(t, s, storage.CheckOptions{Deep: true}); len(problems) != 0 {
		t.Errorf("check found %v", problems)
	}
}
