package pgstore

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The objects of previews that were replaced, evicted or dropped with
// their content go to the sweep, which deletes them: the bucket is left
// holding exactly the objects the previews table names.
func TestPreviewObjectsSwept(t *testing.T) {
	clk := &testClock{}
	s := openTestStore(t, Options{Now: clk.Now, ObjectGrace: time.Millisecond, PreviewCacheSize: 2500})
	ctx := t.Context()
	sp := personal(t, s)
	file := put(t, s, sp.ID, sp.ID, "picture.png", "a picture")
	key := func(sum string, edge int) storage.PreviewKey {
		return storage.PreviewKey{SHA1: sum, Width: edge, Height: edge}
	}
	data := bytes.Repeat([]byte("p"), 1000)
	a, b, c := key(strings.Repeat("a", 40), 36), key(strings.Repeat("b", 40), 36), key(file.Checksums.SHA1, 36)
	for _, k := range []storage.PreviewKey{a, a, b, c} { // a kept twice; c evicts a
		if err := s.KeepPreview(ctx, k, data, "image/png"); err != nil {
			t.Fatalf("KeepPreview: %v", err)
		}
	}
	if err := s.Remove(ctx, sp.ID, file.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.EmptyTrash(ctx, sp.ID); err != nil { // drops c
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	for range 10 {
		if n, err := s.sweepObjects(ctx); err != nil {
			t.Fatalf("sweep: %v", err)
		} else if n == 0 {
			break
		}
	}
	rows, _ := s.pool.Query(ctx, `SELECT object FROM previews ORDER BY object`)
	var named []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			t.Fatal(err)
		}
		named = append(named, o)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	objects, err := s.objects.List(ctx, prefixPreview, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, o := range objects {
		stored = append(stored, o.Key)
	}
	if len(named) != 1 || !strings.HasPrefix(named[0], prefixPreview+b.Name()+"-") || !slices.Equal(stored, named) {
		t.Fatalf("previews named %v, objects stored %v: want b's alone", named, stored)
	}
}
