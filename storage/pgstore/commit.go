package pgstore

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// commitContent makes the finished objects of segments (size bytes, with
// checksums sums) the content of the file c names, creating it if needed,
// in one transaction that takes the objects off the sweep's list and hands
// the content it replaces to the sweep. It reports whether the file was
// created. An upload ends here, and so does a resumable upload session:
// also, when set, runs in the commit's transaction before its quota check
// and ends the session whose parts the segments are, so that its
// reservation passes to the file in one step and is never free between.
func (s *Store) commitContent(ctx context.Context, spaceID string, segments []s3content.Segment, size int64, sums checksum.Sums, c storage.Commit, also func(*change) error) (storage.Node, bool, error) {
	if err := storage.ValidCommit(c, utf8.ValidString); err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	if segments == nil {
		segments = []s3content.Segment{} // jsonb '[]', not null
	}
	var (
		n       nodeRow
		created bool
	)
	err := s.change(ctx, spaceID, func(ch *change) (err error) {
		if also != nil {
			if err := also(ch); err != nil {
				return err
			}
		}
		n, created, err = s.recordContent(ctx, ch, spaceID, segments, size, sums, c)
		return err
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	return n.node(), created, nil
}

// recordContent is the transaction of commitContent.
func (s *Store) recordContent(ctx context.Context, ch *change, spaceID string, segments []s3content.Segment, size int64, sums checksum.Sums, c storage.Commit) (nodeRow, bool, error) {
	parentID, old, exists, err := commitTargetIn(ctx, ch, spaceID, c)
	if err != nil {
		return nodeRow{}, false, err
	}
	written := lockedNode{id: parentID}
	if exists {
		written = lockedNode{id: old.ID}
	}
	if err := s.checkHeld(ctx, ch.tx, spaceID, c.Locks, written); err != nil {
		return nodeRow{}, false, err
	}
	if err := c.CheckReplace(old.node(), exists); err != nil {
		return nodeRow{}, false, err
	}
	if err := s.checkQuota(ctx, ch.tx, spaceID, size-old.Size); err != nil {
		return nodeRow{}, false, err
	}
	mtime := c.ModTime
	if mtime.IsZero() {
		mtime = ch.now
	}
	id := old.ID
	if !exists {
		id = uuid.NewString()
	}
	n, _, err := queryNode(ctx, ch.tx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, content_type, sha1, md5, adler32, content)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (id) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, etag = excluded.etag,
			content_type = excluded.content_type, sha1 = excluded.sha1, md5 = excluded.md5,
			adler32 = excluded.adler32, content = excluded.content
		RETURNING `+nodeColumns,
		id, spaceID, parentID, c.Name, storage.KindFile, size, mtime.UTC(), ch.etag(id),
		c.ContentType, sums.SHA1, sums.MD5, sums.Adler32, segments)
	if err != nil {
		return nodeRow{}, false, err
	}
	if err := adopt(ctx, ch.tx, segmentKeys(segments)...); err != nil {
		return nodeRow{}, false, fmt.Errorf("adopting the content: %w", err)
	}
	if err := s.release(ctx, ch.tx, old.Content); err != nil {
		return nodeRow{}, false, err
	}
	return n, !exists, ch.propagate(ctx, parentID, size-old.Size)
}

// commitTargetIn resolves the node a commit replaces: c.NodeID wherever it
// is now, or the child c.Name of c.ParentID, which need not exist. It
// returns the folder the node is in, the node and whether it exists.
func commitTargetIn(ctx context.Context, ch *change, spaceID string, c storage.Commit) (string, nodeRow, bool, error) {
	if c.NodeID != "" {
		old, err := nodeIn(ctx, ch.tx, spaceID, c.NodeID)
		if err != nil {
			return "", nodeRow{}, false, err
		}
		return old.ParentID, old, true, nil
	}
	p, err := folderIn(ctx, ch.tx, spaceID, c.ParentID, storage.ErrConflict)
	if err != nil {
		return "", nodeRow{}, false, err
	}
	old, exists, err := child(ctx, ch.tx, p.ID, c.Name)
	if err != nil {
		return "", nodeRow{}, false, err
	}
	return p.ID, old, exists, nil
}

func segmentKeys(segments []s3content.Segment) []string {
	keys := make([]string, len(segments))
	for i, seg := range segments {
		keys[i] = seg.Key
	}
	return keys
}
