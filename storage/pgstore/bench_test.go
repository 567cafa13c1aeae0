package pgstore

import (
	"fmt"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// BenchmarkSmallPut measures a PUT of a small file: one PUT of known size
// to the bucket and two short transactions (the pending row, the commit).
func BenchmarkSmallPut(b *testing.B) {
	s := openTestStore(b, Options{})
	sp := personal(b, s)
	dir, err := s.Mkdir(b.Context(), sp.ID, sp.ID, "puts")
	if err != nil {
		b.Fatal(err)
	}
	content := string(make([]byte, 4096))
	i := 0
	for b.Loop() {
		put(b, s, sp.ID, dir.ID, fmt.Sprintf("f%06d", i), content)
		i++
	}
}

// BenchmarkReadDirProps10k measures listing a folder of 10,000 files, a
// third of them with a dead property and a favourite, in one page.
func BenchmarkReadDirProps10k(b *testing.B) {
	const entries = 10_000
	s := openTestStore(b, Options{})
	sp := personal(b, s)
	ctx := b.Context()
	dir, err := s.Mkdir(ctx, sp.ID, sp.ID, "big")
	if err != nil {
		b.Fatal(err)
	}
	// Made in SQL: 10,000 commits would take minutes.
	_, err = s.pool.Exec(ctx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, sha1)
		SELECT 'bench-' || i, $1, $2, 'file-' || lpad(i::text, 5, '0'), $3, i, now(), md5(i::text), md5(i::text)
		FROM generate_series(1, $4) AS i`, sp.ID, dir.ID, storage.KindFile, entries)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO props (node_id, user_id, ns, local, value)
			SELECT 'bench-' || i, u, 'http://owncloud.org/ns', CASE WHEN u = '' THEN 'tag' ELSE 'favorite' END, '1'
			FROM generate_series(1, $1, 3) AS i, (VALUES (''), ('einstein')) AS users (u)`, entries)
	}
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		page, err := s.ReadDirProps(ctx, sp.ID, dir.ID, "einstein", "", 0)
		if err != nil || len(page) != entries {
			b.Fatalf("ReadDirProps = %d entries, %v", len(page), err)
		}
	}
}
