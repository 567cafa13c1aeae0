package pgstore

import (
	"fmt"
	"testing"
	"time"

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

// BenchmarkRemoveFolder10k measures a DELETE of a folder of 10,000 files
// (each with its own object, a third with a dead property): into the
// trash, into the trash from a space with a thousand shares (one of them
// below the folder), for good (a space that keeps no trash), and the
// purge of the trash item that the first leaves.
func BenchmarkRemoveFolder10k(b *testing.B) {
	s := openTestStore(b, Options{Sweep: time.Hour})
	sp := personal(b, s)
	trash := storage.RetentionPolicy{Default: storage.DefaultRetention}
	none := storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}}
	b.Run("to-trash", func(b *testing.B) {
		s.SetRetention(trash)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := folder10k(b, s, sp.ID, i)
			b.StartTimer()
			if err := s.Remove(b.Context(), sp.ID, dir, storage.Conditions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("purge", func(b *testing.B) {
		s.SetRetention(trash)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := folder10k(b, s, sp.ID, i)
			if err := s.Remove(b.Context(), sp.ID, dir, storage.Conditions{}); err != nil {
				b.Fatal(err)
			}
			items, err := storage.AllTrashItems(b.Context(), s, sp.ID)
			if err != nil || len(items) == 0 {
				b.Fatal(items, err)
			}
			b.StartTimer()
			if err := s.PurgeTrash(b.Context(), sp.ID, items[0].Key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("to-trash-shared", func(b *testing.B) {
		// The space has a thousand shares beside the folder and one in it,
		// which the remove walks up from.
		s.SetRetention(trash)
		shares1k(b, s, sp.ID)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := folder10k(b, s, sp.ID, i)
			_, err := s.CreateShare(b.Context(), storage.Share{Kind: storage.ShareLink, SpaceID: sp.ID,
				NodeID: dir + "-5000", Creator: "einstein", Role: storage.ShareViewer})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := s.Remove(b.Context(), sp.ID, dir, storage.Conditions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if _, err := s.pool.Exec(b.Context(), `DELETE FROM shares`); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("destroy", func(b *testing.B) {
		s.SetRetention(none)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := folder10k(b, s, sp.ID, i)
			b.StartTimer()
			if err := s.Remove(b.Context(), sp.ID, dir, storage.Conditions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// shares1k makes, in SQL, a folder of a thousand files three levels
// below the space's root, each file with a link.
func shares1k(b *testing.B, s *Store, spaceID string) {
	const files = 1000
	ctx := b.Context()
	parent, prefix := spaceID, fmt.Sprintf("shared-%d-", time.Now().UnixNano())
	for _, name := range []string{prefix, "deeper", "deepest"} {
		dir, err := s.Mkdir(ctx, spaceID, parent, name)
		if err != nil {
			b.Fatal(err)
		}
		parent = dir.ID
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag)
		SELECT $5 || i, $1, $2, 'file-' || i, $3, 0, now(), md5(i::text)
		FROM generate_series(1, $4) AS i`, spaceID, parent, storage.KindFile, files, prefix)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO shares (id, kind, space_id, node_id, creator, role, token, created_ns)
			SELECT $5 || i, $1, $2, $5 || i, 'einstein', $3, $5 || i, i
			FROM generate_series(1, $4) AS i`, storage.ShareLink, spaceID, storage.ShareViewer, files, prefix)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `ANALYZE shares`)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// folder10k makes, in SQL, a folder of 10,000 one-byte files in the
// space's root, and returns its id.
func folder10k(b *testing.B, s *Store, spaceID string, round int) string {
	const files = 10_000
	ctx := b.Context()
	dir, err := s.Mkdir(ctx, spaceID, spaceID, fmt.Sprintf("big-%d-%d", round, time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, content)
		SELECT $2 || '-' || i, $1, $2, 'file-' || lpad(i::text, 5, '0'), $3, 1, now(), md5(i::text),
			jsonb_build_array(jsonb_build_object('k', 'files/' || $2 || '-' || i, 'n', 1))
		FROM generate_series(1, $4) AS i`, spaceID, dir.ID, storage.KindFile, files)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO props (node_id, user_id, ns, local, value)
			SELECT $1 || '-' || i, '', 'http://owncloud.org/ns', 'tag', '1' FROM generate_series(1, $2, 3) AS i`, dir.ID, files)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE nodes SET size = size + $2 WHERE id = $1 OR id = $3`, dir.ID, files, spaceID)
	}
	if err == nil {
		// As autovacuum leaves it: the index's pending list merged.
		_, err = s.pool.Exec(ctx, `ANALYZE nodes; SELECT gin_clean_pending_list('nodes_content')`)
	}
	if err != nil {
		b.Fatal(err)
	}
	return dir.ID
}
