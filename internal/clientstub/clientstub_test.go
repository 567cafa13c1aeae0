package clientstub

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

// stubClient sends requests to a stub as one user.
type stubClient struct {
	t    *testing.T
	base string
	user string
}

func newStub(t *testing.T) *stubClient {
	t.Helper()
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	return &stubClient{t: t, base: srv.URL, user: "einstein"}
}

func (c *stubClient) do(method, path, body string, hdr ...string) (*http.Response, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.SetBasicAuth(c.user, "any")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, string(b)
}

func (c *stubClient) want(status int, method, path, body string, hdr ...string) *http.Response {
	c.t.Helper()
	resp, b := c.do(method, path, body, hdr...)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, b)
	}
	return resp
}

func sha1Of(s string) string {
	d := sha1.Sum([]byte(s))
	return hex.EncodeToString(d[:])
}

// TestClientSession plays what the sync clients do on a first sync and a
// sync after changes: discovery, folders, PUT and TUS uploads, a rename
// and a deletion, each answered with what the clients read.
func TestClientSession(t *testing.T) {
	c := newStub(t)
	if _, body := c.do(http.MethodGet, "/status.php", ""); !strings.Contains(body, `"installed":true`) {
		t.Fatalf("status.php: %s", body)
	}
	_, caps := c.do(http.MethodGet, "/ocs/v1.php/cloud/capabilities?format=json", "")
	for _, want := range []string{`"statuscode":100`, `"webdav-root":"remote.php/webdav"`, `creation-with-upload`, `"preferredUploadType":"SHA1"`} {
		if !strings.Contains(caps, want) {
			t.Errorf("capabilities lack %s: %s", want, caps)
		}
	}
	if _, u := c.do(http.MethodGet, "/ocs/v2.php/cloud/user?format=json", ""); !strings.Contains(u, `"id":"einstein"`) || !strings.Contains(u, `"statuscode":200`) {
		t.Errorf("user: %s", u)
	}
	c.want(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "0")

	mk := c.want(http.StatusCreated, "MKCOL", "/remote.php/dav/files/einstein/docs", "")
	if mk.Header.Get("OC-FileId") == "" || mk.Header.Get("ETag") == "" {
		t.Errorf("MKCOL headers: %v", mk.Header)
	}
	c.want(http.StatusMethodNotAllowed, "MKCOL", "/remote.php/webdav/docs", "")
	c.want(http.StatusConflict, "MKCOL", "/remote.php/webdav/none/sub", "")

	put := c.want(http.StatusCreated, http.MethodPut, "/remote.php/dav/files/einstein/docs/a.txt", "hello", "X-OC-Mtime", "1700000000")
	if put.Header.Get("X-OC-Mtime") != "accepted" || put.Header.Get("OC-Perm") != filePerm {
		t.Errorf("PUT headers: %v", put.Header)
	}
	c.want(http.StatusNoContent, http.MethodPut, "/remote.php/webdav/docs/a.txt", "hello!")

	// TUS as the ownCloud client: the whole file in the POST, named by its
	// path below the root it syncs.
	tus := []string{"Tus-Resumable", "1.0.0", "Content-Type", tusContent, "Upload-Length", "3",
		"Upload-Metadata", "filename " + base64.StdEncoding.EncodeToString([]byte("docs/b.txt"))}
	post := c.want(http.StatusCreated, http.MethodPost, "/remote.php/webdav/", "abc", tus...)
	if post.Header.Get("Upload-Offset") != "3" || post.Header.Get("OC-FileId") == "" {
		t.Errorf("TUS POST headers: %v", post.Header)
	}
	// And in parts: POST, PATCH, HEAD.
	tus[5] = "5"
	tus[7] = "filename " + base64.StdEncoding.EncodeToString([]byte("docs/c.txt"))
	loc := c.want(http.StatusCreated, http.MethodPost, "/remote.php/webdav/", "ab", tus...).Header.Get("Location")
	if !strings.HasPrefix(loc, c.base+uploadsPrefix) {
		t.Fatalf("Location %q is not an upload URL of the stub", loc)
	}
	upload := strings.TrimPrefix(loc, c.base)
	if got := c.want(http.StatusOK, http.MethodHead, upload, "").Header.Get("Upload-Offset"); got != "2" {
		t.Errorf("HEAD: Upload-Offset %s, want 2", got)
	}
	c.want(http.StatusConflict, "PATCH", upload, "cde", "Upload-Offset", "0", "Content-Type", tusContent)
	c.want(http.StatusNoContent, "PATCH", upload, "cde", "Upload-Offset", "2", "Content-Type", tusContent)
	c.want(http.StatusNotFound, http.MethodHead, upload, "")

	c.want(http.StatusCreated, "MOVE", "/remote.php/webdav/docs/b.txt", "", "Destination", c.base+"/remote.php/webdav/docs/d.txt")
	c.want(http.StatusNoContent, http.MethodDelete, "/remote.php/webdav/docs/a.txt", "")

	_, listing := c.do("PROPFIND", "/remote.php/dav/files/einstein/docs", "", "Depth", "1")
	for _, want := range []string{
		"<d:href>/remote.php/dav/files/einstein/docs/</d:href>",
		"<d:href>/remote.php/dav/files/einstein/docs/d.txt</d:href>",
		"SHA1:" + sha1Of("abc"), "SHA1:" + sha1Of("abcde"),
	} {
		if !strings.Contains(listing, want) {
			t.Errorf("listing lacks %s:\n%s", want, listing)
		}
	}
	if strings.Contains(listing, "a.txt") || strings.Contains(listing, "b.txt") {
		t.Errorf("listing keeps a deleted or moved file:\n%s", listing)
	}
}

// TestFolderEtagsFollowChanges: a change below a folder changes the etag
// of every folder above it and of no other, so that a client's no-op sync
// stops at the root.
func TestFolderEtagsFollowChanges(t *testing.T) {
	s := New()
	s.mu.Lock()
	root := s.root("u")
	a := s.newNode("a", root, true)
	b := s.newNode("b", root, true)
	s.mu.Unlock()
	before := map[*node]string{root: root.etag, a: a.etag, b: b.etag}
	if f, _, _ := s.commit("u", "a/f", 1, time.Time{}, checksum.Sums{}); f == nil {
		t.Fatal("commit refused")
	}
	if root.etag == before[root] || a.etag == before[a] {
		t.Errorf("etags of the folders above the change stayed")
	}
	if b.etag != before[b] {
		t.Errorf("the etag of a folder beside the change changed")
	}
}

// TestOtherUsers: each user has a tree of their own, and another user's
// Nextcloud path is not found.
func TestOtherUsers(t *testing.T) {
	c := newStub(t)
	c.want(http.StatusCreated, http.MethodPut, "/remote.php/webdav/mine.txt", "x")
	c.want(http.StatusNotFound, "PROPFIND", "/remote.php/dav/files/marie/", "", "Depth", "0")
	other := *c
	other.user = "marie"
	_, listing := other.do("PROPFIND", "/remote.php/webdav/", "", "Depth", "1")
	if strings.Contains(listing, "mine.txt") {
		t.Errorf("marie sees einstein's file:\n%s", listing)
	}
	resp, _ := http.Get(c.base + "/remote.php/webdav/")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no credentials: status %d, want 401", resp.StatusCode)
	}
}

// TestBulkUpload: with WithBulkUpload the capabilities offer bulk upload
// and a multipart body stores each part as its X-File-Path; a part whose
// MD5 does not match is refused alone.
func TestBulkUpload(t *testing.T) {
	srv := httptest.NewServer(New(WithBulkUpload()))
	t.Cleanup(srv.Close)
	c := &stubClient{t: t, base: srv.URL, user: "marie"}
	if _, caps := c.do(http.MethodGet, "/ocs/v1.php/cloud/capabilities?format=json", ""); !strings.Contains(caps, `"bulkupload":"1.0"`) {
		t.Fatalf("capabilities lack bulkupload: %s", caps)
	}
	c.want(http.StatusCreated, "MKCOL", "/remote.php/webdav/NC", "")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range []struct{ path, content, md5 string }{
		{"/NC/good.bin", "good", md5Hex("good")},
		{"/NC/bad.bin", "bad", md5Hex("other")},
	} {
		pw, err := mw.CreatePart(textproto.MIMEHeader{"X-File-Path": {f.path}, "X-File-Mtime": {"1700000000"},
			"X-File-Md5": {f.md5}, "Content-Length": {strconv.Itoa(len(f.content))}})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(pw, f.content)
	}
	mw.Close()
	resp, answer := c.do(http.MethodPost, "/remote.php/dav/bulk", body.String(), "Content-Type", "multipart/related; boundary="+mw.Boundary())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bulk: status %d: %s", resp.StatusCode, answer)
	}
	var results map[string]bulkResult
	if err := json.Unmarshal([]byte(answer), &results); err != nil {
		t.Fatalf("bulk answer %s: %v", answer, err)
	}
	if r := results["/NC/good.bin"]; r.Error || r.ETag == "" || r.FileID == "" || r.Mtime != "accepted" {
		t.Errorf("good part: %+v", r)
	}
	if r := results["/NC/bad.bin"]; !r.Error {
		t.Errorf("part with a wrong MD5: %+v", r)
	}
	_, listing := c.do("PROPFIND", "/remote.php/webdav/NC", "", "Depth", "1")
	if !strings.Contains(listing, "SHA1:"+sha1Of("good")) || strings.Contains(listing, "bad.bin") {
		t.Errorf("listing after bulk:\n%s", listing)
	}
}

func md5Hex(s string) string {
	d := md5.Sum([]byte(s))
	return hex.EncodeToString(d[:])
}
