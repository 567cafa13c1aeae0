package davhandler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Nextcloud's bulk upload: POST /remote.php/dav/bulk with a
// multipart/related body, one part per file. A part names its file with
// X-File-Path, relative to the user's own files root
// (/remote.php/dav/files/{user}/), and gives its Content-Length, its MD5
// (X-File-MD5, and or an OC-Checksum) and its modification time
// (X-File-Mtime, or X-OC-Mtime). The answer is a JSON object with a member
// per X-File-Path: {"error": false, "etag", "fileid", ...} for a committed
// file, {"error": true, "message"} for a refused one. Nextcloud's desktop
// client (BulkPropagatorJob) sends its new files of up to 100 KiB this way,
// 100 to a request, once the capabilities say dav.bulkupload.
//
// Every file goes the way of a PUT (checkWrite, receiveFile, commitUpload)
// and a refusal of one (name, place, lock, quota, checksum) is that file's
// answer only. A body that is not what the protocol says (no multipart,
// a part without its path or length, a length that lies, a truncated
// stream) is refused whole, with 400, once the files committed before it
// are; no file is ever committed in part.

const (
	// bulkSegment is the segment after /dav that names the endpoint.
	bulkSegment = "bulk"
	// maxBulkParts caps the files of one request; Nextcloud's client
	// sends 100.
	maxBulkParts = 1000
	// maxBulkPartBytes caps one file of a request; the client sends files
	// of up to 100 KiB so, bigger ones with PUT or chunked uploads. A
	// bigger part is refused as its file's answer.
	maxBulkPartBytes = 16 << 20
	// maxBulkBytes caps a request body.
	maxBulkBytes = 256 << 20
	// bulkCommitters bounds the commits of one request under way while its
	// next parts are read: they wait for the same group commit
	// (boltstore/groupcommit.go), so that a request of 100 small files
	// costs a few transactions, not 100.
	bulkCommitters = 16
)

// parseBulkPath handles what follows /dav/bulk: nothing does.
func parseBulkPath(base, first, rest string) (davPath, bool, *davError) {
	if first != "" || strings.Trim(rest, "/") != "" {
		return davPath{}, true, errNotFound
	}
	return davPath{kind: baseBulk, base: base + "/" + bulkSegment}, true, nil
}

// serveBulk answers a bulk upload: every file committed or refused, then
// the answer of each.
func (h *Handler) serveBulk(w http.ResponseWriter, r *http.Request, req *request) error {
	if !h.bulkUpload {
		return errNotFound
	}
	if r.Method != http.MethodPost {
		return &davError{status: http.StatusMethodNotAllowed, allow: allowedOnBulk,
			message: r.Method + " is not allowed on the bulk upload endpoint: POST the files as multipart/related"}
	}
	boundary, err := bulkBoundary(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	b := &bulkUpload{h: h, r: r, user: req.user, slots: make(chan struct{}, bulkCommitters),
		answers: map[string]bulkAnswer{}, committing: map[string]chan struct{}{}}
	watched := newCloseWatch(http.MaxBytesReader(w, r.Body, maxBulkBytes), boundary)
	err = b.readParts(multipart.NewReader(watched, boundary), watched)
	b.wg.Wait()
	if err != nil {
		return err
	}
	body, err := encodeAnswers(b.answers)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	// A failed write is a client gone: there is nobody left to answer.
	w.Write(body)
	return nil
}

// encodeAnswers is the JSON of a bulk upload's answers. Its size is bounded
// by the request's: an answer per X-File-Path (at most maxBulkParts of
// them), each naming its path (at most storage.MaxPathBytes) once, with a
// message that quotes at most that path again. "<", ">" and "&" stay as they
// are, not six bytes each: the answer is JSON, never HTML.
func encodeAnswers(answers map[string]bulkAnswer) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(answers); err != nil {
		return nil, fmt.Errorf("encoding the bulk upload's answer: %w", err)
	}
	return buf.Bytes(), nil
}

// bulkBoundary returns the boundary of a multipart/related Content-Type.
func bulkBoundary(contentType string) (string, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/related" {
		return "", errorf(http.StatusBadRequest, "Content-Type must be multipart/related with a boundary")
	}
	boundary := params["boundary"]
	if boundary == "" {
		return "", errorf(http.StatusBadRequest, "Content-Type must be multipart/related with a boundary")
	}
	return boundary, nil
}

// bulkAnswer is the answer about one file, with the keys Nextcloud's
// server gives (error, message, etag, fileid, permissions) and those its
// client reads besides, named as the headers of a PUT's answer
// (OC-FileID, X-OC-MTime): with them it keeps the file id without asking.
type bulkAnswer struct {
	Error       bool   `json:"error"`
	Message     string `json:"message,omitempty"`
	ETag        string `json:"etag,omitempty"`
	FileID      string `json:"fileid,omitempty"`
	Permissions string `json:"permissions,omitempty"`
	OCFileID    string `json:"OC-FileID,omitempty"`
	MTime       string `json:"X-OC-MTime,omitempty"`
}

// bulkUpload is one bulk request under way: its parts are read one after
// the other, each commit runs beside the reading of the next parts.
type bulkUpload struct {
	h    *Handler
	r    *http.Request
	user storage.User

	// slots bounds the commits under way; wg waits for them.
	slots chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	answers map[string]bulkAnswer // by X-File-Path, as sent

	// committing holds, by the file's path below the root, a channel
	// closed when its latest commit ended: a path sent twice is written
	// in the order of its parts. Only the reading goroutine uses it.
	committing map[string]chan struct{}
}

// readParts reads the parts up to the closing boundary, which body sees
// go by; an error refuses the request as a whole.
func (b *bulkUpload) readParts(mr *multipart.Reader, body *closeWatch) error {
	for n := 0; ; n++ {
		// NextRawPart: the bytes of a part are the file's, never decoded
		// by a Content-Transfer-Encoding.
		part, err := mr.NextRawPart()
		if err == io.EOF && !body.seen {
			// The body ended inside the headers of a part.
			return errorf(http.StatusBadRequest, "The bulk upload ends inside the headers of its part %d", n+1)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return bodyReadError(fmt.Errorf("after %d parts: %w", n, err))
		}
		if n == maxBulkParts {
			return errorf(http.StatusRequestEntityTooLarge, "A bulk upload has at most %d files", maxBulkParts)
		}
		if err := b.readPart(part); err != nil {
			return err
		}
	}
}

// bulkPart is what the headers of one part say.
type bulkPart struct {
	// path is X-File-Path as sent: the key of its answer.
	path string
	size int64
	// header is the part's; its conditions and lock tokens are the file's.
	header http.Header
}

// readPart reads one part: its file is committed in the background or
// refused in the answer. Only a part that breaks the protocol is an error.
func (b *bulkUpload) readPart(part *multipart.Part) error {
	p, err := parseBulkPart(http.Header(part.Header))
	if err != nil {
		return err
	}
	f, err := b.check(p)
	if err != nil {
		// The part's bytes are read all the same: a lying length is the
		// request's fault, whatever the file's.
		if rerr := receivePart(io.Discard, part, p); rerr != nil {
			return rerr
		}
		b.refuse(p.path, err)
		return nil
	}
	f.content.fill = func(up storage.Upload) error {
		storage.HashInline(up, f.announced()...)
		return receivePart(up, part, p)
	}
	up, err := b.h.receiveFile(b.r.Context(), f.target, f.content)
	if malformed, ok := errors.AsType[*malformedPart](err); ok {
		return malformed.err
	}
	if err == nil && !matchesAll(f.extra, up.Checksums()) {
		up.Discard()
		err = errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	if err != nil {
		b.refuse(p.path, err)
		return nil
	}
	b.commit(p.path, f, up)
	return nil
}

// parseBulkPart reads the headers of a part that every part must have:
// the request is malformed without them, as Nextcloud's server has it.
func parseBulkPart(hdr http.Header) (bulkPart, error) {
	p := bulkPart{path: hdr.Get("X-File-Path"), header: hdr}
	if p.path == "" {
		return p, errorf(http.StatusBadRequest, "A part of the bulk upload has no X-File-Path")
	}
	if err := pathSizeError(p.path, http.StatusBadRequest); err != nil {
		// The request as a whole: its answer would echo the path.
		err.header = "X-File-Path"
		return p, err
	}
	length := hdr.Get("Content-Length")
	size, err := strconv.ParseInt(length, 10, 64)
	if err != nil || size < 0 {
		return p, errorf(http.StatusBadRequest, "The part of %s has no valid Content-Length: %q", p.path, length)
	}
	p.size = size
	if hdr.Get("X-File-MD5") == "" && hdr.Get("OC-Checksum") == "" {
		return p, errorf(http.StatusBadRequest, "The part of %s has neither X-File-MD5 nor OC-Checksum", p.path)
	}
	return p, nil
}

// bulkFile is the file of a part that may be written.
type bulkFile struct {
	target *target
	// key is its path below the files root.
	key     string
	place   storage.Commit
	content fileContent
	// extra are the checksums it must match besides content.expected.
	extra []checksum.Expected
}

// announced are the digests the part's checksums name (X-File-MD5,
// OC-Checksum): those its upload computes while its bytes arrive.
func (f bulkFile) announced() []checksum.Algorithm {
	expected := []*checksum.Expected{f.content.expected}
	for i := range f.extra {
		expected = append(expected, &f.extra[i])
	}
	return announcedDigests(expected...)
}

// check decides whether the file of a part may be written, as PUT does
// before it reads a body.
func (b *bulkUpload) check(p bulkPart) (bulkFile, error) {
	var f bulkFile
	segments, err := bulkSegments(p.path)
	if err != nil {
		return f, err
	}
	if p.size > maxBulkPartBytes {
		return f, errorf(http.StatusRequestEntityTooLarge,
			"A file of a bulk upload has at most %d bytes: upload %s with PUT", maxBulkPartBytes, p.path)
	}
	expected, err := bulkChecksums(p.header)
	if err != nil {
		return f, err
	}
	f.content.expected, f.extra = &expected[0], expected[1:]
	if f.content.mtime, err = bulkMtime(p.header); err != nil {
		return f, err
	}
	f.content.contentType = storedContentType(p.header.Get("Content-Type"))
	// A path sent twice waits for its earlier commit, so that it is
	// checked against the file that commit made.
	f.key = strings.Join(segments, "/")
	if done, ok := b.committing[f.key]; ok {
		<-done
	}
	req := &request{user: b.user, path: davPath{kind: baseFiles, user: b.user.ID,
		base: "/remote.php/dav/files/" + b.user.ID, segments: segments}}
	if f.target, err = b.h.resolve(b.r.Context(), b.user, req.path); err != nil {
		return f, err
	}
	f.place, err = b.h.checkWrite(partRequest(b.r, p), req, f.target, p.size)
	// Nextcloud's client may send a file again while the request that
	// carries it is under way (storage.Commit.Unchanged): both answers must
	// give the etag the file ends with.
	f.place.KeepSame = true
	return f, err
}

// bulkSegments splits an X-File-Path into the names below the user's files
// root. A path that would leave the root names no place there, and is
// answered as one whose folder does not exist.
func bulkSegments(p string) ([]string, error) {
	var segments []string
	for s := range strings.SplitSeq(p, "/") {
		switch s {
		case "":
			continue
		case ".", "..":
			return nil, errNoParent(lastSegment(p))
		}
		if err := validateName(s); err != nil {
			return nil, err
		}
		segments = append(segments, s)
	}
	if len(segments) == 0 {
		return nil, errorf(http.StatusConflict, "%s is a collection: a bulk upload writes files", p)
	}
	return segments, nil
}

// lastSegment is the last non-empty segment of a path.
func lastSegment(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// bulkChecksums reads the checksums a part announces: X-File-MD5 (the
// bare hex digest, or with an "MD5:" prefix) and OC-Checksum; at least
// one is there (parseBulkPart).
func bulkChecksums(hdr http.Header) ([]checksum.Expected, error) {
	var all []checksum.Expected
	if v := strings.TrimSpace(hdr.Get("X-File-MD5")); v != "" {
		digest, _ := strings.CutPrefix(v, "MD5:")
		e, err := checksum.ParseOCChecksum("MD5:" + digest)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "X-File-MD5: %v", err)
		}
		all = append(all, e)
	}
	if v := hdr.Get("OC-Checksum"); v != "" {
		e, err := checksum.ParseOCChecksum(v)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "OC-Checksum: %v", err)
		}
		all = append(all, e)
	}
	return all, nil
}

// matchesAll reports whether sums agree with every one of expected.
func matchesAll(expected []checksum.Expected, sums checksum.Sums) bool {
	for _, e := range expected {
		if !e.Matches(sums) {
			return false
		}
	}
	return true
}

// bulkMtime reads a part's modification time: X-File-Mtime, which
// Nextcloud's client sends, else X-OC-Mtime.
func bulkMtime(hdr http.Header) (t time.Time, err error) {
	if v := hdr.Get("X-File-Mtime"); v != "" {
		return parseMtimeValue("X-File-Mtime", v)
	}
	return parseMtimeValue("X-OC-Mtime", hdr.Get("X-OC-Mtime"))
}

// partRequest is r as the request of one part's file: with the part's
// headers, which carry that file's conditions (If-Match) and lock tokens
// (If) as a PUT's do, and its length.
func partRequest(r *http.Request, p bulkPart) *http.Request {
	pr := r.WithContext(r.Context())
	pr.Header = p.header
	pr.Body, pr.ContentLength = http.NoBody, p.size
	return pr
}

// malformedPart is a part that breaks the protocol: the request fails.
type malformedPart struct{ err error }

func (m *malformedPart) Error() string { return m.err.Error() }
func (m *malformedPart) Unwrap() error { return m.err }

// receivePart copies the bytes of a part to dst, which fails only with
// dst's own error. Bytes that cannot be read, or more or fewer of them
// than the part's Content-Length says, break the request.
func receivePart(dst io.Writer, part io.Reader, p bulkPart) error {
	src := &bodyReader{r: io.LimitReader(part, p.size+1)}
	n, err := io.Copy(dst, src)
	switch {
	case src.err != nil:
		return &malformedPart{err: bodyReadError(src.err)}
	case err != nil:
		return storeWriteError(err)
	case n != p.size:
		return &malformedPart{err: errorf(http.StatusBadRequest,
			"The part of %s is not as long as its Content-Length says (%d bytes)", p.path, p.size)}
	}
	return nil
}

// commit commits the received file of path in the background, once a
// slot is free, and keeps its answer.
func (b *bulkUpload) commit(path string, f bulkFile, up storage.Upload) {
	done := make(chan struct{})
	b.committing[f.key] = done
	b.slots <- struct{}{}
	b.wg.Go(func() {
		defer func() {
			<-b.slots
			close(done)
		}()
		node, _, err := commitUpload(b.r.Context(), up, f.place, f.content)
		if err != nil {
			b.refuse(path, err)
			return
		}
		b.answer(path, b.committed(f, node))
	})
}

// committed is the answer about a committed file: what a PUT's headers say.
func (b *bulkUpload) committed(f bulkFile, node storage.Node) bulkAnswer {
	a := bulkAnswer{
		ETag:        quoteETag(node.ETag),
		FileID:      resourceID(b.h.store.StorageID(), node),
		Permissions: permissions(f.target.access, false),
	}
	a.OCFileID = a.FileID
	if !f.content.mtime.IsZero() {
		a.MTime = "accepted"
	}
	return a
}

// refuse answers path with err, as a PUT of the file would be refused,
// and logs it as the refusal of a request is.
func (b *bulkUpload) refuse(path string, err error) {
	de := storageError(err)
	b.h.logFailure(b.r, de, err)
	b.answer(path, bulkAnswer{Error: true, Message: de.message})
}

func (b *bulkUpload) answer(path string, a bulkAnswer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answers[path] = a
}
