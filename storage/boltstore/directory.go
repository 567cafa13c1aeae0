package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/davspaces/davspaces/storage"
)

// The directory lives in two buckets:
//
//	directory         user id → encoded entry
//	directory_groups  group \0 user id → nothing
//
// A search of users reads the entries in id order and stops at the limit;
// a search of groups walks the group index, seeking past each group once
// it has been looked at, so that it costs a seek per distinct group
// rather than a read per member. Neither a user id nor a group holds a \0
// (CheckDirectoryEntry), so a group index key splits at its \0.

// storage.Directory is implemented here.
var _ storage.Directory = (*Store)(nil)

// The directory buckets, new in a database from before them: Open creates
// them.
var (
	bucketDirectory       = []byte("directory")
	bucketDirectoryGroups = []byte("directory_groups")
)

// directoryFormat is the format of the directory records.
const directoryFormat = 1

// encodeDirectoryEntry encodes e without its id. Layout: format, display
// name, email (strings), seen (appendTime), the count of groups, each
// group (strings).
func encodeDirectoryEntry(e *storage.DirectoryEntry) []byte {
	n := 1 + 3*binary.MaxVarintLen16 + 1 + 2*binary.MaxVarintLen64 + len(e.DisplayName) + len(e.Email)
	for _, g := range e.Groups {
		n += binary.MaxVarintLen16 + len(g)
	}
	b := make([]byte, 0, n)
	b = append(b, directoryFormat)
	b = appendString(b, e.DisplayName)
	b = appendString(b, e.Email)
	b = appendTime(b, e.Seen)
	b = binary.AppendUvarint(b, uint64(len(e.Groups)))
	for _, g := range e.Groups {
		b = appendString(b, g)
	}
	return b
}

// decodeDirectoryEntry decodes the entry of user id; with groups false it
// leaves the groups out, which a search does not need to match.
func decodeDirectoryEntry(id string, v []byte, groups bool) (storage.DirectoryEntry, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != directoryFormat {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry %s: unknown format: %w", id, errCorrupt)
	}
	e := storage.DirectoryEntry{ID: id, DisplayName: d.str(), Email: d.str(), Seen: d.time()}
	if groups {
		e.Groups = d.groups()
	}
	if d.err != nil {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry %s: %w", id, errCorrupt)
	}
	return e, nil
}

func groupMemberKey(group, userID string) []byte {
	return append(append([]byte(group), 0), userID...)
}

// RememberUser keeps e as the entry of e.ID (storage.Directory).
func (s *Store) RememberUser(ctx context.Context, e storage.DirectoryEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storage.CheckDirectoryEntry(e); err != nil {
		return fmt.Errorf("remember user: %w", err)
	}
	err := s.updateGrouped(func(t *txn) error {
		entries, members := t.tx.Bucket(bucketDirectory), t.tx.Bucket(bucketDirectoryGroups)
		if old := entries.Get([]byte(e.ID)); old != nil {
			kept, err := decodeDirectoryEntry(e.ID, old, true)
			if err != nil {
				return err
			}
			for _, g := range kept.Groups {
				if err := members.Delete(groupMemberKey(g, e.ID)); err != nil {
					return err
				}
			}
		}
		for _, g := range e.Groups {
			if err := members.Put(groupMemberKey(g, e.ID), nil); err != nil {
				return err
			}
		}
		return entries.Put([]byte(e.ID), encodeDirectoryEntry(&e))
	})
	if err != nil {
		return fmt.Errorf("remember user %s: %w", e.ID, err)
	}
	return nil
}

// DirectoryUser returns the entry of user id (storage.Directory).
func (s *Store) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	e, err := inTxn(ctx, s.view, func(t *txn) (storage.DirectoryEntry, error) {
		v := t.tx.Bucket(bucketDirectory).Get([]byte(id))
		if v == nil {
			return storage.DirectoryEntry{}, fmt.Errorf("user %.64q never signed in: %w", id, storage.ErrNotFound)
		}
		return decodeDirectoryEntry(id, v, true)
	})
	if err != nil {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry: %w", err)
	}
	return e, nil
}

// SearchUsers returns the users query finds, by id (storage.Directory).
func (s *Store) SearchUsers(ctx context.Context, query string, limit int) ([]storage.DirectoryEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = storage.DirectoryLimit(limit)
	var found []storage.DirectoryEntry
	err := s.view(func(t *txn) error {
		c := t.tx.Bucket(bucketDirectory).Cursor()
		for k, v := c.First(); k != nil && len(found) < limit; k, v = c.Next() {
			e, err := decodeDirectoryEntry(string(k), v, false)
			if err != nil {
				return err
			}
			if !storage.MatchesDirectoryQuery(e, query) {
				continue
			}
			if e, err = decodeDirectoryEntry(e.ID, v, true); err != nil {
				return err
			}
			found = append(found, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search users: %w", err)
	}
	return found, nil
}

// SearchGroups returns the names of groups query finds (storage.Directory).
func (s *Store) SearchGroups(ctx context.Context, query string, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = storage.DirectoryLimit(limit)
	var found []string
	err := s.view(func(t *txn) error {
		c := t.tx.Bucket(bucketDirectoryGroups).Cursor()
		for k, _ := c.First(); k != nil && len(found) < limit; {
			cut := bytes.LastIndexByte(k, 0)
			if cut < 0 {
				return fmt.Errorf("directory group key %q: %w", k, errCorrupt)
			}
			group := string(k[:cut])
			if storage.MatchesGroupQuery(group, query) {
				found = append(found, group)
			}
			// The next group: past every key of this one, whose
			// member ids hold no \0.
			k, _ = c.Seek(append(k[:cut:cut], 1))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search groups: %w", err)
	}
	return slices.Compact(found), nil
}
