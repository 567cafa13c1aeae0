package davhandler

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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

// ChunkedUploadKind tells which protocol started the chunked upload with
// the store id id: "chunking-ng", "chunking-v1", or "other" for an id this
// handler did not choose. The escaped user id before it holds no slash.
func ChunkedUploadKind(id string) string {
	_, rest, _ := strings.Cut(id, "/")
	switch {
	case strings.HasPrefix(rest, "ng/"):
		return "chunking-ng"
	case strings.HasPrefix(rest, "v1/"):
		return "chunking-v1"
	}
	return "other"
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
		if err := h.checkFreeQuota(r.Context(), space, total-replaced, 0); err != nil {
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

// ngTargetSpace is the space an NG upload will be committed to, and the
// size of the file it replaces there: the Destination's, when the request
// names it (newer clients send it on every request), else the user's
// personal space, where /dav/files/{user} writes.
func (h *Handler) ngTargetSpace(r *http.Request, req *request) (storage.Space, int64, error) {
	if r.Header.Get("Destination") == "" {
		space, err := h.store.PersonalSpace(r.Context(), req.user)
		noteSpace(r.Context(), space.ID)
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
	if !t.mayPlace(false) {
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
	noteSpace(r.Context(), space.ID) // the user's own upload
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
