package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// searchName is a stored column of nodes: the name as storage.FoldName
// folds it, NFC in lower case by ICU's root locale, which lowers every
// script whatever the database's own locale (a C locale lowers ASCII
// only). It is computed once, when the name is written, rather than for
// every name a search reads, and sorts bytewise as Go compares strings.
const searchName = "search_name"

// searchSchema adds searchName, an index of each space's names in search
// order (a page of results is read in order, the total counted from the
// index), and one of the properties scoped to a user, for favourites.
// Adding the column rewrites the table once.
var searchSchema = []string{
	`ALTER TABLE nodes ADD COLUMN IF NOT EXISTS ` + searchName + ` text COLLATE "C"
		GENERATED ALWAYS AS (lower(normalize(name, NFC) COLLATE "und-x-icu")) STORED`,
	`CREATE INDEX IF NOT EXISTS nodes_search ON nodes (space_id, ` + searchName + `, id COLLATE "C")`,
	`CREATE INDEX IF NOT EXISTS props_user ON props (user_id, ns, local) WHERE user_id <> ''`,
}

// trigramSchema indexes searchName by trigrams, so that a pattern that
// few names hold is answered from the index. pg_trgm is trusted
// (PostgreSQL 13 and later): a database owner may create it.
var trigramSchema = []string{
	`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
	`CREATE INDEX IF NOT EXISTS nodes_search_trgm ON nodes USING gin (` + searchName + ` gin_trgm_ops)`,
}

// migrateSearch readies the search columns and indexes in tx, the trigram
// index in a savepoint: without pg_trgm (a server without the contrib
// package) searches still answer, reading the space's names from
// nodes_search, which is logged, not refused.
func migrateSearch(ctx context.Context, tx pgx.Tx, log *zap.Logger) error {
	// ALTER TABLE locks the table whole before it sees that the column is
	// there: a node starting while another writes would wait for it, and
	// every query of nodes behind the waiting lock.
	var added bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = 'nodes'::regclass AND attname = $1 AND NOT attisdropped)`, searchName).Scan(&added)
	if err != nil {
		return err
	}
	steps := searchSchema
	if added {
		steps = steps[1:]
	}
	for _, step := range steps {
		if _, err := tx.Exec(ctx, step); err != nil {
			return err
		}
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	for _, step := range trigramSchema {
		if _, err := sp.Exec(ctx, step); err != nil {
			log.Warn("no trigram index of names (pg_trgm): searches read every name of a space", zap.Error(err))
			return sp.Rollback(ctx)
		}
	}
	return sp.Commit(ctx)
}

// SearchNames implements storage.Searcher.
func (s *Store) SearchNames(ctx context.Context, scope storage.SearchScope, pattern string) (storage.Found, error) {
	match := searchName + ` LIKE $3`
	found, err := s.search(ctx, scope, match, "%"+escapeLike(storage.FoldName(pattern))+"%")
	if err != nil {
		return storage.Found{}, fmt.Errorf("search names in space %s: %w", scope.SpaceID, err)
	}
	return found, nil
}

// SearchFavorites implements storage.Searcher.
func (s *Store) SearchFavorites(ctx context.Context, scope storage.SearchScope, user string) (storage.Found, error) {
	match := `id IN (SELECT node_id FROM props WHERE user_id = $3 AND ns = $4 AND local = $5 AND trim(value) = '1')`
	found, err := s.search(ctx, scope, match, user, storage.FavoriteProp.Space, storage.FavoriteProp.Local)
	if err != nil {
		return storage.Found{}, fmt.Errorf("search favourites in space %s: %w", scope.SpaceID, err)
	}
	return found, nil
}

// search answers the nodes of the scope that match, a condition on nodes
// whose arguments begin at $3, in one snapshot: the page and the total.
func (s *Store) search(ctx context.Context, scope storage.SearchScope, match string, args ...any) (storage.Found, error) {
	scope, err := scope.Normalize()
	if err != nil {
		return storage.Found{}, err
	}
	with, where := hitsQuery(scope, match)
	args = append([]any{scope.SpaceID, scope.Under}, args...)
	var found storage.Found
	err = s.read(ctx, func(tx pgx.Tx) error {
		under, err := nodeIn(ctx, tx, scope.SpaceID, scope.Under)
		if err != nil {
			return err
		}
		if !under.isFolder() {
			return fmt.Errorf("search below file %s: %w", under.ID, storage.ErrConflict)
		}
		if err := tx.QueryRow(ctx, with+` SELECT count(*) FROM nodes WHERE `+where, args...).Scan(&found.Total); err != nil {
			return err
		}
		if found.Total <= scope.Offset {
			return nil
		}
		// In the order of nodes_search, which a page is read from.
		page := with + ` SELECT ` + listColumns + ` FROM nodes WHERE ` + where + `
			ORDER BY ` + searchName + `, id COLLATE "C" LIMIT ` + fmt.Sprint(scope.Limit) + ` OFFSET ` + fmt.Sprint(scope.Offset)
		rows, err := listNodes(ctx, tx, page, args...)
		if err != nil {
			return err
		}
		for _, r := range rows {
			found.Nodes = append(found.Nodes, r.node())
		}
		return nil
	})
	if err != nil {
		return storage.Found{}, classify(err)
	}
	return found, nil
}

// hitsQuery returns the condition on nodes that selects the matching
// nodes strictly below the scope's folder ($2) in the live space ($1), and
// the WITH clause it needs. The whole space's are the nodes of the space
// with a parent but those of its trash, told from the live ones by their
// folder (layout.go): the trash's folders, found from its root down,
// folders only, are read once for all the hits, however many. A folder's
// are the nodes of it and of the live folders below it, found likewise
// from the folder down.
func hitsQuery(scope storage.SearchScope, match string) (with, where string) {
	where = `space_id = $1 AND parent_id IS NOT NULL AND ` + match
	if scope.Under == scope.SpaceID {
		with = fmt.Sprintf(`WITH RECURSIVE trashed (id) AS (
			SELECT $1::text || '%s'
			UNION ALL
			SELECT n.id FROM nodes n JOIN trashed t ON n.parent_id = t.id WHERE n.kind = %d
		)`, trashSuffix, storage.KindFolder)
		return with, where + ` AND $2::text IS NOT NULL AND parent_id NOT IN (SELECT id FROM trashed)`
	}
	with = fmt.Sprintf(`WITH RECURSIVE folders (id) AS (
		SELECT $2::text
		UNION ALL
		SELECT n.id FROM nodes n JOIN folders f ON n.parent_id = f.id WHERE n.kind = %d
	)`, storage.KindFolder)
	return with, where + ` AND parent_id IN (SELECT id FROM folders)`
}

// escapeLike escapes the wildcards of LIKE (with its default escape
// character, the backslash) in s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
