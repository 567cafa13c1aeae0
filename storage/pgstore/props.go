package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// propRow is a row of props.
type propRow struct {
	NodeID string `db:"node_id"`
	User   string `db:"user_id"`
	Space  string `db:"ns"`
	Local  string `db:"local"`
	Value  string `db:"value"`
}

func (r propRow) property() storage.Property {
	return storage.Property{Name: storage.PropName{Space: r.Space, Local: r.Local}, User: r.User, Value: r.Value}
}

// validProp refuses what every store refuses (storage.ValidProperty) and
// a NUL in the value, which PostgreSQL text cannot hold.
func validProp(p storage.Property) error {
	if err := storage.ValidProperty(p); err != nil {
		return err
	}
	if strings.IndexByte(p.Value, 0) >= 0 {
		return storage.InvalidProperty(p.Name)
	}
	return nil
}

// propOrder orders the properties of nodes: shared ones first, then each
// in name order (namespace, then local name, bytewise).
const propOrder = ` ORDER BY p.node_id, p.user_id, p.ns, p.local`

// nodeProps returns the shared dead properties of a node, then those of
// user.
func nodeProps(ctx context.Context, tx pgx.Tx, nodeID, user string) ([]storage.Property, error) {
	rows, _ := tx.Query(ctx, `SELECT p.node_id, p.user_id, p.ns, p.local, p.value FROM props p
		WHERE p.node_id = $1 AND (p.user_id = '' OR p.user_id = $2)`+propOrder, nodeID, user)
	props, err := collectProps(rows)
	return props[nodeID], err
}

// childProps returns the properties nodeProps would of each child of a
// folder whose name is in (after, last]: a page of a listing. It selects
// by the page's range, not by a list of ids, which PostgreSQL would plan
// element by element.
func childProps(ctx context.Context, tx pgx.Tx, folderID, after, last, user string) (map[string][]storage.Property, error) {
	rows, _ := tx.Query(ctx, `SELECT p.node_id, p.user_id, p.ns, p.local, p.value
		FROM nodes n JOIN props p ON p.node_id = n.id
		WHERE n.parent_id = $1 AND n.name > $2 AND n.name <= $3 AND (p.user_id = '' OR p.user_id = $4)`+propOrder,
		folderID, after, last, user)
	return collectProps(rows)
}

// collectProps groups rows of properties by node.
func collectProps(rows pgx.Rows) (map[string][]storage.Property, error) {
	out := map[string][]storage.Property{}
	var r propRow
	_, err := pgx.ForEachRow(rows, []any{&r.NodeID, &r.User, &r.Space, &r.Local, &r.Value}, func() error {
		out[r.NodeID] = append(out[r.NodeID], r.property())
		return nil
	})
	return out, err
}

// Props returns the dead properties of a node: the shared ones, then those
// of user, each in name order.
func (s *Store) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	if err := storage.ValidPropUser(user); err != nil {
		return nil, fmt.Errorf("props of %s: %w", nodeID, err)
	}
	var out []storage.Property
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := nodeIn(ctx, tx, spaceID, nodeID); err != nil {
			return err
		}
		var err error
		out, err = nodeProps(ctx, tx, nodeID, user)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("props of %s: %w", nodeID, err)
	}
	return out, nil
}

// PatchProps applies all patches in one transaction, or none. Dead
// properties are not content: etags and modification times stay. A patch
// that would take a scope of the node over MaxPropsPerNode or
// MaxPropBytesPerNode fails with ErrInsufficientStorage; one that shrinks
// an oversized scope succeeds. It holds the space's row lock, so that two
// patches of one node cannot pass the limits together.
func (s *Store) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	for _, p := range patches {
		if err := validProp(p.Property); err != nil {
			return fmt.Errorf("patch props of %s: %w", nodeID, err)
		}
	}
	err := s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
		if _, err := nodeIn(ctx, tx, spaceID, nodeID); err != nil {
			return err
		}
		grown, err := patchProps(ctx, tx, nodeID, patches)
		if err != nil {
			return err
		}
		return s.addProps(ctx, tx, spaceID, grown)
	})
	if err != nil {
		return fmt.Errorf("patch props of %s: %w", nodeID, err)
	}
	return nil
}

// patchProps applies the patches to a node's properties, keeping each scope
// it grows within the limits, and returns by how many bytes they grew.
func patchProps(ctx context.Context, tx pgx.Tx, nodeID string, patches []storage.PropPatch) (int64, error) {
	before := map[string]storage.PropUsage{}
	for _, p := range patches {
		if _, ok := before[p.User]; ok {
			continue
		}
		u, err := usage(ctx, tx, nodeID, p.User)
		if err != nil {
			return 0, err
		}
		before[p.User] = u
	}
	for _, p := range patches {
		if err := patchProp(ctx, tx, nodeID, p); err != nil {
			return 0, err
		}
	}
	var grown int64
	for user, was := range before {
		u, err := usage(ctx, tx, nodeID, user)
		if err != nil {
			return 0, err
		}
		if err := storage.CheckPropGrowth(was, u); err != nil {
			return 0, err
		}
		grown += int64(u.Bytes - was.Bytes)
	}
	return grown, nil
}

func patchProp(ctx context.Context, tx pgx.Tx, nodeID string, p storage.PropPatch) error {
	var err error
	if p.Remove {
		_, err = tx.Exec(ctx, `DELETE FROM props WHERE node_id = $1 AND user_id = $2 AND ns = $3 AND local = $4`,
			nodeID, p.User, p.Name.Space, p.Name.Local)
	} else {
		_, err = tx.Exec(ctx, `INSERT INTO props (node_id, user_id, ns, local, value) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (node_id, user_id, ns, local) DO UPDATE SET value = excluded.value`,
			nodeID, p.User, p.Name.Space, p.Name.Local, p.Value)
	}
	if err != nil {
		return fmt.Errorf("property {%s}%s: %w", p.Name.Space, p.Name.Local, err)
	}
	return nil
}

// usage counts the properties of one scope of a node, in bytes as
// boltstore counts them.
func usage(ctx context.Context, tx pgx.Tx, nodeID, user string) (storage.PropUsage, error) {
	var u storage.PropUsage
	err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(octet_length(ns) + octet_length(local) + octet_length(value)), 0)
		FROM props WHERE node_id = $1 AND user_id = $2`, nodeID, user).Scan(&u.Count, &u.Bytes)
	return u, err
}
