package davhandler

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// withUploads offers TUS, with the uploads kept by the env's own store.
func withUploads(cfg *Config) {
	cfg.Uploads = cfg.Store.(storage.UploadSessions)
}

// tusMeta encodes Upload-Metadata from key/value pairs.
func tusMeta(kv ...string) string {
	var pairs []string
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(pairs, ",")
}

// tusCreate POSTs an upload of length bytes named name into collection.
func (e *env) tusCreate(user, collection, name string, length int, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	base := []string{"Tus-Resumable", "1.0.0", "Upload-Length", strconv.Itoa(length), "Upload-Metadata", tusMeta("filename", name)}
	return e.do(user, http.MethodPost, collection, "", append(base, hdr...)...)
}

// tusStart creates an upload and returns its URL.
func (e *env) tusStart(user, collection, name string, length int, hdr ...string) string {
	e.t.Helper()
	rec := e.tusCreate(user, collection, name, length, hdr...)
	wantStatus(e.t, rec, http.StatusCreated)
	return uploadPathOf(e.t, rec)
}

// uploadPathOf is the path of the absolute upload URL a POST answered.
func uploadPathOf(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	loc := rec.Header().Get("Location")
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "http" || u.Host != "example.com" {
		t.Fatalf("Location %q is no absolute URL of the server (%v)", loc, err)
	}
	if !strings.HasPrefix(u.Path, "/dav/uploads/") && !strings.HasPrefix(u.Path, "/remote.php/dav/uploads/") {
		t.Fatalf("Location %q is no upload URL", loc)
	}
	return u.Path
}

// tusPatch sends a chunk at offset.
func (e *env) tusPatch(user, loc string, offset int, chunk string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	base := []string{"Tus-Resumable", "1.0.0", "Content-Type", tusContentType, "Upload-Offset", strconv.Itoa(offset)}
	return e.do(user, "PATCH", loc, chunk, append(base, hdr...)...)
}

func wantHeader(t testing.TB, rec *httptest.ResponseRecorder, name, want string) {
	t.Helper()
	if got := rec.Header().Get(name); got != want {
		t.Fatalf("%s: %q, want %q", name, got, want)
	}
}

func wantNoFile(t testing.TB, e *env, path string) {
	t.Helper()
	wantStatus(t, e.do("einstein", http.MethodGet, path, ""), http.StatusNotFound)
}

func wantContent(t testing.TB, e *env, path, content string) {
	t.Helper()
	rec := e.do("einstein", http.MethodGet, path, "")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != content {
		t.Fatalf("GET %s: %q, want %q", path, rec.Body.String(), content)
	}
}

func TestTusOptions(t *testing.T) {
	e := newEnv(t, withUploads)
	setQuota(t, e, 1000)
	paths := []string{"/webdav/", "/remote.php/webdav/", "/dav/files/einstein/", "/remote.php/dav/files/einstein/",
		physicsPath + "/", "/remote.php" + physicsPath, "/dav/uploads/anything", "/remote.php/dav/uploads/x"}
	for _, p := range paths {
		for _, user := range []string{"", "einstein"} {
			rec := e.do(user, http.MethodOptions, p, "")
			wantStatus(t, rec, http.StatusNoContent)
			wantHeader(t, rec, "Tus-Resumable", "1.0.0")
			wantHeader(t, rec, "Tus-Version", "1.0.0")
			wantHeader(t, rec, "Tus-Extension", "creation,creation-with-upload,checksum,expiration,termination")
			wantHeader(t, rec, "Tus-Checksum-Algorithm", "sha1,md5,adler32")
			// The free quota is told to members only.
			wantMax := ""
			if user != "" && strings.Contains(p, "physics") {
				wantMax = "1000"
			}
			wantHeader(t, rec, "Tus-Max-Size", wantMax)
		}
	}
	wantHeader(t, e.do("", http.MethodOptions, "/dav/uploads/x", ""), "Allow", allowedOnUploads)
	if allow := e.do("", http.MethodOptions, "/webdav/", "").Header().Get("Allow"); !strings.Contains(allow, "POST") {
		t.Fatalf("Allow %q lacks POST", allow)
	}
	// A stranger learns nothing about the space.
	wantHeader(t, e.do("marie", http.MethodOptions, e.personalSpacePath("einstein")+"/", ""), "Tus-Max-Size", "")

	plain := newEnv(t)
	for _, name := range []string{"Tus-Resumable", "Tus-Version", "Tus-Extension", "Tus-Checksum-Algorithm"} {
		wantHeader(t, plain.do("", http.MethodOptions, "/webdav/", ""), name, "")
	}
}

func TestTusPropfindHeaders(t *testing.T) {
	e := newEnv(t, withUploads)
	setQuota(t, e, 500)
	wantStatus(t, e.do("einstein", http.MethodPut, physicsPath+"/f.txt", "12345"), http.StatusCreated)
	rec := e.do("einstein", "PROPFIND", physicsPath+"/", "", "Depth", "0")
	wantStatus(t, rec, http.StatusMultiStatus)
	wantHeader(t, rec, "Tus-Resumable", "1.0.0")
	wantHeader(t, rec, "Tus-Extension", tusExtensions)
	wantHeader(t, rec, "Tus-Checksum-Algorithm", tusChecksumAlgorithms)
	wantHeader(t, rec, "Tus-Max-Size", "495")
	file := e.do("einstein", "PROPFIND", physicsPath+"/f.txt", "", "Depth", "0")
	wantHeader(t, file, "Tus-Resumable", "")
	wantHeader(t, newEnv(t).do("einstein", "PROPFIND", "/webdav/", "", "Depth", "0"), "Tus-Resumable", "")
}

// TestTusCreateRefusals: every refused POST answers as a PUT would, with no
// Location and nothing stored.
func TestTusCreateRefusals(t *testing.T) {
	tests := []struct {
		name   string
		user   string
		path   string
		hdr    []string
		status int
	}{
		{"no Tus-Resumable", "einstein", "/webdav/", []string{"Tus-Resumable", ""}, http.StatusPreconditionFailed},
		{"old Tus-Resumable", "einstein", "/webdav/", []string{"Tus-Resumable", "0.2.2"}, http.StatusPreconditionFailed},
		{"no Upload-Length", "einstein", "/webdav/", []string{"Upload-Length", ""}, http.StatusPreconditionFailed},
		{"Upload-Length text", "einstein", "/webdav/", []string{"Upload-Length", "ten"}, http.StatusBadRequest},
		{"Upload-Length negative", "einstein", "/webdav/", []string{"Upload-Length", "-1"}, http.StatusBadRequest},
		{"Upload-Length signed", "einstein", "/webdav/", []string{"Upload-Length", "+5"}, http.StatusBadRequest},
		{"Upload-Length huge", "einstein", "/webdav/", []string{"Upload-Length", "99999999999999999999"}, http.StatusBadRequest},
		{"no filename", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("type", "text/plain")}, http.StatusBadRequest},
		{"filename ..", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "..")}, http.StatusBadRequest},
		{"filename path with ..", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "../new.txt")}, http.StatusBadRequest},
		{"filename path with .. from a folder", "einstein", "/webdav/folder/", []string{"Upload-Metadata", tusMeta("filename", "../new.txt")}, http.StatusBadRequest},
		{"filename path with //", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "folder//new.txt")}, http.StatusBadRequest},
		{"filename path not UTF-8", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "folder/\xff.txt")}, http.StatusBadRequest},
		{"filename path ends in /", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "folder/new.txt/")}, http.StatusBadRequest},
		{"filename path, missing parent", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "/missing/new.txt")}, http.StatusConflict},
		{"filename path through a file", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "file.txt/new.txt")}, http.StatusConflict},
		{"filename path to a folder", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "/folder")}, http.StatusConflict},
		{"filename path, viewer", "richard", physicsPath + "/", []string{"Upload-Metadata", tusMeta("filename", "/folder/new.txt")}, http.StatusForbidden},
		{"filename path, quota", "einstein", physicsPath + "/", []string{"Upload-Length", "11", "Upload-Metadata", tusMeta("filename", "folder/new.txt")}, http.StatusInsufficientStorage},
		{"filename path, non-member", "marie", "/dav/files/einstein/", []string{"Upload-Metadata", tusMeta("filename", "folder/new.txt")}, http.StatusNotFound},
		{"filename with \\", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", `a\b`)}, http.StatusBadRequest},
		{"filename control", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "a\x01")}, http.StatusBadRequest},
		{"filename too long", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", strings.Repeat("a", 256))}, http.StatusBadRequest},
		{"not base64", "einstein", "/webdav/", []string{"Upload-Metadata", "filename !!!"}, http.StatusBadRequest},
		{"key twice", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "a", "filename", "b")}, http.StatusBadRequest},
		{"bad mtime", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "a", "mtime", "yesterday")}, http.StatusBadRequest},
		{"bad checksum", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "a", "checksum", "MD5 xyz")}, http.StatusBadRequest},
		{"bad content type", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "a", "filetype", "text/")}, http.StatusBadRequest},
		{"bad Upload-Checksum", "einstein", "/webdav/", []string{"Content-Type", tusContentType, "Upload-Checksum", "crc32 AAAAAA=="}, http.StatusBadRequest},
		{"target is a folder", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "folder")}, http.StatusConflict},
		{"missing parent", "einstein", "/webdav/missing/", nil, http.StatusConflict},
		{"parent is a file", "einstein", "/webdav/file.txt/", nil, http.StatusConflict},
		{"viewer", "richard", physicsPath + "/", nil, http.StatusForbidden},
		{"non-member", "marie", "/dav/files/einstein/", nil, http.StatusNotFound},
		{"quota", "einstein", physicsPath + "/", []string{"Upload-Length", "11"}, http.StatusInsufficientStorage},
		{"If-Match", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "file.txt"), "If-Match", `"nope"`}, http.StatusPreconditionFailed},
		{"If-None-Match", "einstein", "/webdav/", []string{"Upload-Metadata", tusMeta("filename", "file.txt"), "If-None-Match", "*"}, http.StatusPreconditionFailed},
		{"no user", "", "/webdav/", nil, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withUploads)
			setQuota(t, e, 10)
			wantStatus(t, e.do("einstein", "MKCOL", "/webdav/folder", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "MKCOL", physicsPath+"/folder", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/file.txt", "x"), http.StatusCreated)
			hdr := []string{"Tus-Resumable", "1.0.0", "Upload-Length", "5", "Upload-Metadata", tusMeta("filename", "new.txt")}
			hdr = append(hdr, tt.hdr...)
			rec := e.do(tt.user, http.MethodPost, tt.path, "", hdr...)
			wantStatus(t, rec, tt.status)
			wantHeader(t, rec, "Location", "")
			if tt.user != "" {
				wantHeader(t, rec, "Tus-Resumable", "1.0.0")
			}
			if tt.status == http.StatusPreconditionFailed && strings.Contains(tt.name, "Tus-Resumable") {
				wantHeader(t, rec, "Tus-Version", "1.0.0")
			}
			for _, p := range []string{"/webdav/new.txt", "/webdav/folder/new.txt", physicsPath + "/folder/new.txt"} {
				wantNoFile(t, e, p)
			}
			wantContent(t, e, "/webdav/file.txt", "x")
		})
	}
}

func TestTusCreateLocked(t *testing.T) {
	e := newEnv(t, withUploads, withLocks)
	token := e.lock("einstein", "/webdav/", lockExclusive)
	rec := e.tusCreate("einstein", "/webdav/", "a.txt", 3)
	wantStatus(t, rec, http.StatusLocked)
	wantHeader(t, rec, "Location", "")
	loc := e.tusStart("einstein", "/webdav/", "a.txt", 3, "If", "(<"+token+">)")
	wantStatus(t, e.tusPatch("einstein", loc, 0, "abc", "If", "(<"+token+">)"), http.StatusNoContent)
	wantContent(t, e, "/webdav/a.txt", "abc")

	// ownCloud clients send the token in a Lock-Token header instead.
	loc = e.tusStart("einstein", "/webdav/", "b.txt", 3, "Lock-Token", "<"+token+">")
	wantStatus(t, e.tusPatch("einstein", loc, 0, "abc"), http.StatusLocked)
	// The bytes are kept; an empty PATCH with the token commits them.
	wantStatus(t, e.tusPatch("einstein", loc, 3, "", "Lock-Token", "<"+token+">"), http.StatusNoContent)
	wantContent(t, e, "/webdav/b.txt", "abc")
}

// TestTusCreatePathLocked: a file named by a path is checked against the
// locks of the folders on that path, as a PUT to it would be.
func TestTusCreatePathLocked(t *testing.T) {
	e := newEnv(t, withUploads, withLocks)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a", ""), http.StatusCreated)
	token := e.lock("einstein", "/webdav/a", lockExclusive)
	rec := e.tusCreate("einstein", "/remote.php/dav/files/einstein/", "/a/x.txt", 3)
	wantStatus(t, rec, http.StatusLocked)
	wantHeader(t, rec, "Location", "")
	wantStatus(t, e.tusCreate("einstein", "/webdav/", "/x.txt", 3), http.StatusCreated)
	loc := e.tusStart("einstein", "/webdav/", "/a/x.txt", 3, "If", "(<"+token+">)")
	wantStatus(t, e.tusPatch("einstein", loc, 0, "abc", "If", "(<"+token+">)"), http.StatusNoContent)
	wantContent(t, e, "/webdav/a/x.txt", "abc")
}

// TestTusUpload: an upload in parts through every base path; nothing is
// visible until the last byte, which commits the file as a PUT would.
func TestTusUpload(t *testing.T) {
	e := newEnv(t, withUploads)
	for _, coll := range []string{"/webdav/", "/remote.php/webdav/", "/dav/files/einstein/", "/remote.php/dav/files/einstein",
		e.personalSpacePath("einstein") + "/", "/remote.php" + e.personalSpacePath("einstein")} {
		t.Run(coll, func(t *testing.T) {
			rec := e.tusCreate("einstein", coll, "up.txt", 10)
			wantStatus(t, rec, http.StatusCreated)
			loc := uploadPathOf(t, rec)
			if strings.HasPrefix(coll, "/remote.php/") != strings.HasPrefix(loc, "/remote.php/dav/uploads/") {
				t.Fatalf("Location %q for a POST to %s", loc, coll)
			}
			wantHeader(t, rec, "Upload-Offset", "0")
			wantHeader(t, rec, "Tus-Resumable", "1.0.0")
			expires, err := http.ParseTime(rec.Header().Get("Upload-Expires"))
			if err != nil || expires.Before(time.Now().Add(DefaultUploadTTL-time.Minute)) {
				t.Fatalf("Upload-Expires %q (%v)", rec.Header().Get("Upload-Expires"), err)
			}

			wantStatus(t, e.tusPatch("einstein", loc, 0, "01234"), http.StatusNoContent)
			head := e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0")
			wantStatus(t, head, http.StatusOK)
			wantHeader(t, head, "Upload-Offset", "5")
			wantHeader(t, head, "Upload-Length", "10")
			wantHeader(t, head, "Cache-Control", "no-store")
			wantHeader(t, head, "Tus-Resumable", "1.0.0")
			wantNoFile(t, e, "/webdav/up.txt")

			wantStatus(t, e.tusPatch("einstein", loc, 0, "01234"), http.StatusConflict)
			wantStatus(t, e.tusPatch("einstein", loc, 5, "56789", "Content-Type", "application/octet-stream"), http.StatusUnsupportedMediaType)
			wantStatus(t, e.tusPatch("einstein", loc, 5, "56789", "Upload-Offset", ""), http.StatusBadRequest)
			wantStatus(t, e.tusPatch("einstein", loc, 5, "5678901"), http.StatusRequestEntityTooLarge)

			last := e.tusPatch("einstein", loc, 5, "56789")
			wantStatus(t, last, http.StatusNoContent)
			wantHeader(t, last, "Upload-Offset", "10")
			for _, h := range []string{"OC-ETag", "ETag", "OC-FileId", "Last-Modified"} {
				if last.Header().Get(h) == "" {
					t.Fatalf("final PATCH lacks %s", h)
				}
			}
			wantContent(t, e, "/webdav/up.txt", "0123456789")
			get := e.do("einstein", http.MethodGet, "/webdav/up.txt", "")
			wantHeader(t, get, "ETag", last.Header().Get("ETag"))
			wantStatus(t, e.tusPatch("einstein", loc, 10, ""), http.StatusNotFound)
			wantStatus(t, e.do("einstein", http.MethodDelete, "/webdav/up.txt", ""), http.StatusNoContent)
		})
	}
}

// TestTusChunkChecksum: a chunk that does not match its Upload-Checksum is
// discarded (460) and the offset stays.
func TestTusChunkChecksum(t *testing.T) {
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", "/webdav/", "sum.txt", 10)
	sum := func(s string) string {
		d := md5.Sum([]byte(s))
		return "md5 " + base64.StdEncoding.EncodeToString(d[:])
	}
	rec := e.tusPatch("einstein", loc, 0, "01234", "Upload-Checksum", sum("xxxxx"))
	wantStatus(t, rec, statusChecksumMismatch)
	wantHeader(t, rec, "Tus-Resumable", "1.0.0")
	wantHeader(t, e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), "Upload-Offset", "0")

	for _, bad := range []string{"crc32 AAAAAA==", "md5", "md5 !!!!", "md5 AAAA"} {
		wantStatus(t, e.tusPatch("einstein", loc, 0, "01234", "Upload-Checksum", bad), http.StatusBadRequest)
	}
	wantStatus(t, e.tusPatch("einstein", loc, 0, "01234", "Upload-Checksum", sum("01234")), http.StatusNoContent)
	// Hex, as the ownCloud acceptance tests send it.
	wantStatus(t, e.tusPatch("einstein", loc, 5, "56789", "Upload-Checksum", "MD5 1c6ddcfa6c1a01fa1a2fa4f6d9a2e574"), statusChecksumMismatch)
	wantStatus(t, e.tusPatch("einstein", loc, 5, "56789", "Upload-Checksum", "SHA1 "+"a"+strings.Repeat("0", 39)), statusChecksumMismatch)
	wantStatus(t, e.tusPatch("einstein", loc, 5, "56789", "Upload-Checksum", sum("56789")), http.StatusNoContent)
	wantContent(t, e, "/webdav/sum.txt", "0123456789")
}

// TestTusWholeChecksum: the checksum metadata is the whole file's; a
// mismatch answers 460 and leaves no file.
func TestTusWholeChecksum(t *testing.T) {
	e := newEnv(t, withUploads)
	good := e.tusStart("einstein", "/webdav/", "good.txt", 5, "Upload-Metadata",
		tusMeta("filename", "good.txt", "checksum", "SHA1 8cb2237d0679ca88db6464eac60da96345513964"))
	wantStatus(t, e.tusPatch("einstein", good, 0, "12345"), http.StatusNoContent)
	wantContent(t, e, "/webdav/good.txt", "12345")

	bad := e.tusStart("einstein", "/webdav/", "bad.txt", 5, "Upload-Metadata",
		tusMeta("filename", "bad.txt", "checksum", "MD5:827ccb0eea8a706c4c34a16891f84e7c"))
	wantStatus(t, e.tusPatch("einstein", bad, 0, "12345"), statusChecksumMismatch)
	wantNoFile(t, e, "/webdav/bad.txt")
	wantStatus(t, e.do("einstein", http.MethodHead, bad, "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)
}

func TestTusCreationWithUpload(t *testing.T) {
	e := newEnv(t, withUploads)
	body := []string{"Content-Type", tusContentType}
	// All of it: committed in the POST.
	rec := e.do("einstein", http.MethodPost, "/webdav/", "0123456789abcdef", append([]string{"Tus-Resumable", "1.0.0",
		"Upload-Length", "16", "Upload-Metadata", tusMeta("filename", "all.txt")}, body...)...)
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("Location") == "" || rec.Header().Get("OC-FileId") == "" {
		t.Fatalf("headers %v", rec.Header())
	}
	wantHeader(t, rec, "Upload-Offset", "16")
	wantContent(t, e, "/webdav/all.txt", "0123456789abcdef")

	// Part of it: the rest follows in a PATCH.
	rec = e.do("einstein", http.MethodPost, "/webdav/", "0123", append([]string{"Tus-Resumable", "1.0.0",
		"Upload-Length", "8", "Upload-Metadata", tusMeta("filename", "part.txt")}, body...)...)
	wantStatus(t, rec, http.StatusCreated)
	wantHeader(t, rec, "Upload-Offset", "4")
	wantNoFile(t, e, "/webdav/part.txt")
	wantStatus(t, e.tusPatch("einstein", rec.Header().Get("Location"), 4, "4567"), http.StatusNoContent)
	wantContent(t, e, "/webdav/part.txt", "01234567")

	// A chunk that fails its checksum leaves neither an upload nor a file.
	rec = e.do("einstein", http.MethodPost, "/webdav/", "0123", append([]string{"Tus-Resumable", "1.0.0",
		"Upload-Length", "8", "Upload-Metadata", tusMeta("filename", "fail.txt"), "Upload-Checksum", "md5 AAAAAAAAAAAAAAAAAAAAAA=="}, body...)...)
	wantStatus(t, rec, statusChecksumMismatch)
	wantHeader(t, rec, "Location", "")
	// Too long a body is refused before anything is stored.
	rec = e.do("einstein", http.MethodPost, "/webdav/", "0123", append([]string{"Tus-Resumable", "1.0.0",
		"Upload-Length", "2", "Upload-Metadata", tusMeta("filename", "fail.txt")}, body...)...)
	wantStatus(t, rec, http.StatusRequestEntityTooLarge)
	wantNoFile(t, e, "/webdav/fail.txt")
}

// TestTusCreationWithWholeUpload: a POST that carries all of its upload is
// committed as a PUT would be, and refused as a session's last chunk would
// be: a body failing either checksum, or shorter than it said, is no file
// and leaves no upload behind.
func TestTusCreationWithWholeUpload(t *testing.T) {
	e := newEnv(t, withUploads)
	md5Of := func(s string) string {
		d := md5.Sum([]byte(s))
		return "md5 " + base64.StdEncoding.EncodeToString(d[:])
	}
	rec := e.ocClientPost("/webdav/", "whole.txt", "12345", "5", "Upload-Checksum", md5Of("12345"), "X-OC-Mtime", "1700000000")
	wantStatus(t, rec, http.StatusCreated)
	wantCommittedHeaders(t, e, rec, "/webdav/whole.txt")
	wantHeader(t, rec, "Upload-Offset", "5")
	wantHeader(t, rec, "X-OC-Mtime", "accepted")
	wantContent(t, e, "/webdav/whole.txt", "12345")
	// The upload URL names no live upload, as after any completed upload.
	wantStatus(t, e.do("einstein", http.MethodHead, uploadPathOf(t, rec), "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)

	bad := e.ocClientPost("/webdav/", "bad-chunk.txt", "12345", "5", "Upload-Checksum", md5Of("54321"))
	wantStatus(t, bad, statusChecksumMismatch)
	wantHeader(t, bad, "Location", "")
	wantNoFile(t, e, "/webdav/bad-chunk.txt")

	bad = e.do("einstein", http.MethodPost, "/webdav/", "12345", "Tus-Resumable", "1.0.0", "Upload-Length", "5",
		"Content-Type", tusContentType, "Upload-Metadata", tusMeta("filename", "bad-whole.txt", "checksum", "MD5:827ccb0eea8a706c4c34a16891f84e7c"))
	wantStatus(t, bad, statusChecksumMismatch)
	wantNoFile(t, e, "/webdav/bad-whole.txt")

	// A replaced file keeps its id; the answer is still 201, as TUS has it.
	again := e.ocClientPost("/webdav/", "whole.txt", "abcde", "5")
	wantStatus(t, again, http.StatusCreated)
	wantHeader(t, again, "OC-FileId", rec.Header().Get("OC-FileId"))
	wantContent(t, e, "/webdav/whole.txt", "abcde")
}

func TestTusEmptyFile(t *testing.T) {
	e := newEnv(t, withUploads)
	rec := e.tusCreate("einstein", "/webdav/", "empty.txt", 0)
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("Location") == "" || rec.Header().Get("OC-ETag") == "" {
		t.Fatalf("headers %v", rec.Header())
	}
	wantContent(t, e, "/webdav/empty.txt", "")
	// An existing file is emptied.
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/full.txt", "abc"), http.StatusCreated)
	wantStatus(t, e.tusCreate("einstein", "/webdav/", "full.txt", 0), http.StatusCreated)
	wantContent(t, e, "/webdav/full.txt", "")
}

func TestTusMetadata(t *testing.T) {
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", "/webdav/", "m.txt", 2, "Upload-Metadata",
		tusMeta("filename", "m.txt", "mtime", "1700000000", "filetype", "text/x-special", "relativePath", "ignored"))
	rec := e.tusPatch("einstein", loc, 0, "hi")
	wantStatus(t, rec, http.StatusNoContent)
	wantHeader(t, rec, "X-OC-Mtime", "accepted")
	wantHeader(t, rec, "Last-Modified", time.Unix(1700000000, 0).UTC().Format(http.TimeFormat))
	wantHeader(t, e.do("einstein", http.MethodGet, "/webdav/m.txt", ""), "Content-Type", "text/x-special")
}

// ocClientPost is a POST as the ownCloud desktop client sends it: to the
// root it syncs with, the file named by its path below that root, the
// whole file's checksum in the metadata and all of the bytes in the body.
func (e *env) ocClientPost(root, path, content, length string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	sum := sha1.Sum([]byte(content))
	base := []string{"Tus-Resumable", "1.0.0", "Upload-Length", length, "Content-Type", tusContentType,
		"Upload-Metadata", tusMeta("filename", path, "checksum", "SHA1 "+hex.EncodeToString(sum[:]))}
	return e.do("einstein", http.MethodPost, root, content, append(base, hdr...)...)
}

// wantCommittedHeaders checks that an answer describes the file as a PUT's
// answer would: the ownCloud client reads them instead of a PROPFIND.
func wantCommittedHeaders(t *testing.T, e *env, rec *httptest.ResponseRecorder, path string) {
	t.Helper()
	get := e.do("einstein", http.MethodGet, path, "")
	for _, name := range []string{"ETag", "OC-ETag", "OC-FileId", "Last-Modified"} {
		wantHeader(t, rec, name, get.Header().Get(name))
	}
	wantHeader(t, rec, "OC-Perm", "RDNVWZP")
}

// TestTusFilenamePath: the ownCloud desktop client's uploads, named by a
// path below the folder the POST goes to, land there and are answered as a
// PUT is.
func TestTusFilenamePath(t *testing.T) {
	const mtime = "1700000000"
	mtimeHTTP := time.Unix(1700000000, 0).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		root     string
		filename string
		want     string
	}{
		{"path from the files root", "/remote.php/dav/files/einstein/", "/a/b/new.bin", "/webdav/a/b/new.bin"},
		{"path from webdav", "/remote.php/webdav/", "/a/b/new.bin", "/webdav/a/b/new.bin"},
		{"path without leading slash", "/dav/files/einstein/", "a/b/new.bin", "/webdav/a/b/new.bin"},
		{"path from a folder", "/webdav/a/", "b/new.bin", "/webdav/a/b/new.bin"},
		{"single name", "/webdav/a/b/", "new.bin", "/webdav/a/b/new.bin"},
		{"unicode and spaces", "/webdav/", "/a/b/ü ñ x.bin", "/webdav/a/b/ü ñ x.bin"},
		{"replaces a file", "/webdav/", "/a/b/old.bin", "/webdav/a/b/old.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withUploads)
			wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a/b", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/a/b/old.bin", "old"), http.StatusCreated)
			rec := e.ocClientPost(tt.root, tt.filename, "0123456789", "10", "X-OC-Mtime", mtime)
			wantStatus(t, rec, http.StatusCreated)
			wantHeader(t, rec, "Upload-Offset", "10")
			wantHeader(t, rec, "X-OC-Mtime", "accepted")
			wantHeader(t, rec, "Last-Modified", mtimeHTTP)
			wantContent(t, e, tt.want, "0123456789")
			wantCommittedHeaders(t, e, rec, tt.want)
		})
	}
}

// TestTusPathResumed: an upload the POST did not finish is PATCHed at its
// Location; the PATCH that completes it may bring its own X-OC-Mtime, and
// If-Match given at the POST guards the replaced file until then.
func TestTusPathResumed(t *testing.T) {
	e := newEnv(t, withUploads)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a", ""), http.StatusCreated)
	put := e.do("einstein", http.MethodPut, "/webdav/a/r.bin", "old")
	sum := sha1.Sum([]byte("01234567"))
	meta := tusMeta("filename", "/a/r.bin", "checksum", "SHA1 "+hex.EncodeToString(sum[:]))
	post := e.do("einstein", http.MethodPost, "/remote.php/dav/files/einstein/", "0123", "Tus-Resumable", "1.0.0",
		"Upload-Length", "8", "Content-Type", tusContentType, "Upload-Metadata", meta,
		"If-Match", put.Header().Get("ETag"), "X-OC-Mtime", "1600000000")
	wantStatus(t, post, http.StatusCreated)
	wantHeader(t, post, "Upload-Offset", "4")
	wantHeader(t, post, "X-OC-Mtime", "")
	wantContent(t, e, "/webdav/a/r.bin", "old")

	loc := uploadPathOf(t, post)
	wantStatus(t, e.tusPatch("einstein", loc, 4, "4567", "X-OC-Mtime", "soon"), http.StatusBadRequest)
	wantHeader(t, e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), "Upload-Offset", "4")
	last := e.tusPatch("einstein", loc, 4, "4567", "X-OC-Mtime", "1700000000")
	wantStatus(t, last, http.StatusNoContent)
	wantHeader(t, last, "X-OC-Mtime", "accepted")
	wantHeader(t, last, "Last-Modified", time.Unix(1700000000, 0).UTC().Format(http.TimeFormat))
	wantContent(t, e, "/webdav/a/r.bin", "01234567")
	wantCommittedHeaders(t, e, last, "/webdav/a/r.bin")
}

// TestTusMtimeSources: the modification time comes from X-OC-Mtime as for
// a PUT, else from the metadata, else it is the commit time.
func TestTusMtimeSources(t *testing.T) {
	tests := []struct {
		name     string
		meta     string
		header   string
		want     int64
		accepted bool
		status   int
	}{
		{name: "header", header: "1600000000", want: 1600000000, accepted: true, status: http.StatusCreated},
		{name: "metadata", meta: "1500000000", want: 1500000000, accepted: true, status: http.StatusCreated},
		{name: "header wins", meta: "1500000000", header: "1600000000", want: 1600000000, accepted: true, status: http.StatusCreated},
		{name: "none", status: http.StatusCreated},
		{name: "bad header", header: "1e9", status: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withUploads)
			kv := []string{"filename", "m.txt"}
			if tt.meta != "" {
				kv = append(kv, "mtime", tt.meta)
			}
			hdr := []string{"Upload-Metadata", tusMeta(kv...), "Content-Type", tusContentType}
			if tt.header != "" {
				hdr = append(hdr, "X-OC-Mtime", tt.header)
			}
			rec := e.do("einstein", http.MethodPost, "/webdav/", "ab", append([]string{"Tus-Resumable", "1.0.0", "Upload-Length", "2"}, hdr...)...)
			wantStatus(t, rec, tt.status)
			if tt.status != http.StatusCreated {
				wantNoFile(t, e, "/webdav/m.txt")
				return
			}
			accepted := ""
			if tt.accepted {
				accepted = "accepted"
			}
			wantHeader(t, rec, "X-OC-Mtime", accepted)
			if tt.want != 0 {
				wantHeader(t, e.do("einstein", http.MethodGet, "/webdav/m.txt", ""), "Last-Modified",
					time.Unix(tt.want, 0).UTC().Format(http.TimeFormat))
			}
		})
	}
}

// TestTusOtherUser: another user's upload, an unknown one and an ended one
// answer alike.
func TestTusOtherUser(t *testing.T) {
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", physicsPath+"/", "mine.txt", 4)
	unknown := loc[:strings.LastIndex(loc, "/")+1] + "nosuchupload"
	hdr := []string{"Tus-Resumable", "1.0.0", "Content-Type", tusContentType, "Upload-Offset", "0"}
	for _, method := range []string{http.MethodHead, "PATCH", http.MethodDelete} {
		foreign := e.do("marie", method, loc, "ab", hdr...)
		absent := e.do("marie", method, unknown, "ab", hdr...)
		wantStatus(t, foreign, http.StatusNotFound)
		wantStatus(t, absent, http.StatusNotFound)
		if foreign.Body.String() != absent.Body.String() {
			t.Fatalf("%s: bodies differ:\n%s\n%s", method, foreign.Body.String(), absent.Body.String())
		}
	}
	wantStatus(t, e.do("", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), http.StatusUnauthorized)
	wantHeader(t, e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), "Upload-Offset", "0")
}

func TestTusTermination(t *testing.T) {
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", "/webdav/", "gone.txt", 4)
	wantStatus(t, e.tusPatch("einstein", loc, 0, "ab"), http.StatusNoContent)
	rec := e.do("einstein", http.MethodDelete, loc, "", "Tus-Resumable", "1.0.0")
	wantStatus(t, rec, http.StatusNoContent)
	wantHeader(t, rec, "Tus-Resumable", "1.0.0")
	wantStatus(t, e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)
	wantStatus(t, e.tusPatch("einstein", loc, 2, "cd"), http.StatusNotFound)
	wantNoFile(t, e, "/webdav/gone.txt")
}

func TestTusUploadURLMethods(t *testing.T) {
	e := newEnv(t, withUploads, withLocks)
	loc := e.tusStart("einstein", "/webdav/", "m.txt", 4)
	rec := e.do("einstein", http.MethodGet, loc, "", "Tus-Resumable", "1.0.0")
	wantStatus(t, rec, http.StatusMethodNotAllowed)
	wantHeader(t, rec, "Allow", allowedOnUploads)
	wantStatus(t, e.do("einstein", http.MethodHead, loc, ""), http.StatusPreconditionFailed)
	wantStatus(t, e.do("einstein", http.MethodHead, loc+"/below", "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)
	// X-HTTP-Method-Override, for clients behind proxies that only pass POST.
	rec = e.do("einstein", http.MethodPost, loc, "abcd", "X-HTTP-Method-Override", "PATCH", "Tus-Resumable", "1.0.0",
		"Content-Type", tusContentType, "Upload-Offset", "0")
	wantStatus(t, rec, http.StatusNoContent)
	wantContent(t, e, "/webdav/m.txt", "abcd")
	// Without TUS there are no upload URLs and POST is not implemented.
	plain := newEnv(t)
	wantStatus(t, plain.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)
	wantStatus(t, plain.tusCreate("einstein", "/webdav/", "x", 1), http.StatusNotImplemented)
}

// TestTusCompletionChecks: the last byte commits only if a PUT could at
// that moment: locks, If-Match given at creation, permissions.
func TestTusCompletionChecks(t *testing.T) {
	t.Run("locked meanwhile", func(t *testing.T) {
		e := newEnv(t, withUploads, withLocks)
		loc := e.tusStart("einstein", physicsPath+"/", "l.txt", 2)
		token := e.lock("marie", physicsPath+"/l.txt", lockExclusive)
		rec := e.tusPatch("einstein", loc, 0, "ab")
		wantStatus(t, rec, http.StatusLocked)
		wantHeader(t, rec, "OC-ETag", "")
		e.do("marie", "UNLOCK", physicsPath+"/l.txt", "", "Lock-Token", "<"+token+">")
		// An empty PATCH at the end tries the commit again.
		wantStatus(t, e.tusPatch("einstein", loc, 2, ""), http.StatusNoContent)
		wantContent(t, e, physicsPath+"/l.txt", "ab")
	})
	t.Run("changed meanwhile", func(t *testing.T) {
		e := newEnv(t, withUploads)
		put := e.do("einstein", http.MethodPut, "/webdav/c.txt", "v1")
		loc := e.tusStart("einstein", "/webdav/", "c.txt", 2, "If-Match", put.Header().Get("ETag"))
		wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/c.txt", "v2"), http.StatusNoContent)
		wantStatus(t, e.tusPatch("einstein", loc, 0, "v3"), http.StatusPreconditionFailed)
		wantContent(t, e, "/webdav/c.txt", "v2")
	})
	t.Run("folder gone", func(t *testing.T) {
		e := newEnv(t, withUploads)
		wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
		loc := e.tusStart("einstein", "/webdav/d/", "f.txt", 2)
		wantStatus(t, e.do("einstein", http.MethodDelete, "/webdav/d", ""), http.StatusNoContent)
		wantStatus(t, e.tusPatch("einstein", loc, 0, "ab"), http.StatusConflict)
	})
	t.Run("demoted to viewer", func(t *testing.T) {
		e := newEnv(t, withUploads)
		loc := e.tusStart("marie", physicsPath+"/", "v.txt", 2)
		space := e.physics
		space.Members = map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleViewer}
		if _, err := e.store.PutSpace(t.Context(), space); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, e.tusPatch("marie", loc, 0, "ab"), http.StatusForbidden)
		wantNoFile(t, e, physicsPath+"/v.txt")
	})
}

// TestTusHeadCommitsReceivedUpload: an upload whose bytes all arrived but
// whose commit never happened (the server stopped in between) is committed
// when the resuming client asks HEAD, which it then takes for done.
func TestTusHeadCommitsReceivedUpload(t *testing.T) {
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", "/webdav/", "crash.txt", 2)
	id := loc[strings.LastIndex(loc, "/")+1:]
	if _, err := e.store.AppendSession(t.Context(), id, 0, strings.NewReader("ab"), nil); err != nil {
		t.Fatal(err)
	}
	wantNoFile(t, e, "/webdav/crash.txt")
	head := e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0")
	wantStatus(t, head, http.StatusOK)
	wantHeader(t, head, "Upload-Offset", "2")
	wantHeader(t, head, "Upload-Length", "2")
	wantContent(t, e, "/webdav/crash.txt", "ab")
	wantStatus(t, e.do("einstein", http.MethodHead, loc, "", "Tus-Resumable", "1.0.0"), http.StatusNotFound)
}

// TestTusPatchStreams: a large PATCH is streamed into the store, never held.
func TestTusPatchStreams(t *testing.T) {
	const size = 64 << 20
	e := newEnv(t, withUploads)
	loc := e.tusStart("einstein", "/webdav/", "big.bin", size)
	req := httptest.NewRequest("PATCH", loc, io.LimitReader(zeros{}, size))
	req.SetBasicAuth("einstein", "x")
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Content-Type", tusContentType)
	req.Header.Set("Upload-Offset", "0")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	wantStatus(t, rec, http.StatusNoContent)
	grown := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte PATCH allocated %d bytes", size, grown)
	if grown > size/4 {
		t.Fatalf("a %d-byte PATCH allocated %d bytes", size, grown)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestParseUploadChecksum(t *testing.T) {
	tests := []struct {
		in      string
		alg     string
		digest  string
		invalid bool
	}{
		{in: ""},
		{in: "md5 gnzLDuqKcGxMNKFokfhOew==", alg: "MD5", digest: "827ccb0eea8a706c4c34a16891f84e7b"},
		{in: "sha1 jLIjfQZ5yojbZGTqxg2pY0VROWQ=", alg: "SHA1", digest: "8cb2237d0679ca88db6464eac60da96345513964"},
		{in: "adler32 AvgBAA==", alg: "ADLER32", digest: "02f80100"},
		{in: "MD5 827ccb0eea8a706c4c34a16891f84e7b", alg: "MD5", digest: "827ccb0eea8a706c4c34a16891f84e7b"},
		{in: "adler32 02f80100", alg: "ADLER32", digest: "02f80100"},
		{in: "crc32 AvgBAA==", invalid: true},
		{in: "md5", invalid: true},
		{in: "md5 ", invalid: true},
		{in: "md5 AvgBAA==", invalid: true},
		{in: "md5:gnzLDuqKcGxMNKFokfhOew==", invalid: true},
	}
	for _, tt := range tests {
		e, err := parseUploadChecksum(tt.in)
		if tt.invalid {
			wantClientError(t, err)
			if err == nil {
				t.Fatalf("%q: accepted", tt.in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if tt.alg == "" {
			if e != nil {
				t.Fatalf("%q: %v, want none", tt.in, e)
			}
			continue
		}
		if e == nil || string(e.Algorithm) != tt.alg || e.Digest != tt.digest {
			t.Fatalf("%q: %+v, want %s %s", tt.in, e, tt.alg, tt.digest)
		}
	}
}

func TestParseTusMetadata(t *testing.T) {
	tests := []struct {
		in      string
		path    []string
		ctype   string
		invalid bool
	}{
		{in: tusMeta("filename", "a.txt"), path: []string{"a.txt"}},
		{in: " filename YS50eHQ= , flag ,", path: []string{"a.txt"}},
		{in: "filename YS50eHQ", path: []string{"a.txt"}},
		{in: tusMeta("filename", "a", "type", "image/png"), path: []string{"a"}, ctype: "image/png"},
		{in: tusMeta("filename", "a", "type", "application/octet-stream"), path: []string{"a"}},
		{in: tusMeta("filename", "a", "content-type", "text/plain", "type", "image/png"), path: []string{"a"}, ctype: "text/plain"},
		// The ownCloud desktop client's path below the root it syncs.
		{in: tusMeta("filename", "/a/b/big.bin", "checksum", "SHA1 8cb2237d0679ca88db6464eac60da96345513964"), path: []string{"a", "b", "big.bin"}},
		{in: tusMeta("filename", "/top.txt"), path: []string{"top.txt"}},
		{in: tusMeta("filename", "a b/ü ñ.txt"), path: []string{"a b", "ü ñ.txt"}},
		{in: "", invalid: true},
		{in: "filename", invalid: true},
		{in: "file\x01name YQ==", invalid: true},
		{in: "filename YQ==,filename Yg==", invalid: true},
		{in: "filename Y", invalid: true},
	}
	for _, tt := range tests {
		m, err := parseTusMetadata(tt.in)
		if tt.invalid {
			if err == nil {
				t.Fatalf("%q: accepted", tt.in)
			}
			wantClientError(t, err)
			continue
		}
		if err != nil || !slices.Equal(m.segments, tt.path) || m.contentType != tt.ctype {
			t.Fatalf("%q: %+v, %v; want path %q type %q", tt.in, m, err, tt.path, tt.ctype)
		}
	}
}

// TestTusMetadataPathRefusals: a filename path is validated segment by
// segment as a request path is, and nothing else is accepted.
func TestTusMetadataPathRefusals(t *testing.T) {
	for _, filename := range []string{
		"/", "//", "a/", "/a/", "a//b", "//a", "../x", "a/../b", "a/./b", "./a", "a/..",
		"a\\b/c", "a/b\x00", "a/\x7f", "a/\xff", "\xed\xa0\x80/b", "a/" + strings.Repeat("x", 256),
	} {
		_, err := parseTusMetadata(tusMeta("filename", filename))
		if err == nil {
			t.Fatalf("filename %q accepted", filename)
		}
		wantClientError(t, err)
		if status := storageError(err).status; status != http.StatusBadRequest {
			t.Fatalf("filename %q: status %d, want 400", filename, status)
		}
	}
}
