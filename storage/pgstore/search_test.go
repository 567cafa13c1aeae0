package pgstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// The test server has pg_trgm: Open makes the trigram index of names, and
// the search's condition is one the index answers.
func TestSearchUsesTrigramIndex(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	seedSearchSpace(t, s, sp.ID, 10, 20000)
	pool, err := s.db()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `ANALYZE nodes`); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The planner reads every name when that is cheaper (the names of
	// this test share most trigrams); the index must be usable, which it
	// is only if the query folds names exactly as the index does.
	if _, err := conn.Exec(t.Context(), `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(t.Context(), `EXPLAIN SELECT id FROM nodes WHERE `+searchName+` LIKE $1`, "%00042%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "nodes_search_trgm") {
		t.Fatalf("the search does not use the trigram index:\n%s", plan.String())
	}
}

// seedSearchSpace fills the space with folders of files, files in all,
// named file-00000.txt and on in each folder, in one statement a folder.
func seedSearchSpace(t testing.TB, s *Store, spaceID string, folders, files int) {
	t.Helper()
	pool, err := s.db()
	if err != nil {
		t.Fatal(err)
	}
	for i := range folders {
		dir, err := s.Mkdir(t.Context(), spaceID, spaceID, fmt.Sprintf("folder %03d", i))
		if err != nil {
			t.Fatal(err)
		}
		_, err = pool.Exec(t.Context(), `INSERT INTO nodes (id, space_id, parent_id, name, kind, mtime, etag)
			SELECT gen_random_uuid()::text, $1, $2, 'file-' || lpad(i::text, 5, '0') || '.txt', $3, now(), md5(i::text)
			FROM generate_series(0, $4::int - 1) i`, spaceID, dir.ID, storage.KindFile, files/folders)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkSearchNames100000 searches a space of 100,000 files in 100
// folders: a pattern matching 100 of them, and one matching them all
// answering its first page of 100 with the total.
func BenchmarkSearchNames100000(b *testing.B) {
	s := openTestStore(b, Options{})
	sp := personal(b, s)
	seedSearchSpace(b, s, sp.ID, 100, 100000)
	pool, err := s.db()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(b.Context(), `ANALYZE nodes`); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		pattern string
		total   int
	}{
		{"00042", 100},
		{"FILE", 100000},
	} {
		b.Run(tc.pattern, func(b *testing.B) {
			scope := storage.SearchScope{SpaceID: sp.ID, Limit: 100}
			for b.Loop() {
				found, err := s.SearchNames(b.Context(), scope, tc.pattern)
				if err != nil || found.Total != tc.total {
					b.Fatalf("SearchNames = %d, %v", found.Total, err)
				}
			}
		})
	}
}
