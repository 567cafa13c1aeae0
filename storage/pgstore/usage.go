package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// What a space holds against its quota (storage.Usage) is read in the
// transaction that checks it, which holds the space's row lock: its files
// from the root's size, its dead properties from the running counter
// spaces.props_bytes (changed with the properties), and its reservations
// from the rows of the unfinished uploads that will land in it, summed
// through indexes on space_id. The sums are UploadReservation and
// ChunkedReservation in SQL: a session's reservation is its length, a
// chunked upload's the greater of what it announced and what it stores,
// each less the size of the file it replaces.
// Its trash is the size of its trash's root (kept by propagation, as
// the live root's) less the items being purged, hidden already
// (purger.go), its versions the running counter
// spaces.versions_bytes. Its nodes are the running counter spaces.nodes:
// the nodes of the space and of its trash, roots aside, and the versions
// of its files (storage.Usage.Nodes), counted where they are made and
// destroyed.
// The object store's free space cannot be measured: uploads there are
// bounded by the quota and the open uploads cap alone.

var _ storage.UsageReader = (*Store)(nil)

// Usage returns what space spaceID holds against its quota.
func (s *Store) Usage(ctx context.Context, spaceID string) (storage.Usage, error) {
	var u storage.Usage
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		u, _, err = s.spaceUsage(ctx, tx, spaceID)
		return err
	})
	if err != nil {
		return storage.Usage{}, fmt.Errorf("usage of space %s: %w", spaceID, err)
	}
	return u, nil
}

// spaceUsage reads what space spaceID holds and the quota that applies.
func (s *Store) spaceUsage(ctx context.Context, tx pgx.Tx, spaceID string) (storage.Usage, int64, error) {
	var (
		typ   string
		quota int64
		u     storage.Usage
	)
	err := tx.QueryRow(ctx, `
		SELECT s.type, s.quota, r.size, s.props_bytes,
			coalesce(t.size, 0) - (SELECT coalesce(sum(h.size), 0) FROM trash_items p JOIN nodes h ON h.id = p.node_id
				WHERE p.space_id = s.id AND p.purging)::bigint,
			s.versions_bytes, s.nodes,
			(SELECT coalesce(sum(greatest(length - replaces, 0)), 0) FROM upload_sessions WHERE space_id = s.id)::bigint
			+ (SELECT coalesce(sum(greatest(greatest(length, stored) - replaces, 0)), 0)
				FROM chunked_uploads WHERE space_id = s.id)::bigint
		FROM spaces s JOIN nodes r ON r.id = s.id LEFT JOIN nodes t ON t.id = s.id || $2
		WHERE s.id = $1 AND s.type <> 'trash'`,
		spaceID, trashSuffix).Scan(&typ, &quota, &u.Files, &u.Props, &u.Trash, &u.Versions, &u.Nodes, &u.Reserved)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.Usage{}, 0, storage.SpaceNotFound(spaceID)
	}
	if err != nil {
		return storage.Usage{}, 0, fmt.Errorf("quota of space %s: %w", spaceID, err)
	}
	quota = storage.EffectiveQuota(storage.Space{Type: storage.SpaceType(typ), Quota: quota}, s.personalQuota.Load()).Quota
	return u, quota, nil
}

// checkQuota fails with ErrInsufficientStorage when growing the space by
// delta bytes would exceed its quota. Shrinking always succeeds. The
// caller holds the space's row lock.
func (s *Store) checkQuota(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	if delta <= 0 {
		return nil
	}
	u, quota, err := s.spaceUsage(ctx, tx, spaceID)
	if err != nil {
		return err
	}
	return u.Check(quota, delta)
}

// makeRoom is checkQuota for a change that may take room from the
// space's trash and versions (storage.Shortfall): an upload, a copy.
// When only they can make room, the oldest of them are purged in the
// caller's change (storage.Evictions) before the check; when even all of
// them could not, nothing is purged and the check refuses.
func (s *Store) makeRoom(ctx context.Context, c *change, spaceID string, delta int64) error {
	if delta <= 0 {
		return nil
	}
	u, quota, err := s.spaceUsage(ctx, c.tx, spaceID)
	if err != nil {
		return err
	}
	if need := u.Shortfall(quota, delta); need > 0 {
		if err := s.evict(ctx, c, spaceID, need); err != nil {
			return err
		}
		if u, quota, err = s.spaceUsage(ctx, c.tx, spaceID); err != nil {
			return err
		}
	}
	return u.Check(quota, delta)
}

// trimUndo evicts the oldest of what the space keeps for undo until it is
// within its quota again, or has nothing left to give: after a commit
// kept the content it replaced as a version, which never takes the space
// past its quota.
func (s *Store) trimUndo(ctx context.Context, c *change, spaceID string) error {
	u, quota, err := s.spaceUsage(ctx, c.tx, spaceID)
	if err != nil || quota < 0 {
		return err
	}
	if over := min(u.Used()+u.Reserved-quota, u.Undo()); over > 0 {
		return s.evict(ctx, c, spaceID, over)
	}
	return nil
}

// makeRoomIn is makeRoom for a transaction that holds the space's row
// lock but changes no tree (a reservation).
func (s *Store) makeRoomIn(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	return s.makeRoom(ctx, s.changeIn(tx), spaceID, delta)
}

// evict frees need bytes of the space from its oldest trash items and
// versions (storage.Evictions): a version goes at once, a trash item is
// hidden, its bytes free at once, and purged in parts after c commits.
func (s *Store) evict(ctx context.Context, c *change, spaceID string, need int64) error {
	kept, err := oldestKept(ctx, c.tx, spaceID, need)
	if err != nil {
		return err
	}
	for _, k := range storage.Evictions(kept, need) {
		if k.FileID != "" {
			err = s.dropVersion(ctx, c.tx, spaceID, k.FileID, k.VersionKey, true)
		} else {
			err = s.hideForPurge(ctx, c, spaceID, k.TrashKey)
		}
		if err != nil {
			return fmt.Errorf("making room: %w", err)
		}
	}
	return nil
}

// hideForPurge hides trash item key, unless it is gone, to be purged in
// parts once c commits (purger.go): its bytes are free at once.
func (s *Store) hideForPurge(ctx context.Context, c *change, spaceID, key string) error {
	it, err := trashItem(ctx, c.tx, spaceID, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := markPurging(ctx, c.tx, it.ID); err != nil {
		return err
	}
	s.purgeLater(c.tx, spaceID, it.ID)
	return nil
}

// oldestKept lists what the space keeps only for undo, its trash items
// and the versions of its files, oldest first, as far as the first whose
// sizes add up to need: storage.Evictions chooses from those what it would
// from all, and a space that keeps a great many holds no list of them
// all. Equal times are ordered trash items first, then by key.
func oldestKept(ctx context.Context, tx pgx.Tx, spaceID string, need int64) ([]storage.Kept, error) {
	rows, _ := tx.Query(ctx, `
		SELECT t.key, '' AS file_id, '' AS version, n.size, t.deleted_ns AS since, 0 AS source
		FROM trash_items t JOIN nodes n ON n.id = t.node_id WHERE t.space_id = $1 AND NOT t.purging
		UNION ALL
		SELECT '', file_id, key, size, replaced_ns, 1 FROM versions WHERE space_id = $1
		ORDER BY since, source, key, file_id, version`, spaceID)
	var (
		kept      []storage.Kept
		k         storage.Kept
		ns, freed int64
		source    int
		errEnough = errors.New("enough to free")
	)
	_, err := pgx.ForEachRow(rows, []any{&k.TrashKey, &k.FileID, &k.VersionKey, &k.Size, &ns, &source}, func() error {
		k.Since = time.Unix(0, ns).UTC()
		kept = append(kept, k)
		if freed += k.Size; freed >= need {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("listing the trash and versions of space %s: %w", spaceID, err)
	}
	return kept, nil
}

// addProps counts delta bytes of dead properties into the space, checking
// the quota when they grow. The caller holds the space's row lock.
func (s *Store) addProps(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	if delta == 0 {
		return nil
	}
	if err := s.checkQuota(ctx, tx, spaceID, delta); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE spaces SET props_bytes = greatest(props_bytes + $2, 0) WHERE id = $1`, spaceID, delta)
	return err
}

// addNodes counts delta nodes into the space, checking its node cap when
// they grow: the change fails, and its transaction with it, when they take
// the space past the cap. The caller holds the space's row lock.
func (s *Store) addNodes(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	if delta <= 0 {
		return s.countNodes(ctx, tx, spaceID, delta)
	}
	var (
		typ          string
		quota, nodes int64
	)
	err := tx.QueryRow(ctx, `UPDATE spaces SET nodes = greatest(nodes + $2, 0) WHERE id = $1 RETURNING type, quota, nodes`,
		spaceID, delta).Scan(&typ, &quota, &nodes)
	if err != nil {
		return fmt.Errorf("counting %d nodes into space %s: %w", delta, spaceID, err)
	}
	quota = storage.EffectiveQuota(storage.Space{Type: storage.SpaceType(typ), Quota: quota}, s.personalQuota.Load()).Quota
	return storage.CheckNodes(nodes-delta, storage.NodeCap(quota, s.maxNodes.Load()), delta)
}

// overNodeCap reports whether the space holds more nodes than its node
// cap.
func (s *Store) overNodeCap(ctx context.Context, tx pgx.Tx, spaceID string) (bool, error) {
	var (
		typ          string
		quota, nodes int64
	)
	err := tx.QueryRow(ctx, `SELECT type, quota, nodes FROM spaces WHERE id = $1`, spaceID).Scan(&typ, &quota, &nodes)
	if err != nil {
		return false, fmt.Errorf("nodes of space %s: %w", spaceID, err)
	}
	quota = storage.EffectiveQuota(storage.Space{Type: storage.SpaceType(typ), Quota: quota}, s.personalQuota.Load()).Quota
	return nodes > storage.NodeCap(quota, s.maxNodes.Load()), nil
}

// countNodes counts delta nodes into the space without a check: for what
// takes nodes away, or adds one in place of one it took.
func (s *Store) countNodes(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	if delta == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE spaces SET nodes = greatest(nodes + $2, 0) WHERE id = $1`, spaceID, delta)
	if err != nil {
		return fmt.Errorf("counting %d nodes into space %s: %w", delta, spaceID, err)
	}
	return nil
}

// subtree begins a statement ($1: a node's id) whose sub holds the ids of
// the node and of every node below it.
const subtree = `
	WITH RECURSIVE sub AS (
		SELECT id FROM nodes WHERE id = $1
		UNION ALL
		SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id
	)`

// subtreePropBytes is what the dead properties at and below top count
// (storage.PropBytes), shared ones only when sharedOnly is set.
func subtreePropBytes(ctx context.Context, tx pgx.Tx, topID string, sharedOnly bool) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, subtree+`
		SELECT coalesce(sum(octet_length(p.ns) + octet_length(p.local) + octet_length(p.value)), 0)::bigint
		FROM props p JOIN sub ON p.node_id = sub.id WHERE NOT $2 OR p.user_id = ''`, topID, sharedOnly).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting the properties below %s: %w", topID, err)
	}
	return n, nil
}

// countCopiedProps counts the shared properties a copy made at and below
// top into the space, and fails when the copy, which grew the files by
// grown bytes, now takes the space over its quota.
func (s *Store) countCopiedProps(ctx context.Context, tx pgx.Tx, spaceID, topID string, grown int64) error {
	copied, err := subtreePropBytes(ctx, tx, topID, true)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE spaces SET props_bytes = props_bytes + $2 WHERE id = $1`, spaceID, copied); err != nil {
		return err
	}
	return s.checkGrowthWithinQuota(ctx, tx, spaceID, max(grown, 0)+copied)
}

// checkGrowthWithinQuota fails with ErrInsufficientStorage when the space
// now holds more than its quota after growing by grown bytes: a copy,
// whose files were checked before it began, also copies dead properties.
func (s *Store) checkGrowthWithinQuota(ctx context.Context, tx pgx.Tx, spaceID string, grown int64) error {
	if grown <= 0 {
		return nil
	}
	u, quota, err := s.spaceUsage(ctx, tx, spaceID)
	if err != nil || quota < 0 {
		return err
	}
	return u.CheckWithin(quota)
}

// openUploads counts the unfinished uploads of user, resumable and
// chunked. The caller holds the user's advisory lock (lockUserUploads).
func openUploads(ctx context.Context, tx pgx.Tx, user string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM upload_sessions WHERE user_id = $1)
		+ (SELECT count(*) FROM chunked_uploads WHERE user_id = $1)`, user).Scan(&n)
	return n, err
}

// openUpload checks that user may start another unfinished upload under
// limit, holding the user's advisory lock to the end of tx so that
// concurrent creations on any node are counted one after the other.
func openUpload(ctx context.Context, tx pgx.Tx, user string, limit int) error {
	if limit <= 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, uploadsLock, user); err != nil {
		return err
	}
	n, err := openUploads(ctx, tx, user)
	if err != nil {
		return err
	}
	return storage.CheckOpenUploads(n, limit)
}

// uploadsLock is the first key of the advisory locks under which a user's
// uploads are counted.
const uploadsLock = 0x75706c64 // "upld"
