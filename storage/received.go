package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Received is an item shared with a user by others' live shares: what the
// user's Shares drive shows as one mount point.
type Received struct {
	Space Space
	Item  Node
	// Shares are the user's live shares of the item (with them or one of
	// their groups), oldest first: the first one's id names the mount
	// point, and the strongest role of them all applies.
	Shares []Share
	// Name is the mount point's name: the item's, made unique ("name (2)",
	// "name (3)"…) in the order of each item's first share.
	Name string
}

// ReceivedReader is what listing a user's received shares needs of a
// store.
type ReceivedReader interface {
	SharesWith(ctx context.Context, u User) ([]Share, error)
	Node(ctx context.Context, spaceID, id string) (Node, error)
}

// ReceivedItems lists the items shared with u, one per item, in the order
// of each item's first share, as every protocol shows them (the WebDAV
// Shares drive, Graph's sharedWithMe and mount point drives). Shares are
// judged by j; those pick keeps (nil keeps all) are considered, in spaces
// serves accepts. A user's own share with a group of theirs is left out:
// they reach the item as they shared it. A share whose item is gone is
// skipped as a dead one.
func ReceivedItems(ctx context.Context, r ReceivedReader, j *ShareJudge, u User, serves func(Space) bool, pick func(Share) bool) ([]Received, error) {
	if !u.Scope.ReachesShares() {
		return nil, nil
	}
	shares, err := r.SharesWith(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("the shares with %s: %w", u.ID, err)
	}
	type itemKey struct{ space, node string }
	at := make(map[itemKey]int) // index in out, -1 for a gone item
	var out []Received
	for _, s := range shares {
		if s.Kind == ShareLink || s.Creator == u.ID || (pick != nil && !pick(s)) {
			continue
		}
		live, err := j.Live(ctx, s)
		if err != nil {
			return nil, err
		}
		if !live {
			continue
		}
		space, err := j.Space(ctx, s.SpaceID)
		if err != nil {
			return nil, fmt.Errorf("the space of share %s: %w", s.ID, err)
		}
		if !serves(space) {
			continue
		}
		key := itemKey{s.SpaceID, s.NodeID}
		if i, seen := at[key]; seen {
			if i >= 0 {
				out[i].Shares = append(out[i].Shares, s)
			}
			continue
		}
		item, err := r.Node(ctx, s.SpaceID, s.NodeID)
		if errors.Is(err, ErrNotFound) {
			at[key] = -1
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the item of share %s: %w", s.ID, err)
		}
		at[key] = len(out)
		out = append(out, Received{Space: space, Item: item, Shares: []Share{s}})
	}
	nameMounts(out)
	return out, nil
}

// nameMounts names the mount points as their items, the later of equal
// names "name (2)", "name (3)", and so on.
func nameMounts(rs []Received) {
	taken := make(map[string]bool, len(rs))
	for i := range rs {
		name := rs[i].Item.Name
		for n := 2; taken[name]; n++ {
			name = rs[i].Item.Name + " (" + strconv.Itoa(n) + ")"
		}
		taken[name] = true
		rs[i].Name = name
	}
}
