package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Chunked uploads: a client sends a big file in parts, each in a request
// of its own, and then has them assembled into the file, which appears at
// once through the same commit as a PUT (commitFile). Two protocols share
// the assembly: Nextcloud's chunking NG, here, and ownCloud's v1 chunks
// (chunkv1.go). The parts are kept by storage.ChunkedUploads, beside the
// spaces: they are no nodes, so no listing, size or etag ever shows them.
//
// Chunking NG: MKCOL /dav/uploads/{user}/{transfer} starts an upload,
// PUT …/{transfer}/{part} stores a part, PROPFIND lists the parts to a
// client that resumes, DELETE …/{transfer}/{part} drops one it will not
// reuse, MOVE …/{transfer}/.file assembles them at the Destination in the
// natural order of their names, DELETE …/{transfer} drops them all.

// assembleName is the part name a MOVE names to assemble an upload.
const assembleName = ".file"

// The methods allowed on an NG upload's folder and on its parts.
const (
	allowedOnChunkedUpload = "OPTIONS, PROPFIND, MKCOL, DELETE"
	allowedOnChunk         = "OPTIONS, PROPFIND, PUT, DELETE"
	allowedOnAssemble      = "OPTIONS, MOVE"
)

// serveChunkedUpload answers a request below /dav/uploads/{user}/{transfer}.
// Another user's uploads, and those of a {user} who is not the caller,
// answer exactly as ones that do not exist.
func (h *Handler) serveChunkedUpload(w http.ResponseWriter, r *http.Request, req *request) error {
	if h.chunks == nil || !strings.EqualFold(req.path.user, req.user.ID) {
		return errNotFound
	}
	id := ngUploadID(req.user.ID, req.path.upload)
	part := req.path.name()
	switch {
	case part == "":
		return h.serveNGUpload(w, r, req, id)
	case part == assembleName:
		return h.serveNGAssemble(w, r, req, id)
	}
	return h.serveNGPart(w, r, req, id, part)
}

func (h *Handler) serveNGUpload(w http.ResponseWriter, r *http.Request, req *request, id string) error {
	switch r.Method {
	case "MKCOL":
		return h.handleNGCreate(w, r, req, id)
	case "PROPFIND":
		return h.handleNGPropfind(w, r, req, id, "")
	case http.MethodDelete:
		return h.handleNGDelete(w, r, req, id)
	}
	return methodNotAllowed(allowedOnChunkedUpload, r.Method+" is not allowed on a chunked upload")
}

func (h *Handler) serveNGPart(w http.ResponseWriter, r *http.Request, req *request, id, part string) error {
	switch r.Method {
	case http.MethodPut:
		return h.handleNGPut(w, r, req, id, part)
	case "PROPFIND":
		return h.handleNGPropfind(w, r, req, id, part)
	case http.MethodDelete:
		return h.handleNGPartDelete(w, r, req, id, part)
	}
	return methodNotAllowed(allowedOnChunk, r.Method+" is not allowed on a part of a chunked upload")
}

func (h *Handler) serveNGAssemble(w http.ResponseWriter, r *http.Request, req *request, id string) error {
	if r.Method != "MOVE" {
		return methodNotAllowed(allowedOnAssemble, assembleName+" is no part: MOVE it to assemble the upload")
	}
	return h.handleNGAssemble(w, r, req, id)
}

// ngUploadID names an NG upload in the store: scoped to its user, so that
// two users choosing the same transfer id never meet. The user id is
// escaped: it may hold a slash.
func ngUploadID(userID, transfer string) string {
	return url.PathEscape(userID) + "/ng/" + url.PathEscape(transfer)
}

// handleNGCreate starts an upload (MKCOL). A size announced with
// OC-Total-Length is checked against the free quota at once, so that a
// client learns before it sends anything that the file will not fit.
func (h *Handler) handleNGCreate(w http.ResponseWriter, r *http.Request, req *request, id string) error {
	if hasBody(r) {
		return errorf(http.StatusUnsupportedMediaType, "MKCOL with a request body (extended-mkcol) is not supported")
	}
	total, err := parseTotalLength(r)
	if err != nil {
		return err
	}
	// The upload belongs to the space the file will land in from now on:
	// it reserves there, and its parts are checked there, whatever later
	// requests name.
	space, replaced, err := h.ngTargetSpace(r, req)
	if err != nil {
		return err
	}
	if total > 0 {
		if err := h.checkFreeQuota(r.Context(), space, total-replaced); err != nil {
			return err
		}
	}
	_, err = h.chunks.CreateChunkedUpload(r.Context(), storage.ChunkedUpload{
		ID: id, User: req.user.ID, Expires: time.Now().Add(h.uploadTTL),
		SpaceID: space.ID, Length: max(total, 0), Replaces: replaced, OpenLimit: h.maxOpenUploads,
	})
	if errors.Is(err, storage.ErrExists) {
		return methodNotAllowed(allowedOnChunkedUpload, msgExists)
	}
	if err != nil {
		return createChunkedError(id, err)
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// createChunkedError answers an upload the store would not start: its ID,
// built from the user's and the client's names, is too long.
func createChunkedError(id string, err error) error {
	err = fmt.Errorf("starting chunked upload %.64q: %w", id, err)
	if errors.Is(err, storage.ErrInvalid) {
		return &davError{status: http.StatusBadRequest, message: "The upload's name is too long", cause: err}
	}
	return err
}

// ngTargetSpace is the space an NG upload will be committed to, and the
// size of the file it replaces there: the Destination's, when the request
// names it (newer clients send it on every request), else the user's
// personal space, where /dav/files/{user} writes.
func (h *Handler) ngTargetSpace(r *http.Request, req *request) (storage.Space, int64, error) {
	if r.Header.Get("Destination") == "" {
		space, err := h.store.PersonalSpace(r.Context(), req.user)
		return space, 0, err
	}
	dst, err := parseFileDestination(r)
	if err != nil {
		return storage.Space{}, 0, err
	}
	t, err := h.resolve(r.Context(), req.user, dst)
	if err != nil {
		return storage.Space{}, 0, err
	}
	if !t.canWrite() {
		// An upload reserves quota in its space: only a writer may.
		return storage.Space{}, 0, errReadOnly
	}
	return t.space, replacedSize(t), nil
}

// reservedLength is the length chunked upload u reserved, or -1 for an
// upload that reserves nothing.
func reservedLength(u storage.ChunkedUpload) int64 {
	if u.SpaceID == "" {
		return -1
	}
	return u.Length
}

// uploadSpace is the space chunked upload u belongs to, where its parts
// count: the one its MKCOL named. An upload from before uploads had a
// space is checked against the Destination, as then.
func (h *Handler) uploadSpace(r *http.Request, req *request, u storage.ChunkedUpload) (storage.Space, int64, error) {
	if u.SpaceID == "" {
		return h.ngTargetSpace(r, req)
	}
	space, err := h.store.Space(r.Context(), u.SpaceID)
	if err != nil {
		return storage.Space{}, 0, fmt.Errorf("reading the space of chunked upload %s: %w", u.ID, err)
	}
	// The reservation counts the whole file; a file it replaces frees
	// its bytes only at the commit.
	return space, 0, nil
}

// parseFileDestination reads the Destination of an assembly: a file below
// one of the WebDAV base paths, never an upload.
func parseFileDestination(r *http.Request) (davPath, error) {
	dst, err := parseDestination(r)
	if err != nil {
		return dst, err
	}
	if dst.kind == baseUploads || dst.kind == baseChunked {
		return dst, errorf(http.StatusBadRequest, "the Destination must be a file in a space, not an upload")
	}
	return dst, nil
}

// handleNGDelete drops an upload and its parts.
func (h *Handler) handleNGDelete(w http.ResponseWriter, r *http.Request, req *request, id string) error {
	u, err := h.ownChunkedUpload(r.Context(), req, id)
	if err != nil {
		return err
	}
	if u.Claimed {
		return errAssembling
	}
	err = h.chunks.RemoveChunkedUpload(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("removing chunked upload %s: %w", id, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var errAssembling = errorf(http.StatusConflict, "The upload is being assembled: it takes no more changes")

// assemblingError answers a change the store refused because the upload
// has been claimed meanwhile.
func assemblingError(err error) *davError {
	return &davError{status: errAssembling.status, message: errAssembling.message, cause: err}
}

// ownChunkedUpload loads upload id if the user started it.
func (h *Handler) ownChunkedUpload(ctx context.Context, req *request, id string) (storage.ChunkedUpload, error) {
	u, err := h.chunks.ChunkedUpload(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return u, errNotFound
	case err != nil:
		return u, fmt.Errorf("reading chunked upload %s: %w", id, err)
	case u.User != req.user.ID:
		return u, errNotFound
	}
	return u, nil
}

// handleNGPartDelete drops one part. A Nextcloud client resuming an upload
// deletes the parts it will not reuse (after a gap, or stale ones), and
// gives up on the file if it cannot; the store refuses it once the upload
// is claimed, so a part being assembled never vanishes.
func (h *Handler) handleNGPartDelete(w http.ResponseWriter, r *http.Request, req *request, id, name string) error {
	if _, err := h.ownChunkedUpload(r.Context(), req, id); err != nil {
		return err
	}
	err := h.chunks.RemoveChunk(r.Context(), id, name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrConflict):
		return assemblingError(err)
	case err != nil:
		return fmt.Errorf("removing part %.64q of chunked upload %s: %w", name, id, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleNGPut stores a part. It may carry its own OC-Checksum, which the
// part must match; the whole file's comes with the MOVE.
func (h *Handler) handleNGPut(w http.ResponseWriter, r *http.Request, req *request, id, name string) error {
	u, err := h.ownChunkedUpload(r.Context(), req, id)
	if err != nil {
		return err
	}
	check, err := parsePartChecksum(r)
	if err != nil {
		return err
	}
	total, err := parseTotalLength(r)
	if err != nil {
		return err
	}
	space, replaced, err := h.uploadSpace(r, req, u)
	if err != nil {
		return err
	}
	parts, err := h.listParts(r.Context(), id)
	if err != nil {
		return err
	}
	limit, err := h.partLimit(r.Context(), space, replaced, total, storedBesides(parts, name), reservedLength(u))
	if err != nil {
		return err
	}
	if err := h.putPart(r, id, name, limit, check); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// parsePartChecksum reads the OC-Checksum of one part. One of an algorithm
// the server does not compute is not checked: the whole file's, sent with
// the MOVE, still is.
func parsePartChecksum(r *http.Request) (*checksum.Verifier, error) {
	v := r.Header.Get("OC-Checksum")
	if v == "" {
		return nil, nil
	}
	expected, err := checksum.ParseOCChecksum(v)
	if err == nil {
		return expected.NewVerifier()
	}
	if errors.Is(err, checksum.ErrUnsupported) {
		return nil, nil
	}
	return nil, errorf(http.StatusBadRequest, "OC-Checksum: %v", err)
}

// parseTotalLength reads OC-Total-Length, the size of the whole file;
// -1 when absent.
func parseTotalLength(r *http.Request) (int64, error) {
	v := r.Header.Get("OC-Total-Length")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || v[0] < '0' || v[0] > '9' {
		return 0, errorf(http.StatusBadRequest, "OC-Total-Length must be a non-negative integer, got %q", v)
	}
	return n, nil
}

// partLimit is the most bytes a part may hold, and the answer to one that
// holds more.
type partLimit struct {
	max     int64 // negative: no limit
	refusal *davError
}

var noPartLimit = partLimit{max: -1}

// tighter returns the stricter of two limits.
func (l partLimit) tighter(o partLimit) partLimit {
	if l.max < 0 || (o.max >= 0 && o.max < l.max) {
		return o
	}
	return l
}

// partLimit bounds a part so that it and the stored bytes of the other
// parts fit the announced total, when there is one, and the free quota of
// space, where the file will replace replaced bytes, beside the length
// the upload reserved there (negative: an upload that reserves nothing).
// Parts stored in parallel may each pass it; the store refuses a part
// that takes the reservation past the quota, and the assembly checks the
// quota again.
func (h *Handler) partLimit(ctx context.Context, space storage.Space, replaced, total, stored, reserved int64) (partLimit, error) {
	limit := noPartLimit
	if total >= 0 {
		limit = limit.tighter(partLimit{max: max(total-stored, 0), refusal: errorf(http.StatusBadRequest,
			"The parts would exceed OC-Total-Length, %d bytes", total)})
	}
	free, limited, err := h.freeQuota(ctx, space)
	if err != nil {
		return noPartLimit, err
	}
	if limited {
		room := free + replaced - stored // an upload from before reservations
		if reserved >= 0 {
			// The free quota is net of the upload's own reservation,
			// which is its to fill: what it reserved beyond its parts.
			room = free + max(reserved-stored, 0)
		}
		limit = limit.tighter(partLimit{max: max(room, 0), refusal: &davError{
			status: http.StatusInsufficientStorage, message: msgQuotaExceeded,
			cause: fmt.Errorf("%d bytes free, %d in parts", free, stored)}})
	}
	return limit, nil
}

// listParts lists the parts of upload id.
func (h *Handler) listParts(ctx context.Context, id string) ([]storage.Chunk, error) {
	parts, err := h.chunks.Chunks(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("listing the parts of chunked upload %s: %w", id, err)
	}
	return parts, nil
}

// storedBesides is the size of the parts but the one called name, which a
// new part of that name replaces.
func storedBesides(parts []storage.Chunk, name string) int64 {
	return partsSize(parts) - sizeOfPart(parts, name)
}

func partsSize(parts []storage.Chunk) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}

func sizeOfPart(parts []storage.Chunk, name string) int64 {
	for _, p := range parts {
		if p.Name == name {
			return p.Size
		}
	}
	return 0
}

// putPart streams the request body into part name of upload id. A body
// past its limit, or not matching check, fails: the store keeps none of it.
func (h *Handler) putPart(r *http.Request, id, name string, limit partLimit, check *checksum.Verifier) error {
	if limit.max >= 0 && r.ContentLength > limit.max {
		return limit.refusal
	}
	src := &partReader{body: bodyReader{r: r.Body}, limit: limit, check: check}
	_, err := h.chunks.PutChunk(r.Context(), id, name, src)
	if err == nil {
		return nil
	}
	if de, ok := errors.AsType[*davError](err); ok {
		return de
	}
	if src.body.err != nil {
		return bodyReadError(src.body.err)
	}
	return putPartError(err)
}

// putPartError answers a part the store refused.
func putPartError(err error) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrConflict):
		return assemblingError(err)
	case errors.Is(err, storage.ErrInvalid):
		return &davError{status: http.StatusBadRequest, cause: err, message: fmt.Sprintf(
			"A part name must be at most %d bytes, and an upload hold at most %d parts",
			storage.MaxChunkNameBytes, storage.MaxChunksPerUpload)}
	}
	return storeWriteError(err)
}

// partReader passes a part's body on, failing once it exceeds its limit
// or, at its end, when it does not match its checksum.
type partReader struct {
	body  bodyReader
	limit partLimit
	n     int64
	check *checksum.Verifier
}

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.body.Read(b)
	p.n += int64(n)
	if p.limit.max >= 0 && p.n > p.limit.max {
		return n, p.limit.refusal
	}
	if p.check == nil {
		return n, err
	}
	p.check.Write(b[:n])
	if err == io.EOF && !p.check.Matches() {
		return n, errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	return n, err
}
