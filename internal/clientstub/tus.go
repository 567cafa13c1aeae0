package clientstub

import (
	"io"
	"net/http"
	"path"
	"strconv"

	"github.com/davspaces/davspaces/checksum"
)

// tusCreate starts a TUS upload of the file its filename names below the
// collection, taking the bytes the POST carries; a POST with all of them
// commits the file at once, as davspaces does.
func (s *Server) tusCreate(w http.ResponseWriter, r *http.Request, dp davPath) {
	w.Header().Set("Tus-Resumable", tusVersion)
	length, err := strconv.ParseInt(r.Header.Get("Upload-Length"), 10, 64)
	name := metadataFilename(r.Header.Get("Upload-Metadata"))
	if err != nil || length < 0 || name == "" {
		http.Error(w, "Upload-Length and a filename are needed", http.StatusBadRequest)
		return
	}
	mtime, err := parseMtime(r.Header.Get("X-OC-Mtime"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	up := &upload{user: dp.user, target: path.Join(dp.path, name), length: length, mtime: mtime, sum: checksum.NewWriter()}
	s.mu.Lock()
	s.nextID++
	id := "u" + strconv.FormatInt(s.nextID, 10)
	s.mu.Unlock()
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	w.Header().Set("Location", scheme+r.Host+uploadsPrefix+id)
	if r.Header.Get("Content-Type") == tusContent && !s.appendBody(w, r, up) {
		return
	}
	if up.offset < up.length {
		s.mu.Lock()
		s.uploads[id] = up
		s.mu.Unlock()
		w.Header().Set("Upload-Offset", strconv.FormatInt(up.offset, 10))
		w.WriteHeader(http.StatusCreated)
		return
	}
	s.completeUpload(w, up, http.StatusCreated)
}

// appendBody hashes the request body into up; false after answering a
// body longer than the upload or one that could not be read.
func (s *Server) appendBody(w http.ResponseWriter, r *http.Request, up *upload) bool {
	n, err := io.Copy(up.sum, io.LimitReader(r.Body, up.length-up.offset+1))
	up.offset += n
	switch {
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return false
	case up.offset > up.length:
		http.Error(w, "the body ends past Upload-Length", http.StatusRequestEntityTooLarge)
		return false
	}
	return true
}

// completeUpload commits a finished upload and answers as a PUT, with
// status for a replaced file.
func (s *Server) completeUpload(w http.ResponseWriter, up *upload, status int) {
	f, created, refusal := s.commit(up.user, up.target, up.length, up.mtime, up.sum.Sums())
	if f == nil {
		http.Error(w, "cannot write there", refusal)
		return
	}
	w.Header().Set("Upload-Offset", strconv.FormatInt(up.offset, 10))
	writeCommitted(w, f, up.mtime, status, created && status == http.StatusCreated)
}

// serveUpload answers HEAD, PATCH and DELETE at an upload URL.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, user, id string) {
	w.Header().Set("Tus-Resumable", tusVersion)
	s.mu.Lock()
	up := s.uploads[id]
	if up != nil && up.user != user {
		up = nil
	}
	if up != nil && r.Method != http.MethodHead {
		delete(s.uploads, id) // a PATCH owns it until it puts it back
	}
	s.mu.Unlock()
	if up == nil {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodHead:
		w.Header().Set("Upload-Offset", strconv.FormatInt(up.offset, 10))
		w.Header().Set("Upload-Length", strconv.FormatInt(up.length, 10))
		w.Header().Set("Cache-Control", "no-store")
	case "PATCH":
		s.patch(w, r, id, up)
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		s.putBack(id, up)
		http.Error(w, r.Method+" is not allowed on an upload", http.StatusMethodNotAllowed)
	}
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, id string, up *upload) {
	if r.Header.Get("Upload-Offset") != strconv.FormatInt(up.offset, 10) {
		s.putBack(id, up)
		http.Error(w, "Upload-Offset does not match", http.StatusConflict)
		return
	}
	if !s.appendBody(w, r, up) {
		return // the upload is dropped: its hash state is past what was received
	}
	if mtime, err := parseMtime(r.Header.Get("X-OC-Mtime")); err == nil && !mtime.IsZero() {
		up.mtime = mtime
	}
	if up.offset < up.length {
		s.putBack(id, up)
		w.Header().Set("Upload-Offset", strconv.FormatInt(up.offset, 10))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.completeUpload(w, up, http.StatusNoContent)
}

func (s *Server) putBack(id string, up *upload) {
	s.mu.Lock()
	s.uploads[id] = up
	s.mu.Unlock()
}
