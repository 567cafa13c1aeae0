package clientstub

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

const (
	webdavPrefix  = "/remote.php/webdav/"
	filesPrefix   = "/remote.php/dav/files/"
	uploadsPrefix = "/remote.php/dav/uploads/"
	tusVersion    = "1.0.0"
	tusContent    = "application/offset+octet-stream"
	// filePerm and folderPerm are what davspaces grants an owner.
	filePerm   = "RDNVWZP"
	folderPerm = "RDNVCKZP"
)

// davPath is a request path split into the user's tree and the prefix
// hrefs are written under.
type davPath struct {
	user, prefix, path string
}

// splitDAV maps a WebDAV URL path to the user's tree: the ownCloud form
// /remote.php/webdav/… of the signed-in user, or the Nextcloud form
// /remote.php/dav/files/{user}/…, whose user must be the signed-in one.
func splitDAV(user, p string) (davPath, bool) {
	if p+"/" == webdavPrefix || strings.HasPrefix(p, webdavPrefix) {
		return davPath{user: user, prefix: webdavPrefix, path: strings.TrimPrefix(p, strings.TrimSuffix(webdavPrefix, "/"))}, true
	}
	rest, ok := strings.CutPrefix(p, filesPrefix)
	if !ok {
		return davPath{}, false
	}
	owner, sub, _ := strings.Cut(rest, "/")
	if owner != user {
		return davPath{}, false
	}
	return davPath{user: user, prefix: filesPrefix + url.PathEscape(owner) + "/", path: sub}, true
}

func (s *Server) serveDAV(w http.ResponseWriter, r *http.Request) {
	u := user(w, r)
	if u == "" {
		return
	}
	defer io.Copy(io.Discard, r.Body) // a refused request's body, so the connection stays usable
	if r.URL.Path == bulkPath && r.Method == http.MethodPost && s.bulk {
		s.bulkUpload(w, r, u)
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, uploadsPrefix); ok {
		s.serveUpload(w, r, u, id)
		return
	}
	dp, ok := splitDAV(u, r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case "PROPFIND":
		s.propfind(w, r, dp)
	case "MKCOL":
		s.mkcol(w, dp)
	case http.MethodPut:
		s.put(w, r, dp)
	case http.MethodPost:
		s.tusCreate(w, r, dp)
	case http.MethodDelete:
		s.delete(w, dp)
	case "MOVE":
		s.move(w, r, dp)
	case http.MethodHead, http.MethodGet:
		s.get(w, r, dp)
	case http.MethodOptions:
		w.Header().Set("DAV", "1, 2")
		w.Header().Set("Tus-Resumable", tusVersion)
		w.Header().Set("Tus-Version", tusVersion)
		w.Header().Set("Tus-Extension", "creation,creation-with-upload,checksum,expiration,termination")
	default:
		http.Error(w, r.Method+" is not served by the stub", http.StatusMethodNotAllowed)
	}
}

// setNodeHeaders writes what a PUT's or MKCOL's answer tells a sync client
// about the node, so that it needs no PROPFIND.
func setNodeHeaders(h http.Header, n *node) {
	etag := `"` + n.etag + `"`
	h.Set("ETag", etag)
	h.Set("OC-ETag", etag)
	h.Set("OC-FileId", n.id)
	h.Set("Last-Modified", n.modTime.UTC().Format(http.TimeFormat))
	if n.isDir() {
		h.Set("OC-Perm", folderPerm)
	} else {
		h.Set("OC-Perm", filePerm)
	}
}

func (s *Server) mkcol(w http.ResponseWriter, dp davPath) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, name := s.parentOf(dp.user, dp.path)
	switch {
	case dir == nil:
		http.Error(w, "the parent folder does not exist", http.StatusConflict)
	case dir.children[name] != nil:
		http.Error(w, "the name is taken", http.StatusMethodNotAllowed)
	default:
		setNodeHeaders(w.Header(), s.newNode(name, dir, true))
		w.WriteHeader(http.StatusCreated)
	}
}

// put hashes the body and records the file: 201 when new, 204 when
// replaced, 409 when its folder is missing.
func (s *Server) put(w http.ResponseWriter, r *http.Request, dp davPath) {
	mtime, err := parseMtime(r.Header.Get("X-OC-Mtime"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum := checksum.NewWriter()
	n, err := io.Copy(sum, r.Body)
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	f, created, status := s.commit(dp.user, dp.path, n, mtime, sum.Sums())
	if f == nil {
		http.Error(w, "cannot write there", status)
		return
	}
	writeCommitted(w, f, mtime, status, created)
}

// writeCommitted answers a stored file: created, or the status given
// for a replaced file (a TUS POST is 201 either way).
func writeCommitted(w http.ResponseWriter, f *node, mtime time.Time, status int, created bool) {
	setNodeHeaders(w.Header(), f)
	if !mtime.IsZero() {
		w.Header().Set("X-OC-Mtime", "accepted")
	}
	if created {
		status = http.StatusCreated
	}
	w.WriteHeader(status)
}

// commit records a file of size bytes at p. It returns the file and
// whether it is new, or nil and the status of the refusal.
func (s *Server) commit(user, p string, size int64, mtime time.Time, sums checksum.Sums) (*node, bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, name := s.parentOf(user, p)
	if dir == nil {
		return nil, false, http.StatusConflict
	}
	f, created := dir.children[name], false
	switch {
	case f == nil:
		f, created = s.newNode(name, dir, false), true
	case f.isDir():
		return nil, false, http.StatusMethodNotAllowed
	default:
		s.touch(f)
	}
	f.size, f.sums = size, sums
	f.modTime = s.now()
	if !mtime.IsZero() {
		f.modTime = mtime
	}
	return f, created, http.StatusNoContent
}

func (s *Server) delete(w http.ResponseWriter, dp davPath) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookup(dp.user, dp.path)
	if n == nil || n.parent == nil {
		http.NotFound(w, nil)
		return
	}
	delete(n.parent.children, n.name)
	s.touch(n.parent)
	w.WriteHeader(http.StatusNoContent)
}

// move renames a node within the user's tree; Overwrite: F keeps an
// existing destination.
func (s *Server) move(w http.ResponseWriter, r *http.Request, dp davPath) {
	dest, err := url.Parse(r.Header.Get("Destination"))
	if err != nil {
		http.Error(w, "bad Destination", http.StatusBadRequest)
		return
	}
	to, ok := splitDAV(dp.user, dest.Path)
	if !ok || to.prefix != dp.prefix {
		http.Error(w, "the Destination is not in the same tree", http.StatusBadGateway)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookup(dp.user, dp.path)
	dir, name := s.parentOf(to.user, to.path)
	switch {
	case n == nil || n.parent == nil:
		http.NotFound(w, r)
		return
	case dir == nil:
		http.Error(w, "the Destination's folder does not exist", http.StatusConflict)
		return
	}
	status := http.StatusCreated
	if old := dir.children[name]; old != nil {
		if r.Header.Get("Overwrite") == "F" {
			http.Error(w, "the Destination exists", http.StatusPreconditionFailed)
			return
		}
		status = http.StatusNoContent
	}
	delete(n.parent.children, n.name)
	s.touch(n.parent)
	n.name, n.parent = name, dir
	dir.children[name] = n
	s.touch(n)
	setNodeHeaders(w.Header(), n)
	w.WriteHeader(status)
}

// get answers HEAD of anything and GET of a folder; the content of a file
// is not kept.
func (s *Server) get(w http.ResponseWriter, r *http.Request, dp davPath) {
	s.mu.Lock()
	n := s.lookup(dp.user, dp.path)
	if n != nil {
		setNodeHeaders(w.Header(), n)
	}
	s.mu.Unlock()
	switch {
	case n == nil:
		http.NotFound(w, r)
	case r.Method == http.MethodGet && !n.isDir():
		http.Error(w, "the stub keeps no content", http.StatusNotImplemented)
	default:
		w.Header().Set("Content-Length", strconv.FormatInt(n.size, 10))
	}
}

// parseMtime reads X-OC-Mtime (Unix seconds, maybe with a fraction).
func parseMtime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return time.Time{}, fmt.Errorf("bad mtime %q", v)
	}
	return time.Unix(int64(f), 0), nil
}

// metadataFilename is the filename of a TUS Upload-Metadata header.
func metadataFilename(header string) string {
	for pair := range strings.SplitSeq(header, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(pair), " ")
		if key == "filename" {
			name, _ := base64.StdEncoding.DecodeString(value)
			return string(name)
		}
	}
	return ""
}
