package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Assembly of chunked uploads, shared by chunking NG and v1 chunks: the
// parts, claimed so that one request assembles them, become one file
// through the commit path of PUT.

// handleNGAssemble assembles an upload at its Destination (MOVE .file):
// a PUT of the parts' bytes, in the natural order of their names, with the
// MOVE's conditions, OC-Checksum and X-OC-Mtime. OC-Total-Length, when
// sent, must be their size. Whether it works or not, the upload ends: the
// client starts again.
func (h *Handler) handleNGAssemble(w http.ResponseWriter, r *http.Request, req *request, id string) error {
	a, err := parseAssembly(r)
	if err != nil {
		return err
	}
	if a.overwrite, err = parseOverwrite(r); err != nil {
		return err
	}
	dst, err := parseFileDestination(r)
	if err != nil {
		return err
	}
	if a.upload, err = h.ownChunkedUpload(r.Context(), req, id); err != nil {
		return err
	}
	a.parts, err = h.claimChunkedUpload(r.Context(), id)
	if err != nil {
		return err
	}
	defer h.dropChunkedUpload(r, id)
	a.id = id
	sortParts(a.parts)
	return h.assemble(w, r, req, dst, a)
}

// assembly is a claimed chunked upload to commit as one file.
type assembly struct {
	id string
	// upload is the chunked upload as read when it was claimed.
	upload storage.ChunkedUpload
	// parts in the order of their bytes in the file.
	parts []storage.Chunk
	// total is the size the client announced, -1 when it did not.
	total     int64
	expected  *checksum.Expected
	mtime     time.Time
	overwrite bool
}

// parseAssembly reads what an assembling request says about the whole file.
func parseAssembly(r *http.Request) (assembly, error) {
	a := assembly{overwrite: true}
	var err error
	if a.total, err = parseTotalLength(r); err != nil {
		return a, err
	}
	if a.expected, err = parseExpectedChecksum(r); err != nil {
		return a, err
	}
	a.mtime, err = parseMtime(r)
	return a, err
}

// claimChunkedUpload takes upload id for assembling: of two requests
// assembling it, one gets its parts, the other 409.
func (h *Handler) claimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	parts, err := h.chunks.ClaimChunkedUpload(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, errNotFound
	case errors.Is(err, storage.ErrConflict):
		return nil, assemblingError(err)
	case err != nil:
		return nil, fmt.Errorf("claiming chunked upload %s: %w", id, err)
	}
	return parts, nil
}

// dropChunkedUpload ends an upload once assembled or refused, even when
// the request that assembled it is cancelled.
func (h *Handler) dropChunkedUpload(r *http.Request, id string) {
	err := h.chunks.RemoveChunkedUpload(context.WithoutCancel(r.Context()), id)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		h.logger.Warn("removing an assembled chunked upload", zap.String("upload", id), zap.Error(err))
	}
}

// assemble commits the parts of a as the file dst names, checked as a PUT
// of their size would be (If header and locks, If-Match, permissions,
// quota), then verified against the announced total and checksum.
func (h *Handler) assemble(w http.ResponseWriter, r *http.Request, req *request, dst davPath, a assembly) error {
	size := partsSize(a.parts)
	if a.total >= 0 && size != a.total {
		return errorf(http.StatusBadRequest, "OC-Total-Length is %d bytes, but the upload's parts hold %d: a part is missing or incomplete", a.total, size)
	}
	t, err := h.resolve(r.Context(), req.user, dst)
	if err != nil {
		return err
	}
	if t.exists && !a.overwrite {
		return errorf(http.StatusPreconditionFailed, "The destination exists and Overwrite is F")
	}
	// The upload's reservation in the target's space is room for the
	// file: the commit ends the upload before it checks the quota.
	place, err := h.checkWrite(r, req, t, size-reservedFor(a.upload, t.space.ID, size))
	if err != nil {
		return err
	}
	place.Assembles = a.id
	return h.commitFile(w, r, t, place, fileContent{
		fill: func(up storage.Upload) error {
			// The parts carried storage.PartDigests: an announced one of
			// those needs no second read, another one does.
			storage.HashInline(up, announcedDigests(a.expected)...)
			return h.copyParts(r.Context(), up, a.id, a.parts)
		},
		expected: a.expected,
		mtime:    a.mtime,
	})
}

// reservedFor is what upload u, whose parts hold stored bytes, reserves in
// space spaceID.
func reservedFor(u storage.ChunkedUpload, spaceID string, stored int64) int64 {
	if u.SpaceID == "" || u.SpaceID != spaceID {
		return 0
	}
	return storage.ChunkedReservation(u.Length, stored, u.Replaces)
}

// copyParts streams the parts into up one after the other, holding no more
// of them than a copy buffer. The store first appends those whose digests
// it carried as they arrived, which need no second read here.
func (h *Handler) copyParts(ctx context.Context, up storage.Upload, id string, parts []storage.Chunk) error {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	appended, err := h.chunks.AppendChunks(ctx, up, id, names)
	if err != nil {
		return storeWriteError(err)
	}
	for _, p := range parts[appended:] {
		if err := h.copyPart(ctx, up, id, p.Name); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) copyPart(ctx context.Context, up storage.Upload, id, name string) error {
	rc, err := h.chunks.OpenChunk(ctx, id, name)
	if err != nil {
		return fmt.Errorf("opening part %q of chunked upload %s: %w", name, id, err)
	}
	defer rc.Close()
	src := &bodyReader{r: rc}
	if _, err := io.Copy(up, src); err != nil {
		if src.err != nil {
			return fmt.Errorf("reading part %q of chunked upload %s: %w", name, id, err)
		}
		return storeWriteError(err)
	}
	return nil
}
