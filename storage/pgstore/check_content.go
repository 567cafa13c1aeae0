package pgstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// The content steps: every object a file, a version, a session's part or a
// chunk names is asked for (a HEAD each, a few at once, between the pages
// of rows), and with Deep a file's or version's objects are read through
// and hashed. An object a row names cannot go before ObjectGrace has
// passed since the row stopped naming it; a fault found is reported only
// if the row is still as it was read, so a change made meanwhile is not
// taken for damage.

// contentRow is a file or a version as the content steps read it.
type contentRow struct {
	ID      string              `db:"id"`
	Key     string              `db:"key"` // a version's; "" for a file
	SpaceID string              `db:"space_id"`
	Size    int64               `db:"size"`
	SHA1    string              `db:"sha1"`
	Content []s3content.Segment `db:"content"`
}

// contentFault is what is wrong with a row's content, if anything.
type contentFault struct {
	kind   storage.ProblemKind
	detail string
}

// contentPages is how many of a table's pages one read of the content
// steps covers: about checkPage rows of nodes.
const contentPages = 32

// checkFiles checks the content of every file, live or in a trash, a
// range of the table's pages at a time (inPages).
func (c *checker) checkFiles(ctx context.Context) error {
	return c.contentsInPages(ctx, "nodes", `SELECT id, '' AS key, space_id, size, sha1, content FROM nodes
		WHERE `+inHeapPages("nodes")+` AND kind = $3 ORDER BY id`, c.foundInFile, storage.KindFile)
}

// contentsInPages checks the contents query selects from table, a range
// of its pages per read, and hands each fault to found.
func (c *checker) contentsInPages(ctx context.Context, table, query string,
	found func(context.Context, contentRow, *contentFault) error, args ...any) error {
	check := c.checkContents(found)
	return c.inPages(ctx, table, contentPages, func(from, to int64) error {
		rows, err := queryRows(ctx, c.s, pgx.RowToStructByName[contentRow], query, append([]any{from, to}, args...)...)
		if err != nil || len(rows) == 0 {
			return err
		}
		return check(ctx, rows)
	})
}

// eachPage hands check what query selects, page by page: checkPage rows
// a page, in the order of their keys. query's parameters are the keys
// after which a page starts, first for the first page and after the
// last row read for the next, and the size of a page, last. Each page is
// one statement: no snapshot is held while check asks the bucket.
func eachPage[T any](ctx context.Context, s *Store, query string, first []any, after func(last T) []any,
	check func(context.Context, []T) error) error {
	for keys := first; ; {
		page, err := queryRows(ctx, s, pgx.RowToStructByName[T], query, append(slices.Clip(keys), checkPage)...)
		if err != nil || len(page) == 0 {
			return err
		}
		if err := check(ctx, page); err != nil {
			return err
		}
		keys = after(page[len(page)-1])
	}
}

// eachRow is a check of a page that checks its rows one by one.
func eachRow[T any](check func(context.Context, T) error) func(context.Context, []T) error {
	return func(ctx context.Context, page []T) error {
		for _, r := range page {
			if err := check(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkContents is a check of a page of files or versions: it checks
// their content and hands each fault to found.
func (c *checker) checkContents(found func(context.Context, contentRow, *contentFault) error) func(context.Context, []contentRow) error {
	return func(ctx context.Context, rows []contentRow) error {
		faults, err := c.faultsOf(ctx, rows)
		if err != nil {
			return err
		}
		for i, r := range rows {
			c.done++
			if faults[i] == nil {
				continue
			}
			if err := found(ctx, r, faults[i]); err != nil {
				return err
			}
		}
		c.progress()
		return nil
	}
}

// faultsOf asks the bucket about the content of rows, checkRequests rows
// at a time: each object is a round trip, which to a remote S3 costs far
// more than the check's own work.
func (c *checker) faultsOf(ctx context.Context, rows []contentRow) ([]*contentFault, error) {
	faults := make([]*contentFault, len(rows))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(checkRequests)
	for i, r := range rows {
		g.Go(func() (err error) {
			faults[i], err = c.contentFault(ctx, r)
			return err
		})
	}
	return faults, g.Wait()
}

// checkRequests bounds the requests to the bucket a check has under way.
const checkRequests = 8

// foundInFile reports fault, what is wrong with a file's content, unless
// the file changed since. Nothing about a file's content is repaired: its
// bytes are the user's, and only a copy of the bucket can bring them back.
func (c *checker) foundInFile(ctx context.Context, r contentRow, fault *contentFault) error {
	if still, err := c.still(ctx, `SELECT EXISTS (SELECT 1 FROM nodes WHERE id = $1 AND size = $2 AND content = $3)`,
		r.ID, r.Size, contentColumn(r.Content)); err != nil || !still {
		return err
	}
	return c.foundAt(ctx, r.ID, fault.kind, nil, "file %s: %s", r.ID, fault.detail)
}

// checkVersions checks the content of every version.
func (c *checker) checkVersions(ctx context.Context) error {
	return c.contentsInPages(ctx, "versions", `SELECT file_id AS id, key, space_id, size, sha1, content FROM versions
		WHERE `+inHeapPages("versions")+` ORDER BY file_id, key`, c.foundInVersion)
}

// foundInVersion reports fault, what is wrong with a version's content,
// unless the version changed since. A version whose objects are not all
// there can never be restored nor read: a repair drops it, as a record
// pointing at nothing. One whose objects differ from it is left for the
// administrator to judge.
func (c *checker) foundInVersion(ctx context.Context, r contentRow, fault *contentFault) error {
	if still, err := c.still(ctx, `SELECT EXISTS (SELECT 1 FROM versions WHERE file_id = $1 AND key = $2 AND size = $3 AND content = $4)`,
		r.ID, r.Key, r.Size, contentColumn(r.Content)); err != nil || !still {
		return err
	}
	var repair func(context.Context) error
	if fault.kind == storage.ProblemMissingContent {
		repair = func(ctx context.Context) error { return c.dropVersion(ctx, r) }
	}
	return c.foundAt(ctx, r.ID, fault.kind, repair, "version %s of file %s: %s", r.Key, r.ID, fault.detail)
}

// still reports whether the row a fault was found in is still as it was
// read (query selects that). A file replaced since its page was read may
// have lost its old objects to the sweep, after ObjectGrace; what its row
// names now is checked by the next check.
func (c *checker) still(ctx context.Context, query string, args ...any) (bool, error) {
	pool, err := c.s.db()
	if err != nil {
		return false, err
	}
	var still bool
	err = pool.QueryRow(ctx, query, args...).Scan(&still)
	return still, err
}

// dropVersion deletes version r, as the retention would, under its space's
// lock; one gone meanwhile is no error.
func (c *checker) dropVersion(ctx context.Context, r contentRow) error {
	return c.s.inSpace(ctx, r.SpaceID, func(tx pgx.Tx) error {
		return c.s.dropVersion(ctx, tx, r.SpaceID, r.ID, r.Key, true)
	})
}

// contentFault asks the bucket for the objects of r, and with Deep reads
// them: nil when they are all there with their sizes (and r's SHA1). It
// is safe for concurrent use.
func (c *checker) contentFault(ctx context.Context, r contentRow) (*contentFault, error) {
	if total := s3content.Size(r.Content); total != r.Size {
		return &contentFault{storage.ProblemContentSize,
			fmt.Sprintf("its objects hold %d bytes, not the %d it records", total, r.Size)}, nil
	}
	if fault, err := c.segmentsFault(ctx, r.Content); err != nil || fault != nil {
		return fault, err
	}
	if !c.opts.Deep || r.SHA1 == "" {
		return nil, nil
	}
	sum, err := c.sha1Of(ctx, r.Content)
	if errors.Is(err, storage.ErrNotFound) {
		// Gone since it was asked for: the row changed, or the bucket.
		return &contentFault{storage.ProblemMissingContent, err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	if sum != r.SHA1 {
		return &contentFault{storage.ProblemChecksum, fmt.Sprintf("its content's SHA1 is %s, not %s", sum, r.SHA1)}, nil
	}
	return nil, nil
}

// segmentsFault asks the bucket for each object of segments: nil when all
// are there with their sizes.
func (c *checker) segmentsFault(ctx context.Context, segments []s3content.Segment) (*contentFault, error) {
	for _, seg := range segments {
		if seg.Inline() {
			if _, err := seg.Bytes(); err != nil {
				return &contentFault{storage.ProblemContentSize, "its row's content: " + err.Error()}, nil
			}
			continue
		}
		if fault, err := c.objectFault(ctx, seg.Key, seg.Size); err != nil || fault != nil {
			return fault, err
		}
	}
	return nil, nil
}

// objectFault asks the bucket for object key, which should hold size
// bytes.
func (c *checker) objectFault(ctx context.Context, key string, size int64) (*contentFault, error) {
	c.contents.Add(1)
	obj, err := c.s.objects.Stat(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return &contentFault{storage.ProblemMissingContent, fmt.Sprintf("object %s is missing", key)}, nil
	}
	if err != nil {
		return nil, err
	}
	c.bytes.Add(obj.Size)
	if obj.Size != size {
		return &contentFault{storage.ProblemContentSize,
			fmt.Sprintf("object %s holds %d bytes, not %d", key, obj.Size, size)}, nil
	}
	return nil, nil
}

// sha1Of reads the content made of segments through and returns its SHA1
// in hex, as checksum.Sums keeps it.
func (c *checker) sha1Of(ctx context.Context, segments []s3content.Segment) (string, error) {
	h := sha1.New()
	r := c.s.objects.NewReader(ctx, segments)
	defer r.Close()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("reading %d objects: %w", len(segments), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sessionCheckRow is an upload session as the check reads it.
type sessionCheckRow struct {
	ID          string              `db:"id"`
	SpaceID     string              `db:"space_id"`
	Received    int64               `db:"received"`
	Parts       []s3content.Segment `db:"parts"`
	Target      sessionTarget       `db:"target"`
	SpaceExists bool                `db:"space_exists"`
}

// checkSessions checks that every upload session lands in a space that
// exists and that its parts are in the bucket with their sizes. A session
// that fails is dropped by a repair: its client starts the upload again,
// which it must anyway.
func (c *checker) checkSessions(ctx context.Context) error {
	return eachPage(ctx, c.s, `SELECT u.id, u.space_id, u.received, u.parts, u.target,
			EXISTS (SELECT 1 FROM spaces s WHERE s.id = u.space_id AND s.type <> 'trash') AS space_exists
		FROM upload_sessions u WHERE u.id > $1 ORDER BY u.id LIMIT $2`,
		[]any{""},
		func(last sessionCheckRow) []any { return []any{last.ID} },
		eachRow(c.checkSession))
}

func (c *checker) checkSession(ctx context.Context, r sessionCheckRow) error {
	detail, err := c.sessionFault(ctx, r)
	if err != nil || detail == "" {
		return err
	}
	// Parts only grow with received: a session still at it still has them.
	if still, err := c.still(ctx, `SELECT EXISTS (SELECT 1 FROM upload_sessions WHERE id = $1 AND received = $2)`,
		r.ID, r.Received); err != nil || !still {
		return err
	}
	p, err := c.sessionPlace(ctx, r)
	if err != nil {
		return err
	}
	repair := func(ctx context.Context) error { return c.dropSession(ctx, r.ID) }
	return c.found(ctx, p.problem(storage.ProblemDangling, true, "upload session %s: %s", r.ID, detail), repair)
}

// sessionPlace is where session r will land: the file it replaces, or
// its name in its folder.
func (c *checker) sessionPlace(ctx context.Context, r sessionCheckRow) (place, error) {
	p := place{spaceID: r.SpaceID, path: r.Target.Name}
	if r.Target.NodeID != "" {
		target, ok, err := c.locate(ctx, r.Target.NodeID)
		if err != nil || ok {
			return target, err
		}
	}
	if r.Target.ParentID != "" {
		parent, ok, err := c.locate(ctx, r.Target.ParentID)
		if err != nil {
			return place{}, err
		}
		if ok {
			p.path = storage.TrashLocation(append(splitPath(parent.path), r.Target.Name))
		}
	}
	return p, nil
}

// sessionFault says what is wrong with session r, or "".
func (c *checker) sessionFault(ctx context.Context, r sessionCheckRow) (string, error) {
	if !r.SpaceExists {
		return fmt.Sprintf("its space %s does not exist", r.SpaceID), nil
	}
	if got := s3content.Size(r.Parts); got != r.Received {
		return fmt.Sprintf("its parts hold %d bytes, not the %d it received", got, r.Received), nil
	}
	fault, err := c.segmentsFault(ctx, r.Parts)
	if err != nil || fault == nil {
		return "", err
	}
	return fault.detail, nil
}

// dropSession ends session id under its row lock and releases its parts;
// one gone meanwhile is no error.
func (c *checker) dropSession(ctx context.Context, id string) error {
	return c.s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM upload_sessions WHERE id = $1 RETURNING parts`, id)
		parts, err := pgx.CollectRows(rows, pgx.RowTo[[]s3content.Segment])
		if err != nil || len(parts) == 0 {
			return err
		}
		return c.s.release(ctx, tx, parts[0])
	})
}

// chunkCheckRow is a chunk as the check reads it, with its upload.
type chunkCheckRow struct {
	UploadID []byte `db:"upload_id"`
	Name     []byte `db:"name"`
	Size     int64  `db:"size"`
	Object   string `db:"object"`
}

// checkChunkedUploads checks that every chunked upload lands in a space
// that exists (or none yet), that its counters agree with its chunks, and
// that its chunks' objects are in the bucket with their sizes. A repair
// recounts the counters, and drops an upload whose chunks or space are
// gone (its client uploads again).
func (c *checker) checkChunkedUploads(ctx context.Context) error {
	if err := c.checkChunkedCounters(ctx); err != nil {
		return err
	}
	return eachPage(ctx, c.s, `SELECT upload_id, name, size, object FROM chunks
		WHERE (upload_id, name) > ($1, $2) ORDER BY upload_id, name LIMIT $3`,
		[]any{[]byte{}, []byte{}},
		func(last chunkCheckRow) []any { return []any{last.UploadID, last.Name} },
		eachRow(c.checkChunk))
}

func (c *checker) checkChunk(ctx context.Context, r chunkCheckRow) error {
	if r.Object == "" {
		if r.Size == 0 {
			return nil
		}
		return c.foundChunkedUpload(ctx, r.UploadID, fmt.Sprintf("chunk %q holds %d bytes but has no object", r.Name, r.Size))
	}
	fault, err := c.objectFault(ctx, r.Object, r.Size)
	if err != nil || fault == nil {
		return err
	}
	if still, err := c.still(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE upload_id = $1 AND name = $2 AND object = $3)`,
		r.UploadID, r.Name, r.Object); err != nil || !still {
		return err
	}
	return c.foundChunkedUpload(ctx, r.UploadID, fmt.Sprintf("chunk %q: %s", r.Name, fault.detail))
}

// foundChunkedUpload reports chunked upload id as dangling; a repair drops
// it.
func (c *checker) foundChunkedUpload(ctx context.Context, id []byte, detail string) error {
	p := storage.Problem{Kind: storage.ProblemDangling, Detail: fmt.Sprintf("chunked upload %q: %s", id, detail), Repairable: true}
	if err := c.s.read(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT space_id FROM chunked_uploads WHERE id = $1`, id).Scan(&p.SpaceID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	return c.found(ctx, p, func(ctx context.Context) error {
		return c.s.tx(ctx, func(tx pgx.Tx) error {
			var one int
			err := tx.QueryRow(ctx, `SELECT 1 FROM chunked_uploads WHERE id = $1 FOR UPDATE`, id).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			return c.s.dropChunkedUpload(ctx, tx, string(id))
		})
	})
}

// checkChunkedCounters checks each chunked upload's counters (parts,
// stored) against its chunks, and that its space exists.
func (c *checker) checkChunkedCounters(ctx context.Context) error {
	type faulty struct {
		ID           []byte
		SpaceID      string
		Parts, Count int
		Stored, Sum  int64
		SpaceExists  bool
	}
	found, err := readRows(ctx, c.s, pgx.RowToStructByPos[faulty], `SELECT u.id, u.space_id, u.parts, count(k.name)::int,
			u.stored, coalesce(sum(k.size), 0)::bigint,
			u.space_id = '' OR EXISTS (SELECT 1 FROM spaces s WHERE s.id = u.space_id AND s.type <> 'trash')
		FROM chunked_uploads u LEFT JOIN chunks k ON k.upload_id = u.id
		GROUP BY u.id HAVING u.parts <> count(k.name) OR u.stored <> coalesce(sum(k.size), 0)
			OR NOT (u.space_id = '' OR EXISTS (SELECT 1 FROM spaces s WHERE s.id = u.space_id AND s.type <> 'trash'))`)
	if err != nil {
		return err
	}
	for _, f := range found {
		if !f.SpaceExists {
			if err := c.foundChunkedUpload(ctx, f.ID, fmt.Sprintf("its space %s does not exist", f.SpaceID)); err != nil {
				return err
			}
			continue
		}
		p := storage.Problem{Kind: storage.ProblemUsage, SpaceID: f.SpaceID, Repairable: true,
			Detail: fmt.Sprintf("chunked upload %q counts %d chunks of %d bytes; it holds %d of %d bytes", f.ID, f.Parts, f.Stored, f.Count, f.Sum)}
		repair := func(ctx context.Context) error {
			return c.s.tx(ctx, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE chunked_uploads u SET
					parts = (SELECT count(*) FROM chunks WHERE upload_id = u.id),
					stored = (SELECT coalesce(sum(size), 0) FROM chunks WHERE upload_id = u.id)
					WHERE u.id = $1`, f.ID)
				return err
			})
		}
		if err := c.found(ctx, p, repair); err != nil {
			return err
		}
	}
	return nil
}
