package davhandler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// ownCloud v1 chunks: older clients PUT a big file in numbered pieces
// named <file>-chunking-<transfer>-<count>-<index>, each with OC-Chunked: 1.
// The pieces arrive in any order and in parallel (a client that resumes
// starts in the middle and wraps around); the request that stores the last
// missing one assembles the file, through the assembly chunking NG uses.
// Only that request answers with an ETag: clients take one for "file
// complete". The pieces are parts of a storage.ChunkedUpload, never files.

// v1ChunkPattern is a v1 chunk's name; the transfer id is a word, as in
// ownCloud's server.
var v1ChunkPattern = regexp.MustCompile(`^(.+)-chunking-(\w+)-([0-9]+)-([0-9]+)$`)

// maxV1Chunks caps a v1 upload's chunk count: one part of the upload is
// left for the whole file's checksum.
const maxV1Chunks = storage.MaxChunksPerUpload - 1

// v1ChecksumPart is the part keeping the whole file's OC-Checksum: it
// comes with the chunk the client sends last, which need not be the one
// that completes the upload. It is no number, so no chunk is named so.
const v1ChecksumPart = "checksum"

// v1Chunk is what the name of a v1 chunk tells.
type v1Chunk struct {
	file     string
	transfer string
	count    int
	index    int
}

// isV1Chunk reports whether a PUT is a v1 chunk: without OC-Chunked, a
// name like a chunk's is an ordinary file.
func isV1Chunk(r *http.Request) bool {
	return strings.TrimSpace(r.Header.Get("OC-Chunked")) == "1"
}

// parseV1Chunk reads a chunk's name.
func parseV1Chunk(name string) (v1Chunk, error) {
	m := v1ChunkPattern.FindStringSubmatch(name)
	if m == nil {
		return v1Chunk{}, errorf(http.StatusBadRequest, "OC-Chunked needs a name <file>-chunking-<transfer>-<count>-<index>, got %q", name)
	}
	c := v1Chunk{file: m[1], transfer: m[2]}
	count, errCount := strconv.Atoi(m[3])
	index, errIndex := strconv.Atoi(m[4])
	switch {
	case errCount != nil || count < 1 || count > maxV1Chunks:
		return c, errorf(http.StatusBadRequest, "a chunked upload has 1 to %d chunks, not %s", maxV1Chunks, m[3])
	case errIndex != nil || index >= count:
		return c, errorf(http.StatusBadRequest, "chunk index %s is not below the chunk count %d", m[4], count)
	}
	c.count, c.index = count, index
	if err := validateName(c.file); err != nil {
		return c, err
	}
	return c, nil
}

// handleV1Chunk stores one chunk, checked as a PUT of the whole file would
// be (the client sends If-Match and OC-Total-Length with every chunk), and
// assembles the file when it was the last one missing.
func (h *Handler) handleV1Chunk(w http.ResponseWriter, r *http.Request, req *request) error {
	if h.chunks == nil {
		return errorf(http.StatusNotImplemented, "Chunked uploads (OC-Chunked) are not offered: PUT the whole file")
	}
	c, err := parseV1Chunk(req.path.name())
	if err != nil {
		return err
	}
	a, err := parseAssembly(r)
	if err != nil {
		return err
	}
	dst := v1Target(req.path, c.file)
	t, err := h.resolve(r.Context(), req.user, dst)
	if err != nil {
		return err
	}
	// The quota is not checked here: the upload's creation reserves the
	// total (507 before a byte is read), and the chunks after it write
	// into that reservation, which the free quota no longer shows.
	if _, err := h.checkWrite(r, req, t, -1); err != nil {
		return err
	}
	id := v1UploadID(req.user, t, c)
	if err := h.startV1Upload(r.Context(), req, t, id, a.total); err != nil {
		return err
	}
	if err := h.putV1Chunk(r, t, id, c, a.total); err != nil {
		return err
	}
	complete, err := h.v1Complete(r.Context(), id, c.count)
	switch {
	case err != nil:
		return err
	case !complete:
		// No ETag: the client would take the file for complete.
		w.WriteHeader(http.StatusCreated)
		return nil
	}
	return h.assembleV1(w, r, req, dst, id, a)
}

// v1Target is the path of the file a chunk belongs to.
func v1Target(chunk davPath, file string) davPath {
	dp := chunk
	dp.segments = append(slices.Clone(chunk.segments[:len(chunk.segments)-1]), file)
	return dp
}

// v1UploadID names the upload of a file's chunks in the store: its user,
// the folder and name of the file, the client's transfer id and the chunk
// count, so that two files or two users never meet, nor two uploads of
// one file with different chunk sizes. All but the user are hashed: names
// of any length then make an ID of one length. None holds a NUL.
func v1UploadID(user storage.User, t *target, c v1Chunk) string {
	key := strings.Join([]string{t.space.ID, t.parent.ID, c.file, c.transfer, strconv.Itoa(c.count)}, "\x00")
	sum := sha256.Sum256([]byte(key))
	return url.PathEscape(user.ID) + "/v1/" + hex.EncodeToString(sum[:])
}

// startV1Upload creates the upload of a file's chunks in the space of t
// unless an earlier chunk did, reserving the announced total when there
// is one.
func (h *Handler) startV1Upload(ctx context.Context, req *request, t *target, id string, total int64) error {
	_, err := h.chunks.CreateChunkedUpload(ctx, storage.ChunkedUpload{
		ID: id, User: req.user.ID, Expires: time.Now().Add(h.uploadTTL),
		SpaceID: t.space.ID, Length: max(total, 0), Replaces: replacedSize(t), OpenLimit: h.maxOpenUploads,
	})
	if err == nil || errors.Is(err, storage.ErrExists) {
		return nil
	}
	return createChunkedError(id, err)
}

// putV1Chunk stores the chunk's bytes, bounded by the announced total and
// the free quota of the file's space, and the whole file's checksum when
// the chunk carries it. The checksum goes first: a concurrent request that
// finds the upload complete once the chunk is stored then finds it too.
func (h *Handler) putV1Chunk(r *http.Request, t *target, id string, c v1Chunk, total int64) error {
	if sum := r.Header.Get("OC-Checksum"); sum != "" {
		if _, err := h.chunks.PutChunk(r.Context(), id, v1ChecksumPart, strings.NewReader(sum)); err != nil {
			return putPartError(err)
		}
	}
	name := strconv.Itoa(c.index)
	parts, err := h.listParts(r.Context(), id)
	if err != nil {
		return err
	}
	reserved, err := h.reserveV1(r, id, c, total, v1Chunks(parts))
	if err != nil {
		return err
	}
	stored := storedBesides(v1Chunks(parts), name)
	limit, err := h.partLimit(r.Context(), t.space, replacedSize(t), total, stored, reserved)
	if err != nil {
		return err
	}
	return h.putPart(r, id, name, limit, nil)
}

// reserveV1 reserves for a v1 upload what its chunks announce: the total
// when the client sent one, else the chunk count times the largest chunk
// seen so far (this one's Content-Length among them), and returns it.
func (h *Handler) reserveV1(r *http.Request, id string, c v1Chunk, total int64, chunks []storage.Chunk) (int64, error) {
	if total >= 0 {
		return total, nil
	}
	largest := max(r.ContentLength, 0)
	for _, p := range chunks {
		largest = max(largest, p.Size)
	}
	length := int64(c.count) * largest
	err := h.chunks.ReserveChunkedUpload(r.Context(), id, length)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, errNotFound
	case errors.Is(err, storage.ErrConflict):
		return 0, assemblingError(err)
	case err != nil:
		return 0, fmt.Errorf("reserving %d bytes for chunked upload %s: %w", length, id, err)
	}
	return length, nil
}

// v1Complete reports whether all count chunks of upload id are stored.
func (h *Handler) v1Complete(ctx context.Context, id string, count int) (bool, error) {
	parts, err := h.listParts(ctx, id)
	if errors.Is(err, errNotFound) {
		// Assembled and removed by a concurrent request meanwhile.
		return false, nil
	}
	return len(v1Chunks(parts)) == count, err
}

// v1Chunks are the numbered parts, in the order of their indexes.
func v1Chunks(parts []storage.Chunk) []storage.Chunk {
	chunks := slices.DeleteFunc(slices.Clone(parts), func(p storage.Chunk) bool { return p.Name == v1ChecksumPart })
	sortParts(chunks)
	return chunks
}

// assembleV1 claims the upload and assembles it. A concurrent request
// that claimed it first assembles it: this one answers as for any other
// chunk.
func (h *Handler) assembleV1(w http.ResponseWriter, r *http.Request, req *request, dst davPath, id string, a assembly) error {
	parts, err := h.chunks.ClaimChunkedUpload(r.Context(), id)
	if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
		w.WriteHeader(http.StatusCreated)
		return nil
	}
	if err != nil {
		return fmt.Errorf("claiming chunked upload %s: %w", id, err)
	}
	defer h.dropChunkedUpload(r, id)
	if a.upload, err = h.ownChunkedUpload(r.Context(), req, id); err != nil {
		return err
	}
	a.id, a.parts = id, v1Chunks(parts)
	if a.expected, err = h.v1Checksum(r.Context(), id, parts, a.expected); err != nil {
		return err
	}
	return h.assemble(w, r, req, dst, a)
}

// v1Checksum is the whole file's checksum: the one this request carries,
// else the one an earlier chunk did, if any.
func (h *Handler) v1Checksum(ctx context.Context, id string, parts []storage.Chunk, sent *checksum.Expected) (*checksum.Expected, error) {
	if sent != nil || !slices.ContainsFunc(parts, func(p storage.Chunk) bool { return p.Name == v1ChecksumPart }) {
		return sent, nil
	}
	rc, err := h.chunks.OpenChunk(ctx, id, v1ChecksumPart)
	if err != nil {
		return nil, fmt.Errorf("opening the checksum of chunked upload %s: %w", id, err)
	}
	defer rc.Close()
	v, err := io.ReadAll(io.LimitReader(rc, 1024))
	if err != nil {
		return nil, fmt.Errorf("reading the checksum of chunked upload %s: %w", id, err)
	}
	// It was checked when it was stored.
	e, err := checksum.ParseOCChecksum(string(v))
	if err != nil {
		return nil, fmt.Errorf("the checksum of chunked upload %s: %w", id, err)
	}
	return &e, nil
}
