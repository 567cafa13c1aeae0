package clientstub

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/checksum"
)

// bulkPath is Nextcloud's bulk upload endpoint.
const bulkPath = "/remote.php/dav/bulk"

// bulkResult is the answer for one file of a bulk upload, keyed by its
// X-File-Path: what the Nextcloud client reads instead of a PUT's headers.
type bulkResult struct {
	Error   bool   `json:"error"`
	Message string `json:"message,omitempty"`
	ETag    string `json:"etag,omitempty"`
	FileID  string `json:"OC-FileID,omitempty"`
	Mtime   string `json:"X-OC-MTime,omitempty"`
	Perm    string `json:"permissions,omitempty"`
}

// bulkUpload stores every part of a multipart/related body as the file its
// X-File-Path names in the user's tree; a part that cannot be stored is an
// error of its own and fails no other.
func (s *Server) bulkUpload(w http.ResponseWriter, r *http.Request, user string) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		http.Error(w, "a multipart body is needed", http.StatusBadRequest)
		return
	}
	results := map[string]bulkResult{}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, "reading the multipart body: "+err.Error(), http.StatusBadRequest)
			return
		}
		name := part.Header.Get("X-File-Path")
		results[name] = s.bulkFile(user, name, part)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(results)
}

// bulkFile stores one part.
func (s *Server) bulkFile(user, name string, part *multipart.Part) bulkResult {
	mtime, err := parseMtime(part.Header.Get("X-File-Mtime"))
	if err != nil || name == "" {
		return bulkResult{Error: true, Message: "X-File-Path and a valid X-File-Mtime are needed"}
	}
	sum := checksum.NewWriter()
	n, err := io.Copy(sum, part)
	if err != nil {
		return bulkResult{Error: true, Message: err.Error()}
	}
	if v := part.Header.Get("X-File-MD5"); v != "" {
		// The Nextcloud client sends the bare hex digest.
		if !strings.Contains(v, ":") {
			v = "MD5:" + v
		}
		expected, err := checksum.ParseOCChecksum(v)
		if err != nil || !expected.Matches(sum.Sums()) {
			return bulkResult{Error: true, Message: "X-File-MD5 does not match the content"}
		}
	}
	f, _, _ := s.commit(user, name, n, mtime, sum.Sums())
	if f == nil {
		return bulkResult{Error: true, Message: "cannot write there"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := bulkResult{ETag: `"` + f.etag + `"`, FileID: f.id, Perm: filePerm}
	if !mtime.IsZero() {
		res.Mtime = "accepted"
	}
	return res
}
