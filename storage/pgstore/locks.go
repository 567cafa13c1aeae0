package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// Locks are rows of the locks table. Every change of a space's locks runs
// in s.inSpace, holding the space's row lock, as every change of its tree
// does: a lock granted through one node is seen at once by the next change
// through any other, and a lock cannot be taken on a node a concurrent
// remove is taking away. Expiry follows s.now(), not the database's clock,
// so that every node (and a test's clock) agrees with the store's.

// lockColumns are the columns lockRow reads, in its order.
const lockColumns = `token, space_id, node_id, root, deep, scope, owner, user_id, user_name, user_groups, created, timeout_ms, expires`

// lockRow is a row of the locks table.
type lockRow struct {
	Token     string     `db:"token"`
	SpaceID   string     `db:"space_id"`
	NodeID    string     `db:"node_id"`
	Root      string     `db:"root"`
	Deep      bool       `db:"deep"`
	Scope     int16      `db:"scope"`
	Owner     string     `db:"owner"`
	UserID    string     `db:"user_id"`
	UserName  string     `db:"user_name"`
	Groups    []string   `db:"user_groups"`
	Created   time.Time  `db:"created"`
	TimeoutMS int64      `db:"timeout_ms"`
	Expires   *time.Time `db:"expires"`
}

func (r lockRow) lock() storage.Lock {
	l := storage.Lock{
		Token: r.Token, SpaceID: r.SpaceID, NodeID: r.NodeID, Root: r.Root, Deep: r.Deep,
		Scope: storage.LockScope(r.Scope), Owner: r.Owner, User: r.UserID, UserName: r.UserName,
		Created: r.Created.UTC(), Timeout: time.Duration(r.TimeoutMS) * time.Millisecond,
	}
	if r.Expires != nil {
		l.Expires = r.Expires.UTC()
	}
	if len(r.Groups) > 0 {
		l.Groups = r.Groups
	}
	return l
}

// CreateLock adds l unless it conflicts with a live lock of its space,
// decided under the space's row lock. An empty token gets a fresh
// "urn:uuid:" one; a token a live lock anywhere in the store holds is
// ErrExists.
func (s *Store) CreateLock(ctx context.Context, l storage.Lock, lim storage.LockLimits) (storage.Lock, error) {
	if err := validLock(l); err != nil {
		return storage.Lock{}, fmt.Errorf("create lock: %w", err)
	}
	if l.Token == "" {
		l.Token = "urn:uuid:" + uuid.NewString()
	}
	err := s.inSpace(ctx, l.SpaceID, func(tx pgx.Tx) error {
		now := s.dbNow()
		if err := nodeInSpace(ctx, tx, l.SpaceID, l.NodeID); err != nil {
			return err
		}
		locks, err := purgeAndLoadLocks(ctx, tx, l.SpaceID, now)
		if err != nil {
			return err
		}
		if err := checkLockConflicts(ctx, tx, l, locks); err != nil {
			return err
		}
		if err := checkLockLimits(ctx, tx, l, locks, lim); err != nil {
			return err
		}
		l.Created = now
		l.Expires = storage.LockExpiry(now, l.Timeout)
		return insertLock(ctx, tx, l, now)
	})
	if err != nil {
		return storage.Lock{}, fmt.Errorf("create lock on %s: %w", l.NodeID, err)
	}
	return l, nil
}

// validLock checks what a caller gives CreateLock, and that PostgreSQL
// can keep its text.
func validLock(l storage.Lock) error {
	if !validText(l.SpaceID) || l.SpaceID == "" {
		return fmt.Errorf("space id %q: %w", l.SpaceID, storage.ErrInvalid)
	}
	if err := storage.ValidLockRequest(l); err != nil {
		return err
	}
	if !validText(l.Token) {
		return fmt.Errorf("lock token: %w", storage.ErrInvalid)
	}
	for _, v := range append([]string{l.Root, l.Owner, l.User, l.UserName}, l.Groups...) {
		if !validText(v) {
			return fmt.Errorf("lock of %q: text with a NUL or invalid UTF-8: %w", l.Root, storage.ErrInvalid)
		}
	}
	return nil
}

// validText reports whether PostgreSQL can keep v as text: valid UTF-8
// without a NUL.
func validText(v string) bool {
	return utf8.ValidString(v) && !strings.ContainsRune(v, 0)
}

// dbNow is the store's clock as PostgreSQL keeps it (microseconds, UTC),
// so that what a caller is given equals what it reads back.
func (s *Store) dbNow() time.Time {
	return s.now().Round(0).UTC().Truncate(time.Microsecond)
}

// nullTime is t for a nullable timestamptz: NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// nodeInSpace fails with ErrNotFound unless node id is a live node of the
// space.
func nodeInSpace(ctx context.Context, tx pgx.Tx, spaceID, id string) error {
	if !validText(id) {
		return fmt.Errorf("node %.64q in space %s: %w", id, spaceID, storage.ErrNotFound)
	}
	return liveIn(ctx, tx, spaceID, id)
}

// insertLock records l. Its token may be held by an expired lock of any
// space, which is dropped; a live one makes it ErrExists.
func insertLock(ctx context.Context, tx pgx.Tx, l storage.Lock, now time.Time) error {
	if _, err := tx.Exec(ctx, `DELETE FROM locks WHERE token = $1 AND expires <= $2`, l.Token, now); err != nil {
		return err
	}
	return execOne(ctx, tx, storage.LockTokenTaken(l.Token), `
		INSERT INTO locks (`+lockColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (token) DO NOTHING`,
		l.Token, l.SpaceID, l.NodeID, l.Root, l.Deep, int16(l.Scope), l.Owner, l.User, l.UserName,
		groupsColumn(l.Groups), l.Created, l.Timeout.Milliseconds(), nullTime(l.Expires))
}

// checkLockConflicts fails with ErrLocked when one of the live locks of
// the space conflicts with l: exclusive against anything, shared against
// exclusive, where the two cover a common node.
func checkLockConflicts(ctx context.Context, tx pgx.Tx, l storage.Lock, locks []storage.Lock) error {
	var rivals []storage.Lock
	for _, o := range locks {
		if l.Scope == storage.LockExclusive || o.Scope == storage.LockExclusive {
			rivals = append(rivals, o)
		}
	}
	if len(rivals) == 0 {
		return nil
	}
	above, err := ancestors(ctx, tx, l.NodeID)
	if err != nil {
		return err
	}
	var under map[string]bool
	if l.Deep {
		if under, err = lockNodesBelow(ctx, tx, l.NodeID, rivals); err != nil {
			return err
		}
	}
	for _, o := range rivals {
		if o.NodeID == l.NodeID || (o.Deep && above[o.NodeID]) || under[o.NodeID] {
			return storage.LockConflict(o.Root)
		}
	}
	return nil
}

// groupsColumn is the user_groups value of groups: never NULL.
func groupsColumn(groups []string) []string {
	if groups == nil {
		return []string{}
	}
	return groups
}

// checkLockLimits applies lim to l against the counting live locks of its
// space (storage.CheckLockLimits).
func checkLockLimits(ctx context.Context, tx pgx.Tx, l storage.Lock, locks []storage.Lock, lim storage.LockLimits) error {
	places := storage.LockPlaces{}
	var err error
	if places.Above, err = ancestors(ctx, tx, l.NodeID); err != nil {
		return err
	}
	if lim.NeedsInside(l) && len(locks) > 0 {
		if places.Inside, err = lockPathsInside(ctx, tx, l.NodeID, locks); err != nil {
			return err
		}
	}
	return storage.CheckLockLimits(l, locks, lim, places)
}

// lockPathsInside maps each node of locks strictly below top to its path
// up to top (top excluded), as storage.LockPlaces.Inside wants it: one
// walk up from every locked node, kept for those that reach top.
func lockPathsInside(ctx context.Context, tx pgx.Tx, top string, locks []storage.Lock) (map[string][]string, error) {
	ids := make([]string, 0, len(locks))
	for _, l := range locks {
		ids = append(ids, l.NodeID)
	}
	rows, err := tx.Query(ctx, `
		WITH RECURSIVE up (origin, id, parent_id, step) AS (
			SELECT id, id, parent_id, 0 FROM nodes WHERE id = ANY($1) AND id <> $2
			UNION ALL
			SELECT up.origin, n.id, n.parent_id, up.step + 1 FROM nodes n JOIN up ON n.id = up.parent_id
			WHERE up.id <> $2
		)
		SELECT origin, id FROM up
		WHERE id <> $2 AND origin IN (SELECT origin FROM up WHERE id = $2)
		ORDER BY origin, step`, ids, top)
	if err != nil {
		return nil, err
	}
	paths := map[string][]string{}
	var origin, id string
	_, err = pgx.ForEachRow(rows, []any{&origin, &id}, func() error {
		paths[origin] = append(paths[origin], id)
		return nil
	})
	return paths, err
}

// RefreshLock restarts the timeout of the live lock with token.
func (s *Store) RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (storage.Lock, error) {
	if err := storage.ValidLockTimeout(timeout); err != nil {
		return storage.Lock{}, err
	}
	if !validText(spaceID) || !validText(token) {
		return storage.Lock{}, fmt.Errorf("refresh lock %.64q: %w", token, storage.ErrNotFound)
	}
	var l storage.Lock
	err := s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
		now := s.dbNow()
		// A lock that no longer counts is gone for this too.
		if _, err := purgeAndLoadLocks(ctx, tx, spaceID, now); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			UPDATE locks SET timeout_ms = $3, expires = $4
			WHERE token = $1 AND space_id = $2 AND (expires IS NULL OR expires > $5)
			RETURNING `+lockColumns,
			token, spaceID, timeout.Milliseconds(), nullTime(storage.LockExpiry(now, timeout)), now)
		if err != nil {
			return err
		}
		row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[lockRow])
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.LockNotFound(spaceID, token)
		}
		l = row.lock()
		return err
	})
	if err != nil {
		return storage.Lock{}, fmt.Errorf("refresh lock %q: %w", token, err)
	}
	return l, nil
}

// RemoveLock deletes the live lock with token.
func (s *Store) RemoveLock(ctx context.Context, spaceID, token string) error {
	if !validText(spaceID) || !validText(token) {
		return fmt.Errorf("remove lock %.64q: %w", token, storage.ErrNotFound)
	}
	err := s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
		now := s.dbNow()
		// A lock that no longer counts is gone for this too.
		if _, err := purgeAndLoadLocks(ctx, tx, spaceID, now); err != nil {
			return err
		}
		return execOne(ctx, tx, storage.LockNotFound(spaceID, token), `
			DELETE FROM locks WHERE token = $1 AND space_id = $2 AND (expires IS NULL OR expires > $3)`,
			token, spaceID, now)
	})
	if err != nil {
		return fmt.Errorf("remove lock %q: %w", token, err)
	}
	return nil
}

// LocksOn returns the live locks covering nodeID: its own and the Deep
// locks of its ancestors, and with below also the locks of its subtree,
// from one snapshot.
func (s *Store) LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	if !validText(spaceID) {
		return nil, fmt.Errorf("locks on %s: space %.64q: %w", nodeID, spaceID, storage.ErrNotFound)
	}
	now := s.dbNow()
	var out []storage.Lock
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := nodeInSpace(ctx, tx, spaceID, nodeID); err != nil {
			return err
		}
		locks, err := loadLiveLocks(ctx, tx, spaceID, now)
		if err != nil || len(locks) == 0 {
			return err
		}
		out, err = locksCovering(ctx, tx, nodeID, locks, below)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("locks on %s: %w", nodeID, err)
	}
	return out, nil
}

// SpaceLocks returns the live locks of a space, ordered by token; an
// unknown space has none.
func (s *Store) SpaceLocks(ctx context.Context, spaceID string) ([]storage.Lock, error) {
	if !validText(spaceID) {
		return nil, nil
	}
	var out []storage.Lock
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		out, err = loadLiveLocks(ctx, tx, spaceID, s.dbNow())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("locks of space %s: %w", spaceID, err)
	}
	return out, nil
}

// loadLiveLocks returns the live locks of a space at now that count
// (storage.LockCounts), ordered by token in byte order.
func loadLiveLocks(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) ([]storage.Lock, error) {
	locks, _, err := loadLocksSplit(ctx, tx, spaceID, now)
	return locks, err
}

// loadLocksSplit returns the live locks of a space at now, ordered by
// token in byte order: those that count, and those that no longer do. A
// space without locks costs one index lookup.
func loadLocksSplit(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) (counting, stale []storage.Lock, err error) {
	locks, err := loadUnexpiredLocks(ctx, tx, spaceID, now)
	if err != nil || len(locks) == 0 {
		return nil, nil, err
	}
	sp, found, err := querySpace(ctx, tx, `SELECT `+spaceColumns+` FROM spaces WHERE id = $1`, spaceID)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		sp = storage.Space{ID: spaceID} // locks of no members
	}
	counting, stale = storage.CountingLocks(sp, locks)
	return counting, stale, nil
}

// loadUnexpiredLocks returns every lock of a space that has not expired
// at now, whether it counts or not.
func loadUnexpiredLocks(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) ([]storage.Lock, error) {
	rows, err := tx.Query(ctx, `
		SELECT `+lockColumns+` FROM locks
		WHERE space_id = $1 AND (expires IS NULL OR expires > $2)
		ORDER BY token COLLATE "C"`, spaceID, now)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[lockRow])
	if err != nil {
		return nil, err
	}
	return mapRows(found, lockRow.lock), nil
}

// purgeAndLoadLocks drops the expired locks of a space and those that no
// longer count, and returns its live ones; the caller holds the space's
// row lock.
func purgeAndLoadLocks(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) ([]storage.Lock, error) {
	if err := purgeExpiredLocks(ctx, tx, spaceID, now); err != nil {
		return nil, err
	}
	counting, stale, err := loadLocksSplit(ctx, tx, spaceID, now)
	if err != nil || len(stale) == 0 {
		return counting, err
	}
	tokens := make([]string, len(stale))
	for i, l := range stale {
		tokens[i] = l.Token
	}
	if _, err := tx.Exec(ctx, `DELETE FROM locks WHERE token = ANY($1)`, tokens); err != nil {
		return nil, err
	}
	return counting, nil
}

func purgeExpiredLocks(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) error {
	_, err := tx.Exec(ctx, `DELETE FROM locks WHERE space_id = $1 AND expires <= $2`, spaceID, now)
	return err
}

// locksCovering picks from locks those covering nodeID: its own and the
// Deep locks of its ancestors, and with below those of its subtree.
func locksCovering(ctx context.Context, tx pgx.Tx, nodeID string, locks []storage.Lock, below bool) ([]storage.Lock, error) {
	above, err := ancestors(ctx, tx, nodeID)
	if err != nil {
		return nil, err
	}
	var under map[string]bool
	if below {
		if under, err = lockNodesBelow(ctx, tx, nodeID, locks); err != nil {
			return nil, err
		}
	}
	var out []storage.Lock
	for _, l := range locks {
		if l.NodeID == nodeID || (l.Deep && above[l.NodeID]) || under[l.NodeID] {
			out = append(out, l)
		}
	}
	return out, nil
}

// ancestors returns the set of id and its ancestors: coverage follows a
// node's current place in the tree.
func ancestors(ctx context.Context, tx pgx.Tx, id string) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `
		WITH RECURSIVE up (id, parent_id) AS (
			SELECT id, parent_id FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
		)
		SELECT id FROM up`, id)
	if err != nil {
		return nil, err
	}
	return collectSet(rows)
}

// lockNodesBelow returns the set of the nodes of locks that lie in the
// subtree of top (top included), walking up from each: a space holds few
// locks, and a walk up is as long as the tree is deep.
func lockNodesBelow(ctx context.Context, tx pgx.Tx, top string, locks []storage.Lock) (map[string]bool, error) {
	ids := make([]string, 0, len(locks))
	for _, l := range locks {
		ids = append(ids, l.NodeID)
	}
	rows, err := tx.Query(ctx, `
		WITH RECURSIVE up (origin, id, parent_id) AS (
			SELECT id, id, parent_id FROM nodes WHERE id = ANY($1)
			UNION ALL
			SELECT up.origin, n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
			WHERE up.id <> $2
		)
		SELECT DISTINCT origin FROM up WHERE id = $2`, ids, top)
	if err != nil {
		return nil, err
	}
	return collectSet(rows)
}

// collectSet is the set of the ids rows hold, one a row.
func collectSet(rows pgx.Rows) (map[string]bool, error) {
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set, nil
}

// dropLocksBelow deletes the locks on top and on every node below it. It
// walks up from each lock of the space, so its cost depends on the locks
// and the depth, not on the size of the subtree.
func dropLocksBelow(ctx context.Context, tx pgx.Tx, spaceID, topID string) error {
	_, err := tx.Exec(ctx, `
		DELETE FROM locks l WHERE l.space_id = $1 AND EXISTS (
			WITH RECURSIVE up AS (
				SELECT n.id, n.parent_id FROM nodes n WHERE n.id = l.node_id
				UNION ALL
				SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
			)
			SELECT 1 FROM up WHERE up.id = $2)`, spaceID, topID)
	if err != nil {
		return fmt.Errorf("dropping the locks below %s: %w", topID, err)
	}
	return nil
}
