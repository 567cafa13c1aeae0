package davhandler

import (
	"io"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

func (h *Handler) handleGet(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err == nil && !t.access.mayRead() {
		// A file drop: what it holds is nobody's to see.
		err = errNotFound
	}
	if err == nil && wantsPreview(r) {
		return h.servePreview(w, r, t)
	}
	if (err != nil || !wantsZip(r)) && h.servePage(w, r, t, err) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.node.IsFolder() && wantsZip(r) {
		h.serveZip(w, r, t)
		return nil
	}
	if t.node.IsFolder() {
		h.setNodeHeaders(r.Context(), w, t.node)
		w.Header().Set("Content-Type", "httpd/unix-directory")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	// The headers describe exactly the version whose bytes are sent, even
	// while the file is being replaced.
	node, content, err := h.store.Open(r.Context(), t.space.ID, t.node.ID)
	if err != nil {
		return err
	}
	defer content.Close()
	return h.sendContent(w, r, node, content)
}

// sendContent answers a GET or HEAD of a file with content, the bytes of
// node: the conditional requests and ranges of RFC 9110 against node's
// etag and modification time, and the headers of an ownCloud download. A
// file and a version of it are sent alike.
func (h *Handler) sendContent(w http.ResponseWriter, r *http.Request, node storage.Node, content storage.Content) error {
	if _, err := checkMatch(r, &target{node: node, exists: true}); err != nil {
		return err
	}
	h.setNodeHeaders(r.Context(), w, node)
	hdr := w.Header()
	setContentHeaders(hdr, node.Name, contentType(node))
	setChecksumHeader(hdr, node)
	// ServeContent answers Range, If-None-Match and If-Modified-Since; its
	// plain-text error bodies are replaced with the XML error shape.
	ew := &errorBodyWriter{ResponseWriter: w, r: r, buffers: &h.responseBuffers}
	if p, ok := content.(storage.Prefetcher); ok && r.Method != http.MethodHead {
		ew.prefetch, ew.fail = p, h.fail
	}
	http.ServeContent(ew, withoutEmptySuffixRanges(r, node.Size), "", node.ModTime, content)
	return nil
}

// withoutEmptySuffixRanges returns r without the suffix ranges of length
// 0 (bytes=-0) in its Range header. http.ServeContent takes one for an
// empty range at the end and answers 206 with no bytes, but RFC 9110
// §14.1.2 makes it unsatisfiable: a set with another range is answered
// for that range alone, and a set of nothing else is replaced by a range
// starting at the end, which ServeContent answers 416 (with Content-Range:
// bytes */size) once If-Range has had its say. r itself is left alone: the
// access log shows the header as the client sent it.
func withoutEmptySuffixRanges(r *http.Request, size int64) *http.Request {
	header := r.Header.Get("Range")
	const unit = "bytes="
	if !strings.HasPrefix(header, unit) {
		return r
	}
	var kept []string
	dropped := false
	for spec := range strings.SplitSeq(header[len(unit):], ",") {
		switch {
		case isEmptySuffixRange(spec):
			dropped = true
		case textproto.TrimString(spec) != "":
			kept = append(kept, spec)
		}
	}
	if !dropped {
		return r
	}
	header = unit + strings.Join(kept, ",")
	if len(kept) == 0 {
		header = unit + strconv.FormatInt(size, 10) + "-"
	}
	rr := r.WithContext(r.Context())
	rr.Header = r.Header.Clone()
	rr.Header.Set("Range", header)
	return rr
}

// isEmptySuffixRange reports whether spec, one range of a Range header, is
// a suffix range of length 0, read as http.ServeContent reads it.
func isEmptySuffixRange(spec string) bool {
	start, end, ok := strings.Cut(textproto.TrimString(spec), "-")
	end = textproto.TrimString(end)
	if !ok || textproto.TrimString(start) != "" || strings.HasPrefix(end, "-") {
		return false
	}
	n, err := strconv.ParseInt(end, 10, 64)
	return err == nil && n == 0
}

// quoteFilename escapes backslashes and quotes for a quoted string,
// allocating only for a name that has them: a strings.Replacer built for
// each GET allocated on every download.
func quoteFilename(name string) string {
	if !strings.ContainsAny(name, `\"`) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '\\' || c == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(name[i])
	}
	return b.String()
}

// errorBodyWriter replaces the body of an error status written by the
// standard library with the XML error body, and otherwise passes everything
// through (including ReadFrom, so file bodies can go out with sendfile).
//
// With prefetch, content from elsewhere starts to be read before a 200 or
// 206 goes out, at the offset ServeContent has sought to (the range's
// start): an outage of the object store is then answered by fail, not by
// a success whose body breaks off.
type errorBodyWriter struct {
	http.ResponseWriter
	r           *http.Request
	intercepted bool
	prefetch    storage.Prefetcher
	fail        func(http.ResponseWriter, *http.Request, error)
	// abort is the failed prefetch: the body is not read at all.
	abort error
	// buffers lend the buffer a body not sent by sendfile is copied
	// through.
	buffers *davxml.BufferPool
}

// contentHeaders describe a body that a failed prefetch does not send.
var contentHeaders = []string{"Content-Range", "Accept-Ranges", "Content-Disposition", "Content-Security-Policy", "OC-Checksum", "OC-ETag", "OC-FileId"}

func (e *errorBodyWriter) WriteHeader(status int) {
	if status < http.StatusBadRequest {
		if err := e.startContent(status); err != nil {
			e.intercepted, e.abort = true, err
			for _, name := range contentHeaders {
				e.Header().Del(name)
			}
			e.fail(e.ResponseWriter, e.r, err)
			return
		}
		e.ResponseWriter.WriteHeader(status)
		return
	}
	e.intercepted = true
	e.Header().Del("X-Content-Type-Options")
	writeErrorBody(e.ResponseWriter, e.r, status, http.StatusText(status), "", "")
}

// startContent prefetches the content before a status that promises it.
func (e *errorBodyWriter) startContent(status int) error {
	if e.prefetch == nil || (status != http.StatusOK && status != http.StatusPartialContent) {
		return nil
	}
	return e.prefetch.Prefetch()
}

func (e *errorBodyWriter) Write(p []byte) (int, error) {
	if e.abort != nil {
		return 0, e.abort
	}
	if e.intercepted {
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

func (e *errorBodyWriter) ReadFrom(src io.Reader) (int64, error) {
	if e.abort != nil {
		return 0, e.abort
	}
	if e.intercepted {
		return io.Copy(io.Discard, src)
	}
	// Calling ReadFrom directly, not io.Copy: io.Copy would prefer the
	// file's own WriteTo, which hands the writer a reader that is no
	// longer an *os.File, and sendfile is lost.
	src = fileToEnd(src)
	if rf, ok := e.ResponseWriter.(io.ReaderFrom); ok && isFileBody(src) {
		return rf.ReadFrom(src)
	}
	// Content in memory (a small file kept in the database) or from
	// elsewhere goes through a reused buffer: the connection's ReadFrom
	// would copy it through 32 KiB it allocates for every response
	// (net.genericReadFrom), a GET of 4 KiB's largest allocation.
	buf := e.buffers.Get()
	defer e.buffers.Put(buf)
	return io.CopyBuffer(writerOnly{e.ResponseWriter}, src, buf[:cap(buf)])
}

// isFileBody reports whether src is a file, or a part of one, which the
// connection sends with sendfile.
func isFileBody(src io.Reader) bool {
	if limited, ok := src.(*io.LimitedReader); ok {
		src = limited.R
	}
	_, ok := src.(*os.File)
	return ok
}

// writerOnly hides a writer's ReadFrom from io.CopyBuffer, so that the
// buffer given is used.
type writerOnly struct{ io.Writer }

// fileToEnd returns the file under src when src is a limit that reaches
// the end of that file anyway, and src otherwise. The kernel's sendfile
// sees through one *io.LimitedReader, not two: http.ServeContent limits
// the file to the bytes it sends, and a wrapping ResponseWriter may
// limit it once more (Caddy's write idle timeout sends in chunks), which
// would leave the body to a 32 KiB copy through user space.
func fileToEnd(src io.Reader) io.Reader {
	limited, ok := src.(*io.LimitedReader)
	if !ok {
		return src
	}
	f, ok := limited.R.(*os.File)
	if !ok {
		return src
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return src
	}
	info, err := f.Stat()
	if err != nil || info.Size()-pos > limited.N {
		return src
	}
	return f
}

func (e *errorBodyWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
