package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Writing a file, the steps PUT, TUS, chunking NG and v1 chunks share:
// checkWrite before any byte is read, receiveBody to store the bytes, and
// commitFile to make them the file and answer as a PUT does.

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
	up, err := h.receiveFile(r.Context(), t, c)
	if err != nil {
		return err
	}
	node, created, err := commitUpload(r.Context(), up, place, c)
	if err != nil {
		return err
	}
	h.setCommittedHeaders(r.Context(), w, t, node, c.mtime)
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// receiveFile stores content in a new upload of t's space and checks it
// against its checksum. The caller commits the upload (commitUpload) or
// discards it; a failed one is discarded already.
func (h *Handler) receiveFile(ctx context.Context, t *target, c fileContent) (storage.Upload, error) {
	up, err := h.store.NewUpload(ctx, t.space.ID)
	if err != nil {
		return nil, err
	}
	if err := c.fill(up); err != nil {
		up.Discard()
		return nil, err
	}
	if c.expected != nil && !c.expected.Matches(up.Checksums()) {
		up.Discard()
		return nil, errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	return up, nil
}

// commitUpload makes a received upload the file at place, with the
// modification time and type of its content.
func commitUpload(ctx context.Context, up storage.Upload, place storage.Commit, c fileContent) (storage.Node, bool, error) {
	defer up.Discard()
	place.ModTime = c.mtime
	place.ContentType = c.contentType
	return up.Commit(ctx, place)
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
	if place.Conditions, err = h.changeConditions(r, req, t, written(t)...); err != nil {
		return place, err
	}
	if size > 0 {
		// Refused before the body is read, so a client waiting for
		// 100 Continue never sends it.
		if err := h.checkFreeQuota(r.Context(), t.space, size-replacedSize(t), newNodes(t)); err != nil {
			return place, err
		}
	}
	return place, nil
}

// announcedDigests are the algorithms of the checksums a client announced
// for a file (nil ones are none): the digests an upload of it computes
// while its bytes arrive, so that they can be checked before the commit,
// where the store computes the others after it (storage.HashInline).
func announcedDigests(expected ...*checksum.Expected) []checksum.Algorithm {
	var algs []checksum.Algorithm
	for _, e := range expected {
		if e != nil && !slices.Contains(algs, e.Algorithm) {
			algs = append(algs, e.Algorithm)
		}
	}
	return algs
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

// newNodes is how many nodes a write to t adds to its space: one for a
// new file, none for a file it replaces.
func newNodes(t *target) int64 {
	if t.exists {
		return 0
	}
	return 1
}

// replacedSize is the size of the file a PUT replaces, 0 when it creates one.
func replacedSize(t *target) int64 {
	if t.exists {
		return t.node.Size
	}
	return 0
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
		return c, errNoParent(t.name)
	default:
		c.ParentID, c.Name = t.parent.ID, t.name
	}
	if !t.mayPlace(false) {
		return c, errReadOnly
	}
	return c, nil
}

// errNoParent refuses to write name where its folder does not exist.
func errNoParent(name string) *davError {
	return errorf(http.StatusConflict, "The parent collection of %s does not exist", name)
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

// hasBody reports whether the request carries a non-empty body.
func hasBody(r *http.Request) bool {
	if r.ContentLength > 0 {
		return true
	}
	if r.ContentLength == 0 || r.Body == nil {
		return false
	}
	var b [1]byte
	n, _ := io.ReadFull(r.Body, b[:])
	return n > 0
}
