package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// Property keys are node id \0 user \0 namespace \0 local name; user is
// empty for shared properties. None of the first three parts may contain a
// NUL, so prefixes select a node's properties, its shared ones or those of
// one user.

func propKey(nodeID, user string, name storage.PropName) []byte {
	k := make([]byte, 0, len(nodeID)+len(user)+len(name.Space)+len(name.Local)+3)
	k = append(k, nodeID...)
	k = append(k, 0)
	k = append(k, user...)
	k = append(k, 0)
	k = append(k, name.Space...)
	k = append(k, 0)
	return append(k, name.Local...)
}

func propPrefix(parts ...string) []byte {
	var k []byte
	for _, p := range parts {
		k = append(k, p...)
		k = append(k, 0)
	}
	return k
}

// Props returns the dead properties of a node: the shared ones, then those
// of user, each in key order.
func (s *Store) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := storage.ValidPropUser(user); err != nil {
		return nil, fmt.Errorf("props of %s: %w", nodeID, err)
	}
	var out []storage.Property
	err := s.view(func(t *txn) (err error) {
		if _, err := t.nodeIn(spaceID, nodeID); err != nil {
			return err
		}
		out, err = t.nodeProps(nodeID, user)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("props of %s: %w", nodeID, err)
	}
	return out, nil
}

// nodeProps reads the shared dead properties of a node, then those of user.
func (t *txn) nodeProps(nodeID, user string) ([]storage.Property, error) {
	return t.newPropReader().read(nodeID, user)
}

// propReader reads the properties of node after node with one cursor and
// one key buffer, as a listing does.
type propReader struct {
	c   *bolt.Cursor
	key []byte
}

func (t *txn) newPropReader() *propReader {
	return &propReader{c: t.props().Cursor()}
}

// read returns the shared dead properties of a node, then those of user.
// Shared keys sort first among a node's, so a node without properties
// costs one seek, and the user's are sought only when the node has others.
func (pr *propReader) read(nodeID, user string) ([]storage.Property, error) {
	node := append(append(pr.key[:0], nodeID...), 0)
	shared := append(node, 0)
	out, next, err := pr.scan(nil, shared, "")
	if err != nil || user == "" || !bytes.HasPrefix(next, node) {
		pr.key = shared
		return out, err
	}
	mine := append(append(shared[:len(node)], user...), 0)
	pr.key = mine
	out, _, err = pr.scan(out, mine, user)
	return out, err
}

// scan appends the properties of user under prefix and returns the first
// key past them.
func (pr *propReader) scan(out []storage.Property, prefix []byte, user string) ([]storage.Property, []byte, error) {
	k, v := pr.c.Seek(prefix)
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = pr.c.Next() {
		ns, local, ok := bytes.Cut(k[len(prefix):], []byte{0})
		if !ok {
			return nil, nil, fmt.Errorf("property key %q: %w", k, errCorrupt)
		}
		out = append(out, storage.Property{
			Name:  storage.PropName{Space: string(ns), Local: string(local)},
			User:  user,
			Value: string(v),
		})
	}
	return out, k, nil
}

// PatchProps applies all patches in one transaction, or none. Dead
// properties are not content: etags and modification times stay. A patch
// that would take a scope of the node over MaxPropsPerNode or
// MaxPropBytesPerNode fails with ErrInsufficientStorage; one that shrinks an
// oversized scope succeeds.
func (s *Store) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range patches {
		if err := storage.ValidProperty(p.Property); err != nil {
			return fmt.Errorf("patch props of %s: %w", nodeID, err)
		}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		t := s.newTxn(tx)
		if _, err := t.nodeIn(spaceID, nodeID); err != nil {
			return err
		}
		return t.patchProps(spaceID, nodeID, patches)
	})
	if err != nil {
		return fmt.Errorf("patch props of %s: %w", nodeID, diskFull(err))
	}
	return nil
}

func propSize(name storage.PropName, value []byte) int {
	return len(name.Space) + len(name.Local) + len(value)
}

// patchProps applies the patches to a node's properties, keeping each scope
// it grows within the limits and the space within its quota.
func (t *txn) patchProps(spaceID, nodeID string, patches []storage.PropPatch) error {
	before := map[string]storage.PropUsage{}
	after := map[string]storage.PropUsage{}
	var grown int64 // bytes the space's properties grow by
	for _, p := range patches {
		if _, ok := before[p.User]; !ok {
			before[p.User] = t.propUsage(nodeID, p.User)
			after[p.User] = before[p.User]
		}
		u := after[p.User]
		k := propKey(nodeID, p.User, p.Name)
		if old := t.props().Get(k); old != nil {
			u.Count--
			u.Bytes -= propSize(p.Name, old)
			grown -= storage.PropBytes(p.Name, string(old))
		}
		var err error
		if p.Remove {
			err = t.props().Delete(k)
		} else {
			u.Count++
			u.Bytes += propSize(p.Name, []byte(p.Value))
			grown += storage.PropBytes(p.Name, p.Value)
			err = t.props().Put(k, []byte(p.Value))
		}
		if err != nil {
			return err
		}
		after[p.User] = u
	}
	for user, u := range after {
		if err := storage.CheckPropGrowth(before[user], u); err != nil {
			return err
		}
	}
	return t.addProps(spaceID, grown)
}

// propUsage counts the properties of one scope of a node.
func (t *txn) propUsage(nodeID, user string) storage.PropUsage {
	var u storage.PropUsage
	prefix := propPrefix(nodeID, user)
	c := t.props().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		u.Count++
		u.Bytes += len(k) - len(prefix) - 1 + len(v) // namespace \0 local
	}
	return u
}

// deleteProps deletes every property of node nodeID, counting them out of
// space spaceID (a node in the trash still counts in its space).
func (t *txn) deleteProps(spaceID, nodeID string) error {
	prefix := propPrefix(nodeID)
	var (
		keys  [][]byte
		freed int64
	)
	c := t.props().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		keys = append(keys, bytes.Clone(k))
		freed += propKeyBytes(k, len(prefix)) + int64(len(v))
	}
	for _, k := range keys {
		if err := t.props().Delete(k); err != nil {
			return err
		}
	}
	return t.addProps(spaceID, -freed)
}

// propKeyBytes is what the name in property key k counts (PropBytes):
// the namespace and local name after the node's prefix, the user and its
// NUL, without the NUL between them.
func propKeyBytes(k []byte, prefix int) int64 {
	_, name, _ := bytes.Cut(k[prefix:], []byte{0})
	return int64(len(name) - 1)
}

// copyProps copies the shared properties of node from to node to, counting
// them into the space of to. The quota is checked once the whole copy is
// in (checkWithinQuota), not node by node.
func (t *txn) copyProps(from string, to rec) error {
	var copied int64
	prefix := propPrefix(from, "")
	type kv struct{ k, v []byte }
	var copies []kv
	c := t.props().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		nk := append([]byte(to.ID), k[len(from):]...)
		copies = append(copies, kv{nk, bytes.Clone(v)})
		copied += propKeyBytes(k, len(from)+1) + int64(len(v))
	}
	for _, p := range copies {
		if err := t.props().Put(p.k, p.v); err != nil {
			return err
		}
	}
	counters := t.spaceCounters(to.SpaceID)
	counters.props += copied
	return t.putSpaceCounters(to.SpaceID, counters)
}
