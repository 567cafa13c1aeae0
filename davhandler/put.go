package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

const msgChecksumMismatch = "The computed checksum does not match the one received from the client."

func (h *Handler) handlePut(w http.ResponseWriter, r *http.Request, req *request) error {
	if r.Header.Get("Content-Range") != "" {
		return errorf(http.StatusBadRequest, "Content-Range is not allowed on PUT: upload the whole content")
	}
	if isV1Chunk(r) {
		return h.handleV1Chunk(w, r, req)
	}
	expected, err := parseExpectedChecksum(r)
	if err != nil {
		return err
	}
	mtime, err := parseMtime(r)
	if err != nil {
		return err
	}
	t, err := h.resolve(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	place, err := h.checkWrite(r, req, t, r.ContentLength)
	if err != nil {
		return err
	}
	return h.commitFile(w, r, t, place, fileContent{
		fill:        func(up storage.Upload) error { return receiveBody(up, r.Body) },
		expected:    expected,
		mtime:       mtime,
		contentType: storedContentType(r.Header.Get("Content-Type")),
	})
}

// fileContent is the content a request writes as a file: a PUT's body, or
// the parts of a chunked upload.
type fileContent struct {
	// fill writes the content into up.
	fill func(up storage.Upload) error
	// expected, when set, is the whole content's checksum the client sent.
	expected    *checksum.Expected
	mtime       time.Time
	contentType string
}

// commitFile receives content and commits it at place, a file of t checked
// by checkWrite, and answers as a PUT: 201 for a new file, 204 for a
// replaced one, with the headers describing it. Content that does not match
// its checksum is no file.
func (h *Handler) commitFile(w http.ResponseWriter, r *http.Request, t *target, place storage.Commit, c fileContent) error {
	up, err := h.store.NewUpload(r.Context(), t.space.ID)
	if err != nil {
		return err
	}
	defer up.Discard()
	if err := c.fill(up); err != nil {
		return err
	}
	if c.expected != nil && !c.expected.Matches(up.Checksums()) {
		return errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	place.ModTime = c.mtime
	place.ContentType = c.contentType
	node, created, err := up.Commit(r.Context(), place)
	if err != nil {
		return err
	}
	h.setCommittedHeaders(w, t, node, c.mtime)
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// checkWrite lets a request write a file at t (PUT, or a TUS upload when it
// starts and again when it completes) and returns where the content is
// committed, with the request's preconditions for the store to repeat
// atomically. size is the announced length, negative when unknown.
func (h *Handler) checkWrite(r *http.Request, req *request, t *target, size int64) (storage.Commit, error) {
	place, err := uploadPlace(t)
	if err != nil {
		return place, err
	}
	if err := h.checkLocks(r, req, t, written(t)...); err != nil {
		return place, err
	}
	place.Conditions, err = checkPreconditions(r, t)
	if err != nil {
		return place, err
	}
	place.Locks = h.heldTokens(r, req)
	if size > 0 {
		// Refused before the body is read, so a client waiting for
		// 100 Continue never sends it.
		if err := h.checkFreeQuota(r.Context(), t.space, size-replacedSize(t)); err != nil {
			return place, err
		}
	}
	return place, nil
}

// setCommittedHeaders describes a file just written: its entity tags, id,
// modification time and permissions, and whether the client's mtime was
// applied.
func (h *Handler) setCommittedHeaders(w http.ResponseWriter, t *target, node storage.Node, mtime time.Time) {
	h.setNodeHeaders(w, node)
	w.Header().Set("OC-Perm", permissions(t.role, false))
	if !mtime.IsZero() {
		w.Header().Set("X-OC-Mtime", "accepted")
	}
}

// receiveBody copies a request body into an upload. A body that cannot be
// read is the client's fault; bytes that cannot be stored are the server's.
func receiveBody(up storage.Upload, body io.Reader) error {
	src := &bodyReader{r: body}
	_, err := io.Copy(up, src)
	switch {
	case err == nil:
		return nil
	case src.err != nil:
		return bodyReadError(src.err)
	}
	return storeWriteError(err)
}

// bodyReader remembers why reading the request body failed, so that the
// failure can be told from one writing to the store.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// bodyReadError answers a body the client did not send in full: 413 when a
// size limit (http.MaxBytesReader, Caddy's request_body max_size) cut it,
// 499 when the client abandoned it.
func bodyReadError(err error) error {
	if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &davError{status: http.StatusRequestEntityTooLarge, cause: err,
			message: fmt.Sprintf("The request body is larger than the server accepts (%d bytes)", tooLarge.Limit)}
	}
	if streamCancelled(err) {
		return &davError{status: statusClientClosedRequest, message: msgClientClosed, cause: err}
	}
	return &davError{status: http.StatusBadRequest, message: "reading request body: " + err.Error(), cause: err}
}

// streamCancelled reports whether err is the reset of an HTTP/2 stream
// with CANCEL: how an HTTP/2 client abandons a request. (Over HTTP/1.1 it
// closes the connection, and the body merely ends early.) The standard
// library's HTTP/2 errors match golang.org/x/net/http2's too.
func streamCancelled(err error) bool {
	se, ok := errors.AsType[http2.StreamError](err)
	return ok && se.Code == http2.ErrCodeCancel
}

// storeWriteError answers bytes the store could not write: 507 when its
// storage is full, 503 when its backend is unreachable, 500 otherwise; all
// are the server's fault.
func storeWriteError(err error) error {
	err = fmt.Errorf("storing the request body: %w", err)
	switch {
	case errors.Is(err, storage.ErrInsufficientStorage):
		return &davError{status: http.StatusInsufficientStorage, message: msgDiskFull, cause: err, fault: true}
	case errors.Is(err, storage.ErrUnavailable):
		return storageError(err)
	}
	return &davError{status: http.StatusInternalServerError, message: "internal server error", cause: err, fault: true}
}

// replacedSize is the size of the file a PUT replaces, 0 when it creates one.
func replacedSize(t *target) int64 {
	if t.exists {
		return t.node.Size
	}
	return 0
}

// checkFreeQuota refuses growing the space by growth bytes when its free
// quota (the quota less the tree size of its root) cannot hold them. It is
// an early answer for a size announced before the bytes arrive; the store
// checks again when it commits them.
func (h *Handler) checkFreeQuota(ctx context.Context, space storage.Space, growth int64) error {
	if space.Quota < 0 || growth <= 0 {
		return nil
	}
	free, _, err := h.freeQuota(ctx, space)
	if err != nil {
		return err
	}
	if growth > free {
		return &davError{status: http.StatusInsufficientStorage, message: msgQuotaExceeded,
			cause: fmt.Errorf("%d of %d bytes free, %d more", free, space.Quota, growth)}
	}
	return nil
}

// freeQuota returns what the space's quota leaves free (never negative)
// after its files, dead properties and the reservations of unfinished
// uploads; limited=false when the space has no quota. PUT, PROPFIND, TUS
// and the chunked uploads all ask it.
func (h *Handler) freeQuota(ctx context.Context, space storage.Space) (free int64, limited bool, err error) {
	if space.Quota < 0 {
		return 0, false, nil
	}
	u, err := h.store.Usage(ctx, space.ID)
	if err != nil {
		return 0, true, fmt.Errorf("reading the usage of space %s: %w", space.ID, err)
	}
	free, limited = u.Free(space.Quota)
	return free, limited, nil
}

// uploadPlace returns where a PUT writes: the file a file id names,
// wherever it is when the upload commits, or a name in a folder.
func uploadPlace(t *target) (storage.Commit, error) {
	var c storage.Commit
	switch {
	case t.exists && t.node.IsFolder():
		return c, errorf(http.StatusConflict, "%s is a collection: PUT needs a file name", displayNameOf(t))
	case t.exists && t.isBase:
		// The file id names the file, not its place: a MOVE meanwhile must
		// not make the PUT create a new file at the old place. ParentID and
		// Name, which the store ignores then, still describe the request.
		c.NodeID, c.ParentID, c.Name = t.node.ID, t.node.ParentID, t.node.Name
	case !t.hasParent:
		return c, errorf(http.StatusConflict, "The parent collection of %s does not exist", t.name)
	default:
		c.ParentID, c.Name = t.parent.ID, t.name
	}
	if !t.canWrite() {
		return c, errReadOnly
	}
	return c, nil
}

func displayNameOf(t *target) string {
	if t.name != "" {
		return t.name
	}
	return "the target"
}

// storedContentType keeps a meaningful client type; the generic one is
// dropped so the type is guessed from the name instead.
func storedContentType(ct string) string {
	ct = strings.TrimSpace(ct)
	if ct == "application/octet-stream" {
		return ""
	}
	return ct
}

// parseExpectedChecksum reads OC-Checksum, if present.
func parseExpectedChecksum(r *http.Request) (*checksum.Expected, error) {
	v := r.Header.Get("OC-Checksum")
	if v == "" {
		return nil, nil
	}
	e, err := checksum.ParseOCChecksum(v)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "OC-Checksum: %v", err)
	}
	return &e, nil
}

// parseMtime reads X-OC-Mtime: Unix seconds from 1970 to the end of year
// 9999, optionally with a decimal fraction. It is read as decimal text, not
// as a float, so NaN, infinities, exponents and hex floats never pass and
// nanoseconds come out exact.
func parseMtime(r *http.Request) (time.Time, error) {
	return parseMtimeValue("X-OC-Mtime", r.Header.Get("X-OC-Mtime"))
}

// parseMtimeValue reads a modification time in Unix seconds from what
// names it (a header, or the TUS metadata key mtime); "" is no time.
func parseMtimeValue(what, v string) (time.Time, error) {
	const maxSeconds = 253402300799 // 9999-12-31T23:59:59Z, the last HTTP-date
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	invalid := errorf(http.StatusBadRequest, "%s must be Unix seconds up to %d, got %q", what, maxSeconds, v)
	whole, frac, hasFrac := strings.Cut(v, ".")
	secs, err := strconv.ParseUint(whole, 10, 64)
	if err != nil || secs > maxSeconds {
		return time.Time{}, invalid
	}
	if !hasFrac {
		return time.Unix(int64(secs), 0).UTC(), nil
	}
	if frac == "" || strings.TrimLeft(frac, "0123456789") != "" {
		return time.Time{}, invalid
	}
	// Digits past nanoseconds are dropped; the others scale to nanoseconds.
	frac = (frac + "00000000")[:9]
	nanos, err := strconv.ParseUint(frac, 10, 32)
	if err != nil {
		return time.Time{}, invalid
	}
	return time.Unix(int64(secs), int64(nanos)).UTC(), nil
}
