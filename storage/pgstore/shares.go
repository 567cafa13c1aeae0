package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// Shares live in their own table (schema.sql) beside the tree. Creating
// one holds its space's row lock, as every change of the tree does, so
// that a share is never made on an item a concurrent Remove is taking out
// of the space: whichever commits second sees what the first did. The
// change that takes an item out deletes its shares (discard →
// deleteSharesBelow) in its own transaction.

var _ storage.Shares = (*Store)(nil)

// shareColumns are the columns shareRow scans, from shares s joined with
// the live node n of its item.
const shareColumns = `s.id, s.kind, s.space_id, s.node_id, s.creator, s.role, s.grantee,
	coalesce(s.token, '') AS token, s.password_hash, s.display_name, s.expires_ns, s.created_ns
	FROM shares s JOIN nodes n ON n.id = s.node_id AND n.space_id = s.space_id`

// shareRow is a row of shares.
type shareRow struct {
	ID           string `db:"id"`
	Kind         int16  `db:"kind"`
	SpaceID      string `db:"space_id"`
	NodeID       string `db:"node_id"`
	Creator      string `db:"creator"`
	Role         int16  `db:"role"`
	Grantee      string `db:"grantee"`
	Token        string `db:"token"`
	PasswordHash []byte `db:"password_hash"`
	DisplayName  string `db:"display_name"`
	ExpiresNS    *int64 `db:"expires_ns"`
	CreatedNS    int64  `db:"created_ns"`
}

// share is the storage.Share the row describes.
func (r shareRow) share() storage.Share {
	return storage.Share{
		ID:           r.ID,
		Kind:         storage.ShareKind(r.Kind),
		SpaceID:      r.SpaceID,
		NodeID:       r.NodeID,
		Creator:      r.Creator,
		Role:         storage.ShareRole(r.Role),
		Grantee:      r.Grantee,
		Token:        r.Token,
		PasswordHash: nonEmpty(r.PasswordHash),
		DisplayName:  r.DisplayName,
		Expires:      fromNanos(r.ExpiresNS),
		Created:      time.Unix(0, r.CreatedNS).UTC(),
	}
}

// nonEmpty is b, or nil when it holds nothing: no password.
func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// shareNanos is a share's expiry as kept (unixNanos), but for a time past
// what Unix nanoseconds hold (the year 2262), kept as the last one they
// do, which is as good as never: clients send such dates.
func shareNanos(t time.Time) *int64 {
	if last := time.Unix(0, math.MaxInt64); t.After(last) {
		t = last
	}
	return unixNanos(t)
}

// queryShares returns the live shares the condition selects, in
// SortShares order.
func queryShares(ctx context.Context, q querier, where string, args ...any) ([]storage.Share, error) {
	rows, _ := q.Query(ctx, `SELECT `+shareColumns+` WHERE `+where, args...)
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByName[shareRow])
	if err != nil {
		return nil, classify(err)
	}
	out := mapRows(rs, shareRow.share)
	storage.SortShares(out)
	return out, nil
}

// shareByID returns the live share id, or a wrapped ErrNotFound; lock
// takes its row lock to the end of the transaction.
func shareByID(ctx context.Context, q querier, id string, lock bool) (storage.Share, error) {
	where := `s.id = $1`
	if lock {
		where += ` FOR UPDATE OF s`
	}
	shares, err := queryShares(ctx, q, where, id)
	if err != nil {
		return storage.Share{}, err
	}
	if len(shares) == 0 {
		return storage.Share{}, storage.ShareNotFound(id)
	}
	return shares[0], nil
}

// sharesLock is the first key of the advisory locks under which a user's
// shares are counted.
const sharesLock = 0x73687273 // "shrs"

// CreateShare keeps a new share (storage.Shares).
func (s *Store) CreateShare(ctx context.Context, sh storage.Share) (storage.Share, error) {
	err := s.inSpace(ctx, sh.SpaceID, func(tx pgx.Tx) error {
		item, err := nodeIn(ctx, tx, sh.SpaceID, sh.NodeID)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if err := storage.CheckNewShare(sh, item.node(), now); err != nil {
			return err
		}
		if err := countShare(ctx, tx, sh.Creator, storage.ShareCap(s.shareCap.Load())); err != nil {
			return err
		}
		sh.ID, sh.Created, sh.Token = storage.NewShareID(), time.Unix(0, now.UnixNano()).UTC(), ""
		if sh.Kind == storage.ShareLink {
			sh.Token = storage.NewLinkToken()
		}
		return insertShare(ctx, tx, sh)
	})
	if err != nil {
		return storage.Share{}, fmt.Errorf("create share of %s: %w", sh.NodeID, err)
	}
	sh.Expires = fromNanos(shareNanos(sh.Expires))
	return sh, nil
}

// countShare checks that creator may make another share under limit,
// holding the creator's advisory lock to the end of tx so that concurrent
// creations in any space, on any node, are counted one after the other.
func countShare(ctx context.Context, tx pgx.Tx, creator string, limit int) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, sharesLock, creator); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM shares WHERE creator = $1`, creator).Scan(&n); err != nil {
		return fmt.Errorf("counting the shares of %s: %w", creator, err)
	}
	return storage.CheckShareCountWithin(n, limit)
}

// insertShare inserts sh; a share of its item with its grantee is
// ErrExists (shares_one_per_grantee, whose "kind <> 3" leaves links out).
func insertShare(ctx context.Context, tx pgx.Tx, sh storage.Share) error {
	var token *string
	if sh.Token != "" {
		token = &sh.Token
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO shares (id, kind, space_id, node_id, creator, role, grantee, token,
			password_hash, display_name, expires_ns, created_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (node_id, kind, grantee) WHERE kind <> 3 DO NOTHING`,
		sh.ID, sh.Kind, sh.SpaceID, sh.NodeID, sh.Creator, sh.Role, sh.Grantee, token,
		nonEmpty(sh.PasswordHash), sh.DisplayName, shareNanos(sh.Expires), sh.Created.UnixNano())
	if err != nil {
		return fmt.Errorf("inserting share %s: %w", sh.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("a share with %q: %w", sh.Grantee, storage.ErrExists)
	}
	return nil
}

// UpdateShare changes a share's role, password, name and expiry
// (storage.Shares). It holds the share's row lock, which a Remove taking
// the item out waits for, or which it finds gone.
func (s *Store) UpdateShare(ctx context.Context, id string, update storage.Share) (storage.Share, error) {
	var out storage.Share
	err := s.tx(ctx, func(tx pgx.Tx) error {
		old, err := shareByID(ctx, tx, id, true)
		if err != nil {
			return err
		}
		item, err := nodeIn(ctx, tx, old.SpaceID, old.NodeID)
		if errors.Is(err, storage.ErrNotFound) {
			return storage.ShareNotFound(id)
		} else if err != nil {
			return err
		}
		if err := storage.CheckShareUpdate(old, update, item.node(), s.now().UTC()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE shares SET role = $2, password_hash = $3, display_name = $4, expires_ns = $5
			WHERE id = $1`, id, update.Role, nonEmpty(update.PasswordHash), update.DisplayName, shareNanos(update.Expires))
		if err != nil {
			return err
		}
		out, err = shareByID(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return storage.Share{}, fmt.Errorf("update share: %w", err)
	}
	return out, nil
}

// DeleteShare deletes a share (storage.Shares).
func (s *Store) DeleteShare(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := shareByID(ctx, tx, id, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM shares WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete share: %w", err)
	}
	return nil
}

// Share returns a share by id (storage.Shares).
func (s *Store) Share(ctx context.Context, id string) (storage.Share, error) {
	pool, err := s.db()
	if err != nil {
		return storage.Share{}, err
	}
	sh, err := shareByID(ctx, pool, id, false)
	if err != nil {
		return storage.Share{}, fmt.Errorf("share: %w", err)
	}
	return sh, nil
}

// LinkByToken returns the link of a token, expired or not
// (storage.Shares).
func (s *Store) LinkByToken(ctx context.Context, token string) (storage.Share, error) {
	if err := storage.ValidLinkToken(token); err != nil {
		return storage.Share{}, err
	}
	pool, err := s.db()
	if err != nil {
		return storage.Share{}, err
	}
	shares, err := queryShares(ctx, pool, `s.token = $1 AND s.kind = $2`, token, storage.ShareLink)
	if err != nil {
		return storage.Share{}, fmt.Errorf("link: %w", err)
	}
	if len(shares) == 0 {
		return storage.Share{}, storage.LinkNotFound()
	}
	return shares[0], nil
}

// ItemShares returns the shares of an item, or of every item of a space
// (storage.Shares).
func (s *Store) ItemShares(ctx context.Context, spaceID, nodeID string) ([]storage.Share, error) {
	where, args := `s.space_id = $1`, []any{spaceID}
	if nodeID != "" {
		where, args = `s.space_id = $1 AND s.node_id = $2`, append(args, nodeID)
	}
	return s.listShares(ctx, "shares of space "+spaceID, where, args...)
}

// SharesBy returns the shares a user made (storage.Shares).
func (s *Store) SharesBy(ctx context.Context, creator string) ([]storage.Share, error) {
	return s.listShares(ctx, "shares by "+creator, `s.creator = $1`, creator)
}

// SharesWith returns the shares with a user and the user's groups
// (storage.Shares).
func (s *Store) SharesWith(ctx context.Context, u storage.User) ([]storage.Share, error) {
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	return s.listShares(ctx, "shares with "+u.ID,
		`(s.kind = $1 AND s.grantee = $2) OR (s.kind = $3 AND s.grantee = ANY ($4))`,
		storage.ShareWithUser, u.ID, storage.ShareWithGroup, groups)
}

// listShares returns the shares the condition selects, in SortShares
// order; what names the listing in errors.
func (s *Store) listShares(ctx context.Context, what, where string, args ...any) ([]storage.Share, error) {
	pool, err := s.db()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := queryShares(ctx, pool, where, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// deleteSharesBelow deletes the shares of node n of the space and of
// every node below it, as n leaves the space.
func deleteSharesBelow(ctx context.Context, tx pgx.Tx, spaceID string, n nodeRow) error {
	var err error
	if n.isFolder() {
		err = deleteSharesInFolder(ctx, tx, spaceID, n.ID)
	} else {
		_, err = tx.Exec(ctx, `DELETE FROM shares WHERE space_id = $1 AND node_id = $2`, spaceID, n.ID)
	}
	if err != nil {
		return fmt.Errorf("deleting the shares below %s: %w", n.ID, err)
	}
	return nil
}

// deleteSharesInFolder deletes the shares of folder id and of everything
// below it. It walks up from each share of the space until it meets the
// folder or the root, each walk anchored at one node so that every step
// is an index lookup: its cost grows with the space's shares and the
// tree's depth, never with the size of the folder or of the table, and a
// space without shares costs one index probe.
func deleteSharesInFolder(ctx context.Context, tx pgx.Tx, spaceID, id string) error {
	var shared bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shares WHERE space_id = $1)`, spaceID).Scan(&shared); err != nil || !shared {
		return err
	}
	// The planner prices each walk as a large recursion and would spend
	// far longer compiling the statement (JIT) than running its few index
	// lookups: off for the rest of this short transaction.
	if _, err := tx.Exec(ctx, `SET LOCAL jit = off`); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `
		DELETE FROM shares s WHERE s.space_id = $1 AND EXISTS (
			WITH RECURSIVE up AS (
				SELECT id, parent_id FROM nodes WHERE id = s.node_id
				UNION ALL
				SELECT p.id, p.parent_id FROM nodes p JOIN up ON p.id = up.parent_id WHERE up.id <> $2
			)
			SELECT 1 FROM up WHERE id = $2)`, spaceID, id)
	return err
}
