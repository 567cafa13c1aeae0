package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// A share's record lives in the shares bucket under its id. A link's
// token maps to its id in share_tokens, and three indexes hold a key per
// share ending in \0 + its id, with an empty value, so that every listing
// is one prefix scan:
//
//	share_items     space id \0 node id \0 share id
//	share_creators  creator \0 share id
//	share_grantees  kind byte, grantee \0 share id (users and groups only)
//
// A share changes with its item in the same transaction: Remove and the
// target a Move or Copy replaces go through discard, which deletes the
// shares of the discarded subtree first (deleteSharesBelow). A move keeps
// the item's id, which is all a share names, so it needs nothing.

// storage.Shares is implemented here.
var _ storage.Shares = (*Store)(nil)

// The share buckets, new in a database from before them: Open creates them.
var (
	bucketShares        = []byte("shares")
	bucketShareTokens   = []byte("share_tokens")
	bucketShareItems    = []byte("share_items")
	bucketShareCreators = []byte("share_creators")
	bucketShareGrantees = []byte("share_grantees")
)

// shareBuckets are the buckets a txn has opened for shares.
type shareBuckets struct {
	shares, tokens, items, creators, grantees *bolt.Bucket
}

func (t *txn) shares() countedBucket { return t.bucket(&t.open.share.shares, bucketShares) }

func (t *txn) shareTokens() countedBucket {
	return t.bucket(&t.open.share.tokens, bucketShareTokens)
}

func (t *txn) shareItems() countedBucket { return t.bucket(&t.open.share.items, bucketShareItems) }

func (t *txn) shareCreators() countedBucket {
	return t.bucket(&t.open.share.creators, bucketShareCreators)
}

func (t *txn) shareGrantees() countedBucket {
	return t.bucket(&t.open.share.grantees, bucketShareGrantees)
}

// itemSharesPrefix is the prefix of the share_items keys of node nodeID of
// space spaceID; with nodeID empty, of the space's first key of all.
func itemSharesPrefix(spaceID, nodeID string) []byte {
	k := append([]byte(spaceID), 0)
	if nodeID == "" {
		return k
	}
	return append(append(k, nodeID...), 0)
}

func creatorSharesPrefix(creator string) []byte { return append([]byte(creator), 0) }

func granteeSharesPrefix(kind storage.ShareKind, grantee string) []byte {
	return append(append([]byte{byte(kind)}, grantee...), 0)
}

// indexKeys returns the keys of sh in share_items, share_creators and, for
// a share with a user or group, share_grantees (else nil).
func indexKeys(sh *storage.Share) (item, creator, grantee []byte) {
	item = append(itemSharesPrefix(sh.SpaceID, sh.NodeID), sh.ID...)
	creator = append(creatorSharesPrefix(sh.Creator), sh.ID...)
	if sh.Kind != storage.ShareLink {
		grantee = append(granteeSharesPrefix(sh.Kind, sh.Grantee), sh.ID...)
	}
	return item, creator, grantee
}

// putShare writes sh, new or changed, with its index entries; a share's
// indexed fields never change.
func (t *txn) putShare(sh *storage.Share) error {
	if err := t.shares().Put([]byte(sh.ID), encodeShare(sh)); err != nil {
		return err
	}
	item, creator, grantee := indexKeys(sh)
	if err := t.shareItems().Put(item, nil); err != nil {
		return err
	}
	if err := t.shareCreators().Put(creator, nil); err != nil {
		return err
	}
	if grantee != nil {
		if err := t.shareGrantees().Put(grantee, nil); err != nil {
			return err
		}
	}
	if sh.Token != "" {
		return t.shareTokens().Put([]byte(sh.Token), []byte(sh.ID))
	}
	return nil
}

// deleteShare deletes sh and its index entries.
func (t *txn) deleteShare(sh *storage.Share) error {
	if err := t.shares().Delete([]byte(sh.ID)); err != nil {
		return err
	}
	item, creator, grantee := indexKeys(sh)
	if err := t.shareItems().Delete(item); err != nil {
		return err
	}
	if err := t.shareCreators().Delete(creator); err != nil {
		return err
	}
	if grantee != nil {
		if err := t.shareGrantees().Delete(grantee); err != nil {
			return err
		}
	}
	if sh.Token != "" {
		return t.shareTokens().Delete([]byte(sh.Token))
	}
	return nil
}

// share returns share id, or a wrapped ErrNotFound.
func (t *txn) share(id string) (storage.Share, error) {
	v := t.shares().Get([]byte(id))
	if v == nil {
		return storage.Share{}, storage.ShareNotFound(id)
	}
	return decodeShare(id, v)
}

// indexedShares returns the shares whose ids end the keys of bucket b under
// prefix and for which keep is true.
func (t *txn) indexedShares(b countedBucket, prefix []byte, keep func(storage.Share) bool) ([]storage.Share, error) {
	var out []storage.Share
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[bytes.LastIndexByte(k, 0)+1:]
		v := t.shares().Get(id)
		if v == nil {
			return nil, fmt.Errorf("share index entry %q names no share: %w", k, errCorrupt)
		}
		sh, err := decodeShare(string(id), v)
		if err != nil {
			return nil, err
		}
		if keep(sh) {
			out = append(out, sh)
		}
	}
	return out, nil
}

// itemShares returns the shares of node nodeID of space spaceID, or of
// every node of the space with nodeID empty. The fields are compared
// again: a user id may hold a \0, and prefixes then overlap.
func (t *txn) itemShares(spaceID, nodeID string) ([]storage.Share, error) {
	return t.indexedShares(t.shareItems(), itemSharesPrefix(spaceID, nodeID), func(sh storage.Share) bool {
		return sh.SpaceID == spaceID && (nodeID == "" || sh.NodeID == nodeID)
	})
}

// countSharesBy returns how many shares creator has made, counting up to
// limit only.
func (t *txn) countSharesBy(creator string, limit int) int {
	prefix := creatorSharesPrefix(creator)
	n := 0
	c := t.shareCreators().Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < limit; k, _ = c.Next() {
		if bytes.IndexByte(k[len(prefix):], 0) < 0 {
			n++
		}
	}
	return n
}

// deleteSharesBelow deletes the shares of top and of every node below it,
// top a live node of space spaceID about to leave the live tree. A space
// has few shares next to its nodes, so each shared node is walked up to
// see whether top is above it, rather than top's subtree walked down: a
// folder with no shares in its space costs one seek however big it is.
// The item index's keys name the nodes, so only the shares that go are
// read.
func (t *txn) deleteSharesBelow(spaceID string, top rec) error {
	prefix := itemSharesPrefix(spaceID, "")
	var doomed []string // ids of the shares below top
	below := ancestry{top: top.ID, memo: map[string]bool{}}
	c := t.shareItems().Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		nodeID, shareID, ok := bytes.Cut(k[len(prefix):], []byte{0})
		if !ok {
			return fmt.Errorf("share index entry %q: %w", k, errCorrupt)
		}
		in, err := below.has(t, string(nodeID))
		if err != nil {
			return err
		}
		if in {
			doomed = append(doomed, string(shareID))
		}
	}
	for _, id := range doomed {
		sh, err := t.share(id)
		if err != nil {
			return err
		}
		if err := t.deleteShare(&sh); err != nil {
			return err
		}
	}
	return nil
}

// ancestry answers whether nodes are top or below it, remembering the
// answer for every node it walked through, so that shares on nodes of one
// branch cost one walk up that branch between them. A node whose parent
// chain breaks is not below top: every node below top is reached from it.
type ancestry struct {
	top  string
	memo map[string]bool // node id → whether top is it or above it
}

func (a *ancestry) has(t *txn, id string) (bool, error) {
	var walked []string
	in := false
	for up := id; up != "" && !isTrashRoot(up); {
		if known, ok := a.memo[up]; ok {
			in = known
			break
		}
		walked = append(walked, up)
		if up == a.top {
			in = true
			break
		}
		r, ok, err := t.node(up)
		if err != nil {
			return false, err
		}
		if !ok {
			break // damage Check reports; no reason to refuse the remove
		}
		up = r.ParentID
	}
	for _, w := range walked {
		a.memo[w] = in
	}
	return in, nil
}

// sharedItem returns the item of a new share or of a share being changed:
// a live node of its space.
func (t *txn) sharedItem(sh storage.Share) (rec, error) {
	return t.nodeIn(sh.SpaceID, sh.NodeID)
}

// CreateShare keeps a new share (storage.Shares).
func (s *Store) CreateShare(ctx context.Context, sh storage.Share) (storage.Share, error) {
	if err := ctx.Err(); err != nil {
		return storage.Share{}, err
	}
	sh.ID, sh.Token = storage.NewShareID(), ""
	if sh.Kind == storage.ShareLink {
		sh.Token = storage.NewLinkToken()
	}
	limit := storage.ShareCap(s.shareCap.Load())
	err := s.update(func(t *txn) error {
		item, err := t.sharedItem(sh)
		if err != nil {
			return err
		}
		sh.Created = t.now
		if err := storage.CheckNewShare(sh, item.Node, t.now); err != nil {
			return err
		}
		if err := t.checkNoTwin(sh); err != nil {
			return err
		}
		if err := storage.CheckShareCountWithin(t.countSharesBy(sh.Creator, limit), limit); err != nil {
			return err
		}
		return t.putShare(&sh)
	})
	if err != nil {
		return storage.Share{}, fmt.Errorf("create share of %s: %w", sh.NodeID, err)
	}
	return sh, nil
}

// checkNoTwin refuses a second share of an item with the same user or
// group.
func (t *txn) checkNoTwin(sh storage.Share) error {
	if sh.Kind == storage.ShareLink {
		return nil
	}
	shares, err := t.itemShares(sh.SpaceID, sh.NodeID)
	if err != nil {
		return err
	}
	for _, other := range shares {
		if other.Kind == sh.Kind && other.Grantee == sh.Grantee {
			return fmt.Errorf("already shared with %.64q: %w", sh.Grantee, storage.ErrExists)
		}
	}
	return nil
}

// UpdateShare changes what a share lets do and until when
// (storage.Shares).
func (s *Store) UpdateShare(ctx context.Context, id string, update storage.Share) (storage.Share, error) {
	out, err := inTxn(ctx, s.update, func(t *txn) (storage.Share, error) {
		old, err := t.share(id)
		if err != nil {
			return storage.Share{}, err
		}
		item, err := t.sharedItem(old)
		if err != nil {
			return storage.Share{}, err
		}
		if err := storage.CheckShareUpdate(old, update, item.Node, t.now); err != nil {
			return storage.Share{}, err
		}
		out := old
		out.Role, out.PasswordHash, out.DisplayName, out.Expires = update.Role, update.PasswordHash, update.DisplayName, update.Expires
		return out, t.shares().Put([]byte(id), encodeShare(&out))
	})
	if err != nil {
		return storage.Share{}, fmt.Errorf("update share: %w", err)
	}
	return out, nil
}

// DeleteShare deletes a share (storage.Shares).
func (s *Store) DeleteShare(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(t *txn) error {
		sh, err := t.share(id)
		if err != nil {
			return err
		}
		return t.deleteShare(&sh)
	})
	if err != nil {
		return fmt.Errorf("delete share: %w", err)
	}
	return nil
}

// Share returns a share by id (storage.Shares).
func (s *Store) Share(ctx context.Context, id string) (storage.Share, error) {
	return inTxn(ctx, s.view, func(t *txn) (storage.Share, error) { return t.share(id) })
}

// LinkByToken returns the link of a token, expired or not
// (storage.Shares).
func (s *Store) LinkByToken(ctx context.Context, token string) (storage.Share, error) {
	if err := storage.ValidLinkToken(token); err != nil {
		return storage.Share{}, err
	}
	return inTxn(ctx, s.view, func(t *txn) (storage.Share, error) {
		id := t.shareTokens().Get([]byte(token))
		if id == nil {
			return storage.Share{}, storage.LinkNotFound()
		}
		return t.share(string(id))
	})
}

// ItemShares returns the shares of an item or of a whole space
// (storage.Shares).
func (s *Store) ItemShares(ctx context.Context, spaceID, nodeID string) ([]storage.Share, error) {
	return s.listShares(ctx, func(t *txn) ([]storage.Share, error) { return t.itemShares(spaceID, nodeID) })
}

// SharesBy returns the shares a user made (storage.Shares).
func (s *Store) SharesBy(ctx context.Context, creator string) ([]storage.Share, error) {
	return s.listShares(ctx, func(t *txn) ([]storage.Share, error) {
		return t.indexedShares(t.shareCreators(), creatorSharesPrefix(creator), func(sh storage.Share) bool {
			return sh.Creator == creator
		})
	})
}

// SharesWith returns the shares with a user and with the user's groups
// (storage.Shares).
func (s *Store) SharesWith(ctx context.Context, u storage.User) ([]storage.Share, error) {
	return s.listShares(ctx, func(t *txn) ([]storage.Share, error) {
		with := func(sh storage.Share) bool { return storage.SharedWith(sh, u) }
		out, err := t.indexedShares(t.shareGrantees(), granteeSharesPrefix(storage.ShareWithUser, u.ID), with)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{} // a user's token may name a group twice
		for _, g := range u.Groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			shares, err := t.indexedShares(t.shareGrantees(), granteeSharesPrefix(storage.ShareWithGroup, g), with)
			if err != nil {
				return nil, err
			}
			out = append(out, shares...)
		}
		return out, nil
	})
}

// listShares returns what list finds in a snapshot, in SortShares order.
func (s *Store) listShares(ctx context.Context, list func(t *txn) ([]storage.Share, error)) ([]storage.Share, error) {
	out, err := inTxn(ctx, s.view, list)
	if err != nil {
		return nil, fmt.Errorf("list shares: %w", err)
	}
	storage.SortShares(out)
	return out, nil
}

// SetMaxSharesPerCreator lowers (or raises) how many shares one user may
// have, n <= 0 restoring storage.MaxSharesPerCreator: tests reach the cap
// without making ten thousand shares.
func (s *Store) SetMaxSharesPerCreator(n int) { s.shareCap.Store(int64(n)) }
