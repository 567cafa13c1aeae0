package davhandler

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
)

// Resumable uploads: the TUS 1.0.0 protocol (https://tus.io/protocols/resumable-upload)
// with its creation, creation-with-upload, checksum, expiration and
// termination extensions. A POST to a collection starts an upload of a file
// in it, or below it when the filename is a path (the ownCloud desktop
// client POSTs to the root it syncs with); its upload URL (/dav/uploads/{id},
// with or without /remote.php) takes the bytes (PATCH), reports progress
// (HEAD) and ends it (DELETE).
// The last byte commits the file as a PUT would. tusd is not used: it has no
// checksum extension, answers errors in its own format and routes and owns
// its storage, where ours is storage.UploadSessions beside the store.

// checkTusResumable refuses a TUS request of another protocol version,
// naming the one served (TUS requires the header on every request but
// OPTIONS).
func checkTusResumable(w http.ResponseWriter, r *http.Request) error {
	if v := r.Header.Get("Tus-Resumable"); v != tusVersion {
		w.Header().Set("Tus-Version", tusVersion)
		return errorf(http.StatusPreconditionFailed, "Tus-Resumable %q is not supported: send Tus-Resumable: %s", v, tusVersion)
	}
	return nil
}

// handleTusCreate starts an upload (POST to a collection): the file is
// named by the filename metadata, relative to the collection, and checked
// as a PUT of Upload-Length bytes would be. Every refusal comes before
// anything is stored and carries no Location.
func (h *Handler) handleTusCreate(w http.ResponseWriter, r *http.Request, req *request) error {
	w.Header().Set("Tus-Resumable", tusVersion)
	if err := checkTusResumable(w, r); err != nil {
		return err
	}
	length, err := parseUploadLength(r)
	if err != nil {
		return err
	}
	meta, err := parseTusMetadata(r.Header.Get("Upload-Metadata"))
	if err != nil {
		return err
	}
	mtime, err := creationMtime(r, meta)
	if err != nil {
		return err
	}
	withBody := isTusContent(r)
	var check *checksum.Expected
	if withBody {
		if check, err = parseUploadChecksum(r.Header.Get("Upload-Checksum")); err != nil {
			return err
		}
		if r.ContentLength > length {
			return errChunkTooLong
		}
	}
	t, err := h.resolve(r.Context(), req.user, descendantPath(req.path, meta.segments))
	if err != nil {
		return err
	}
	place, err := h.checkWrite(r, req, t, length)
	if err != nil {
		return err
	}
	place.ModTime, place.ContentType = mtime, meta.contentType
	if withBody && r.ContentLength == length {
		return h.createWhole(w, r, req, t, place, meta.expected, check)
	}
	s, err := h.uploads.CreateSession(r.Context(), storage.UploadSession{
		SpaceID: t.space.ID, User: req.user.ID, Length: length, Target: place,
		Expected: meta.expected, Expires: time.Now().Add(h.uploadTTL), OpenLimit: h.maxOpenUploads,
		Replaces: replacedSize(t),
	})
	if err != nil {
		return fmt.Errorf("starting an upload of %d bytes: %w", length, err)
	}
	if err := h.startUpload(w, r, req, s, withBody, check); err != nil {
		// The client has no upload URL to resume with: free the bytes.
		w.Header().Del("Location")
		h.dropSession(r, s.ID)
		return err
	}
	return nil
}

// createWhole commits a POST that carries the whole upload, as the ownCloud
// desktop client sends every file below its chunk size, the way a PUT is
// committed: a session recorded, appended to and completed would take three
// durable commits and a synced session file where a PUT takes one commit.
// The answer is the one a completed session gets: 201 with the headers of
// the file, and an upload URL that, as after any completed upload, names no
// live upload. Bytes that do not match a checksum the client gave (with
// the metadata or in Upload-Checksum) are no file, as with a session.
func (h *Handler) createWhole(w http.ResponseWriter, r *http.Request, req *request, t *target, place storage.Commit, expected ...*checksum.Expected) error {
	up, err := h.store.NewUpload(r.Context(), t.space.ID)
	if err != nil {
		return err
	}
	defer up.Discard()
	storage.HashInline(up, announcedDigests(expected...)...)
	if err := receiveBody(up, r.Body); err != nil {
		return err
	}
	for _, e := range expected {
		if err := storage.CheckReceived(e, up.Checksums()); err != nil {
			return &davError{status: statusChecksumMismatch, message: msgChecksumMismatch, cause: err}
		}
	}
	node, _, err := up.Commit(r.Context(), place)
	if err != nil {
		return err
	}
	h.setCommittedHeaders(r.Context(), w, t, node, place.ModTime)
	w.Header().Set("Location", uploadLocation(r, req.path, "done-"+rand.Text()))
	w.Header().Set("Upload-Offset", strconv.FormatInt(node.Size, 10))
	w.WriteHeader(http.StatusCreated)
	return nil
}

// creationMtime is the modification time an upload starts with: the
// X-OC-Mtime header, as a PUT takes it (the ownCloud desktop client sends
// it so), else the mtime metadata.
func creationMtime(r *http.Request, meta tusMetadata) (time.Time, error) {
	mtime, err := parseMtime(r)
	if err != nil || !mtime.IsZero() {
		return mtime, err
	}
	return meta.mtime, nil
}

// startUpload takes the bytes a POST carries (creation-with-upload) and
// answers 201 with the upload URL; an upload complete already (its length
// is 0, or the POST carried all of it) is committed at once.
func (h *Handler) startUpload(w http.ResponseWriter, r *http.Request, req *request, s storage.UploadSession, withBody bool, check *checksum.Expected) error {
	var err error
	if withBody && s.Length > 0 {
		if s, err = h.appendChunk(r, s, check); err != nil {
			return err
		}
	}
	w.Header().Set("Location", uploadLocation(r, req.path, s.ID))
	if s.Offset == s.Length {
		return h.completeUpload(w, r, req, s, time.Time{}, http.StatusCreated)
	}
	setProgressHeaders(w.Header(), s)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// dropSession ends an upload the client cannot continue, even when the
// request that started it is cancelled.
func (h *Handler) dropSession(r *http.Request, id string) {
	err := h.uploads.RemoveSession(context.WithoutCancel(r.Context()), id)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		h.logger.Warn("removing an upload that failed to start", zap.String("upload", id), zap.Error(err))
	}
}

// serveUpload answers a request at an upload URL. An upload of another user
// answers exactly as one that does not exist.
func (h *Handler) serveUpload(w http.ResponseWriter, r *http.Request, req *request) error {
	if h.uploads == nil {
		return errNotFound
	}
	method := tusMethod(r)
	if method != http.MethodHead && method != "PATCH" && method != http.MethodDelete {
		return methodNotAllowed(allowedOnUploads, method+" is not allowed on an upload")
	}
	w.Header().Set("Tus-Resumable", tusVersion)
	if err := checkTusResumable(w, r); err != nil {
		return err
	}
	s, err := h.ownSession(r.Context(), req)
	if err != nil {
		return err
	}
	switch method {
	case http.MethodHead:
		return h.handleTusHead(w, r, req, s)
	case "PATCH":
		return h.handleTusPatch(w, r, req, s)
	}
	return h.handleTusDelete(w, r, s)
}

// tusMethod is the request's method, or the one X-HTTP-Method-Override
// names on a POST, for clients behind proxies that pass only GET and POST.
func tusMethod(r *http.Request) string {
	if o := r.Header.Get("X-HTTP-Method-Override"); r.Method == http.MethodPost && o != "" {
		return strings.ToUpper(strings.TrimSpace(o))
	}
	return r.Method
}

// ownSession loads the upload the request URL names if the user started it.
func (h *Handler) ownSession(ctx context.Context, req *request) (storage.UploadSession, error) {
	s, err := h.uploads.Session(ctx, req.path.upload)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return s, errNotFound
	case err != nil:
		return s, fmt.Errorf("reading upload %s: %w", req.path.upload, err)
	case s.User != req.user.ID:
		return s, errNotFound
	}
	return s, nil
}

// handleTusHead reports an upload's progress; it must never be cached.
func (h *Handler) handleTusHead(w http.ResponseWriter, r *http.Request, req *request, s storage.UploadSession) error {
	hdr := w.Header()
	hdr.Set("Upload-Length", strconv.FormatInt(s.Length, 10))
	hdr.Set("Cache-Control", "no-store")
	if s.Target.Name != "" {
		hdr.Set("Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte(s.Target.Name)))
	}
	if s.Offset == s.Length {
		// Every byte arrived but no commit followed: the server stopped
		// between the two, or the commit was refused. Clients take an
		// upload whose offset is its length for done and send nothing
		// more, so it is committed now, or its refusal answered.
		return h.completeUpload(w, r, req, s, time.Time{}, http.StatusOK)
	}
	setProgressHeaders(hdr, s)
	w.WriteHeader(http.StatusOK)
	return nil
}

// handleTusPatch appends the request body at the upload's offset; the last
// byte commits the file, with the X-OC-Mtime of this request if it has one.
func (h *Handler) handleTusPatch(w http.ResponseWriter, r *http.Request, req *request, s storage.UploadSession) error {
	if !isTusContent(r) {
		return errorf(http.StatusUnsupportedMediaType, "PATCH needs Content-Type: %s", tusContentType)
	}
	offset, err := parseTusNumber("Upload-Offset", r.Header.Get("Upload-Offset"))
	if err != nil {
		return err
	}
	// Read before any byte is stored: a bad one refuses the whole PATCH.
	mtime, err := parseMtime(r)
	if err != nil {
		return err
	}
	if offset != s.Offset {
		return errorf(http.StatusConflict, "Upload-Offset %d does not match the upload's offset %d", offset, s.Offset)
	}
	check, err := parseUploadChecksum(r.Header.Get("Upload-Checksum"))
	if err != nil {
		return err
	}
	if r.ContentLength > s.Length-s.Offset {
		return errChunkTooLong
	}
	// A PATCH at the end (an empty one, after a completion was refused)
	// tries the commit again.
	if s.Offset < s.Length {
		if s, err = h.appendChunk(r, s, check); err != nil {
			return err
		}
	}
	if s.Offset == s.Length {
		return h.completeUpload(w, r, req, s, mtime, http.StatusNoContent)
	}
	setProgressHeaders(w.Header(), s)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleTusDelete ends an upload and frees its bytes (termination).
func (h *Handler) handleTusDelete(w http.ResponseWriter, r *http.Request, s storage.UploadSession) error {
	err := h.uploads.RemoveSession(r.Context(), s.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("removing upload %s: %w", s.ID, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var errChunkTooLong = withReason(errorf(http.StatusRequestEntityTooLarge, "The body would end past Upload-Length"), reasonUploadLength)

// appendChunk streams the request body into the upload, never holding more
// of it than a copy buffer.
func (h *Handler) appendChunk(r *http.Request, s storage.UploadSession, check *checksum.Expected) (storage.UploadSession, error) {
	src := &bodyReader{r: r.Body}
	got, err := h.uploads.AppendSession(r.Context(), s.ID, s.Offset, src, check)
	if err != nil {
		return got, appendError(err, src.err)
	}
	return got, nil
}

// appendError answers an append that failed.
func appendError(err, readErr error) error {
	switch {
	case errors.Is(err, storage.ErrChecksum):
		return &davError{status: statusChecksumMismatch, cause: err,
			message: "Upload-Checksum does not match the bytes received: they were discarded"}
	case readErr != nil:
		// Without a checksum the bytes read are kept: HEAD tells the
		// client where to resume.
		return bodyReadError(readErr)
	case errors.Is(err, storage.ErrConflict):
		return &davError{status: http.StatusConflict, cause: err,
			message: "The upload's offset changed meanwhile: ask HEAD for it"}
	case errors.Is(err, storage.ErrInvalid):
		return &davError{status: http.StatusRequestEntityTooLarge, cause: err, message: errChunkTooLong.message, reason: reasonUploadLength}
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	}
	return storeWriteError(err)
}

// completeUpload commits a fully received upload as a PUT of its target
// would be: its target is read again and the request's If header and the
// locks on it are checked at this moment; the store repeats the
// preconditions given at creation, and the lock check with this request's
// tokens. A non-zero mtime replaces the one the upload started with. The
// answer carries the headers of a PUT's, so that a sync client needs no
// PROPFIND to learn what it wrote.
func (h *Handler) completeUpload(w http.ResponseWriter, r *http.Request, req *request, s storage.UploadSession, mtime time.Time, status int) error {
	t, err := h.sessionTarget(r.Context(), req.user, s)
	if err != nil {
		return err
	}
	if _, err := h.checkWrite(r, req, t, -1); err != nil {
		return err
	}
	node, _, err := h.uploads.CompleteSession(r.Context(), s.ID, h.heldTokens(r, req), mtime)
	if errors.Is(err, storage.ErrChecksum) {
		return &davError{status: statusChecksumMismatch, message: msgChecksumMismatch, cause: err}
	}
	if err != nil {
		return err
	}
	if mtime.IsZero() {
		mtime = s.Target.ModTime
	}
	h.setCommittedHeaders(r.Context(), w, t, node, mtime)
	w.Header().Set("Upload-Offset", strconv.FormatInt(s.Offset, 10))
	w.WriteHeader(status)
	return nil
}

// sessionTarget reads the target of an upload as resolve would: the file
// its id names, or the name in its folder.
func (h *Handler) sessionTarget(ctx context.Context, user storage.User, s storage.UploadSession) (*target, error) {
	space, err := h.store.Space(ctx, s.SpaceID)
	if err != nil {
		return nil, err
	}
	acc, reach, err := h.sessionAccess(ctx, user, space, s)
	if err != nil {
		return nil, err
	}
	t := &target{space: space, access: reach.atNode(acc, s.Target.NodeID, true), share: reach, name: s.Target.Name}
	if id := s.Target.NodeID; id != "" {
		if t.node, err = h.store.Node(ctx, space.ID, id); err != nil {
			return nil, err
		}
		t.exists, t.isBase = true, true
		return t, nil
	}
	t.parent, err = h.store.Node(ctx, space.ID, s.Target.ParentID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return t, nil
	case err != nil:
		return nil, err
	}
	t.hasParent = t.parent.IsFolder()
	if !t.hasParent {
		return t, nil
	}
	t.node, err = h.store.Child(ctx, space.ID, t.parent.ID, t.name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return t, nil
	case err != nil:
		return nil, err
	}
	t.exists = true
	return t, nil
}

// sessionAccess is the caller's access to the target of upload s in
// space: a member's, a recipient's while a share still reaches the
// target, or, through a link, the link's while the target is still the
// link's item or below it.
func (h *Handler) sessionAccess(ctx context.Context, user storage.User, space storage.Space, s storage.UploadSession) (access, shareReach, error) {
	at := cmp.Or(s.Target.NodeID, s.Target.ParentID)
	if link := linkOf(ctx); link != nil {
		acc, err := h.linkSessionAccess(ctx, link, space, at)
		return acc, shareReach{}, err
	}
	return h.accessTo(ctx, user, space, at)
}

// setProgressHeaders tells how far an upload is and until when it is kept.
func setProgressHeaders(hdr http.Header, s storage.UploadSession) {
	hdr.Set("Upload-Offset", strconv.FormatInt(s.Offset, 10))
	hdr.Set("Upload-Expires", s.Expires.UTC().Format(http.TimeFormat))
}

// uploadLocation is the absolute upload URL, below the /remote.php form the
// client used, if it did. Absolute, because the ownCloud desktop client
// (Qt 5) takes a Location without a scheme for none and then PATCHes an
// empty URL.
func uploadLocation(r *http.Request, dp davPath, id string) string {
	if dp.kind == basePublic {
		return origin.Of(r) + publicUploadLocation(dp, url.PathEscape(id))
	}
	prefix := ""
	if strings.HasPrefix(dp.base, "/remote.php/") {
		prefix = "/remote.php"
	}
	return origin.Of(r) + prefix + "/dav" + uploadsPath + url.PathEscape(id)
}

// descendantPath is dp with names appended.
func descendantPath(dp davPath, names []string) davPath {
	dp.segments = append(slices.Clip(dp.segments), names...)
	return dp
}

// isTusContent reports whether the body is upload bytes.
func isTusContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), tusContentType)
}

// parseUploadLength reads Upload-Length. A missing one answers 412, as
// ownCloud clients and its acceptance tests expect (there is no deferred
// length here); one that is no number answers 400.
func parseUploadLength(r *http.Request) (int64, error) {
	v := r.Header.Get("Upload-Length")
	if v == "" {
		return 0, errorf(http.StatusPreconditionFailed, "Upload-Length is required: uploads of unknown length are not supported")
	}
	return parseTusNumber("Upload-Length", v)
}

// parseTusNumber reads a non-negative decimal header: digits only.
func parseTusNumber(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || v == "" || v[0] < '0' || v[0] > '9' {
		return 0, errorf(http.StatusBadRequest, "%s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}
