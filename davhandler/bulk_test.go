package davhandler

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

const (
	bulkPath          = "/remote.php/dav/bulk"
	bulkBoundaryValue = "boundary_.oOo._bulktest"
	// bulkContentType is what Nextcloud's client (Qt's QHttpMultiPart)
	// sends: the boundary quoted.
	bulkContentType = `multipart/related; boundary="` + bulkBoundaryValue + `"`
)

// bulkPart is one part of a test's bulk upload: the headers Nextcloud's
// client sends for body at path, changed by set (name/value pairs; an
// empty value drops the header).
type testBulkPart struct {
	path, body string
	set        []string
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// bulkBody writes parts as Qt's QHttpMultiPart does, closing boundary
// included.
func bulkBody(parts ...testBulkPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(bulkPartText(p))
	}
	b.WriteString("--" + bulkBoundaryValue + "--\r\n")
	return b.String()
}

func bulkPartText(p testBulkPart) string {
	hdr := [][2]string{
		{"Content-Type", "application/octet-stream"},
		{"X-File-Mtime", "1700000000"},
		{"Content-Length", strconv.Itoa(len(p.body))},
		{"X-File-MD5", md5Hex(p.body)},
		{"X-File-Path", p.path},
	}
	for i := 0; i+1 < len(p.set); i += 2 {
		hdr = setPair(hdr, p.set[i], p.set[i+1])
	}
	var b strings.Builder
	b.WriteString("--" + bulkBoundaryValue + "\r\n")
	for _, kv := range hdr {
		if kv[1] != "" {
			b.WriteString(kv[0] + ": " + kv[1] + "\r\n")
		}
	}
	b.WriteString("\r\n" + p.body + "\r\n")
	return b.String()
}

func setPair(hdr [][2]string, name, value string) [][2]string {
	for i := range hdr {
		if strings.EqualFold(hdr[i][0], name) {
			hdr[i][1] = value
			return hdr
		}
	}
	return append(hdr, [2]string{name, value})
}

// withBulkUpload serves the bulk upload.
func withBulkUpload(cfg *Config) { cfg.BulkUpload = true }

// postBulk sends a bulk upload as user.
func (e *env) postBulk(user, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.do(user, http.MethodPost, bulkPath, body, append([]string{"Content-Type", bulkContentType}, hdr...)...)
}

// bulkAnswers decodes a 200 answer.
func bulkAnswers(t *testing.T, rec *httptest.ResponseRecorder) map[string]bulkAnswer {
	t.Helper()
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want JSON", ct)
	}
	var answers map[string]bulkAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil {
		t.Fatalf("answer is no JSON object: %v\n%s", err, rec.Body.String())
	}
	return answers
}

// wantContent checks that path holds exactly body.
func (e *env) wantContent(user, path, body string) {
	e.t.Helper()
	rec := e.do(user, http.MethodGet, path, "")
	if rec.Code != http.StatusOK || rec.Body.String() != body {
		e.t.Fatalf("GET %s: %d %q, want 200 %q", path, rec.Code, rec.Body.String(), body)
	}
}

func TestBulkUploadCommitsEveryFile(t *testing.T) {
	e := newEnv(t, withBulkUpload)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/NC", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/NC/old.txt", "old"), http.StatusCreated)
	parts := []testBulkPart{
		{path: "/NC/a.txt", body: "alpha"},
		{path: "/NC/old.txt", body: "replaced"},
		{path: "top.txt", body: ""},
		{path: "/NC/sum.txt", body: "with sha1", set: []string{"OC-Checksum", "SHA1:" + sha1Hex("with sha1")}},
		{path: "/NC/only-oc.txt", body: "oc", set: []string{"X-File-MD5", "", "OC-Checksum", "MD5:" + md5Hex("oc")}},
		{path: "/NC/prefixed.txt", body: "p", set: []string{"X-File-MD5", "MD5:" + md5Hex("p")}},
	}
	answers := bulkAnswers(t, e.postBulk("einstein", bulkBody(parts...)))
	if len(answers) != len(parts) {
		t.Fatalf("%d answers for %d files: %v", len(answers), len(parts), answers)
	}
	for _, p := range parts {
		a := answers[p.path]
		if a.Error {
			t.Fatalf("%s refused: %s", p.path, a.Message)
		}
		webdav := "/webdav/" + strings.TrimPrefix(p.path, "/")
		e.wantContent("einstein", webdav, p.body)
		head := e.do("einstein", http.MethodHead, webdav, "")
		if a.ETag != head.Header().Get("ETag") || a.FileID != head.Header().Get("OC-FileId") || a.OCFileID != a.FileID {
			t.Errorf("%s: answer %+v, HEAD says ETag %s, OC-FileId %s", p.path, a, head.Header().Get("ETag"), head.Header().Get("OC-FileId"))
		}
		if a.Permissions == "" || a.MTime != "accepted" {
			t.Errorf("%s: answer %+v lacks permissions or mtime", p.path, a)
		}
		if lm := head.Header().Get("Last-Modified"); lm != "Tue, 14 Nov 2023 22:13:20 GMT" {
			t.Errorf("%s: Last-Modified %s, want the part's X-File-Mtime", p.path, lm)
		}
	}
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestBulkUploadRefusesFilesAlone sends, beside a good file, one that is
// refused for each reason a PUT is: each refusal is that file's answer,
// changes nothing, and the good file is committed all the same.
func TestBulkUploadRefusesFilesAlone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		part    testBulkPart
		message string
		// exists is a file that holds "before" and must still hold it.
		exists string
	}{
		{name: "backslash in a name", part: testBulkPart{path: `/a\b.txt`, body: "x"}, message: "must not contain \\"},
		{name: "character no XML may hold", part: testBulkPart{path: "/a\ufffeb.txt", body: "x"}, message: "must not contain U+FFFE"},
		{name: "dot dot", part: testBulkPart{path: "/../marie/x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "dot", part: testBulkPart{path: "./x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "missing folder", part: testBulkPart{path: "/nowhere/x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "another user's files", part: testBulkPart{path: "/remote.php/dav/files/marie/x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "a space by id", part: testBulkPart{path: "/dav/spaces/" + testStorageID + "$physics/x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "the Shares drive", part: testBulkPart{path: "/Shares/x.txt", body: "x"}, message: "parent collection of x.txt does not exist"},
		{name: "the root", part: testBulkPart{path: "/", body: "x"}, message: "is a collection"},
		{name: "a folder", part: testBulkPart{path: "/dir", body: "x"}, message: "is a collection"},
		{name: "below a file", part: testBulkPart{path: "/f.txt/x.txt", body: "x"}, message: "parent collection of x.txt does not exist", exists: "/f.txt"},
		{name: "md5 mismatch", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"X-File-MD5", md5Hex("y")}}, message: msgChecksumMismatch, exists: "/f.txt"},
		{name: "oc-checksum mismatch beside a good md5", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"OC-Checksum", "MD5:" + md5Hex("y")}}, message: msgChecksumMismatch, exists: "/f.txt"},
		{name: "malformed md5", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"X-File-MD5", "zz"}}, message: "X-File-MD5", exists: "/f.txt"},
		{name: "unknown checksum", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"OC-Checksum", "CRC9:00"}}, message: "OC-Checksum", exists: "/f.txt"},
		{name: "bad mtime", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"X-File-Mtime", "-1"}}, message: "X-File-Mtime", exists: "/f.txt"},
		{name: "failed If-Match", part: testBulkPart{path: "/f.txt", body: "x", set: []string{"If-Match", `"nope"`}}, message: "", exists: "/f.txt"},
		{name: "quota", part: testBulkPart{path: "/big.txt", body: strings.Repeat("q", 2000)}, message: msgQuotaExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withBulkUpload)
			e.store.SetPersonalQuota(1000)
			wantStatus(t, e.do("einstein", "MKCOL", "/webdav/dir", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "before"), http.StatusCreated)
			good := testBulkPart{path: "/dir/good.txt", body: "good"}
			answers := bulkAnswers(t, e.postBulk("einstein", bulkBody(tc.part, good)))
			if a := answers[good.path]; a.Error {
				t.Fatalf("the good file was refused: %s", a.Message)
			}
			e.wantContent("einstein", "/webdav/dir/good.txt", "good")
			a, ok := answers[tc.part.path]
			if !ok || !a.Error || !strings.Contains(a.Message, tc.message) || a.ETag != "" {
				t.Fatalf("answer %+v (present %v), want an error saying %q", a, ok, tc.message)
			}
			if tc.exists != "" {
				e.wantContent("einstein", "/webdav"+tc.exists, "before")
			}
			if strings.HasSuffix(tc.part.path, "x.txt") {
				for _, user := range []string{"einstein", "marie"} {
					if rec := e.do(user, "PROPFIND", "/webdav/", "", "Depth", "1"); strings.Contains(rec.Body.String(), "x.txt") {
						t.Fatalf("x.txt appeared in %s's space", user)
					}
				}
			}
		})
	}
}

func TestBulkUploadHonoursLocks(t *testing.T) {
	e, token, _ := lockedFile(t)
	e.h.bulkUpload = true
	answers := bulkAnswers(t, e.postBulk("einstein", bulkBody(
		testBulkPart{path: "/f.txt", body: "without token"})))
	if a := answers["/f.txt"]; !a.Error || !strings.Contains(a.Message, "locked") {
		t.Fatalf("a locked file written without its token: %+v", a)
	}
	e.wantContent("einstein", "/webdav/f.txt", "f")
	answers = bulkAnswers(t, e.postBulk("einstein", bulkBody(
		testBulkPart{path: "/f.txt", body: "with token", set: []string{"If", "(<" + token + ">)"}})))
	if a := answers["/f.txt"]; a.Error {
		t.Fatalf("the lock's token in the part's If header was refused: %s", a.Message)
	}
	e.wantContent("einstein", "/webdav/f.txt", "with token")
}

// TestBulkUploadRefusesMalformedRequests: a request that breaks the
// protocol is answered 400 with the WebDAV error body, and the file of the
// broken part is not written at all.
func TestBulkUploadRefusesMalformedRequests(t *testing.T) {
	good := bulkPartText(testBulkPart{path: "/good.txt", body: "good"})
	end := "--" + bulkBoundaryValue + "--\r\n"
	for _, tc := range []struct {
		name, contentType, body, message string
	}{
		{name: "not multipart", contentType: "text/plain", body: bulkBody(), message: "multipart/related"},
		{name: "form-data", contentType: "multipart/form-data; boundary=" + bulkBoundaryValue, body: bulkBody(), message: "multipart/related"},
		{name: "no boundary", contentType: "multipart/related", body: bulkBody(), message: "boundary"},
		{name: "empty body", body: "", message: "reading request body"},
		{name: "truncated in a part", body: good + strings.TrimSuffix(bulkPartText(testBulkPart{path: "/bad.txt", body: "0123456789"}), "6789\r\n"), message: "reading request body"},
		{name: "no closing boundary", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x"}), message: "reading request body"},
		{name: "control character in a header", body: good + bulkPartText(testBulkPart{path: "/a\x01b.txt", body: "x"}) + end, message: "malformed MIME header"},
		{name: "no X-File-Path", body: good + bulkPartText(testBulkPart{path: "", body: "x"}) + end, message: "X-File-Path"},
		{name: "no Content-Length", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x", set: []string{"Content-Length", ""}}) + end, message: "Content-Length"},
		{name: "Content-Length no number", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x", set: []string{"Content-Length", "1e3"}}) + end, message: "Content-Length"},
		{name: "negative Content-Length", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x", set: []string{"Content-Length", "-1"}}) + end, message: "Content-Length"},
		{name: "Content-Length too short", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "longer", set: []string{"Content-Length", "3"}}) + end, message: "not as long as its Content-Length"},
		{name: "Content-Length too long", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "short", set: []string{"Content-Length", "99"}}) + end, message: "not as long as its Content-Length"},
		{name: "lying length of a refused file", body: good + bulkPartText(testBulkPart{path: "/nowhere/bad.txt", body: "short", set: []string{"Content-Length", "99"}}) + end, message: "not as long as its Content-Length"},
		{name: "no checksum", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x", set: []string{"X-File-MD5", ""}}) + end, message: "X-File-MD5"},
		{name: "cut inside a part's headers", body: good + bulkPartText(testBulkPart{path: "/bad.txt", body: "x"})[:60], message: "ends inside the headers of its part 2"},
		{name: "cut after a part's boundary", body: good + "--" + bulkBoundaryValue + "\r\n", message: "ends inside the headers of its part 2"},
		{name: "cut before a header's line end", body: "--" + bulkBoundaryValue + "\r\nX-File-Path: /bad.txt", message: "ends inside the headers of its part 1"},
		{name: "X-File-Path too long", body: good + bulkPartText(testBulkPart{path: "/" + strings.Repeat("n/", storage.MaxPathBytes/2) + "bad.txt", body: "x"}) + end, message: "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withBulkUpload)
			rec := e.do("einstein", http.MethodPost, bulkPath, tc.body, "Content-Type", cmpOr(tc.contentType, bulkContentType))
			wantError(t, rec, http.StatusBadRequest, "BadRequest", tc.message)
			if rec := e.do("einstein", http.MethodHead, "/webdav/bad.txt", ""); rec.Code != http.StatusNotFound {
				t.Fatalf("the broken part's file exists: HEAD %d", rec.Code)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestBulkUploadEndpoint(t *testing.T) {
	// Unless configured, the endpoint is not there.
	off := newEnv(t)
	wantStatus(t, off.postBulk("einstein", bulkBody(testBulkPart{path: "a.txt", body: "a"})), http.StatusNotFound)
	if rec := off.do("einstein", http.MethodHead, "/webdav/a.txt", ""); rec.Code != http.StatusNotFound {
		t.Fatalf("a file written through a bulk upload that is off: HEAD %d", rec.Code)
	}

	e := newEnv(t, withBulkUpload)
	rec := e.do("einstein", http.MethodGet, bulkPath, "")
	wantStatus(t, rec, http.StatusMethodNotAllowed)
	if allow := rec.Header().Get("Allow"); allow != allowedOnBulk {
		t.Errorf("Allow %q, want %q", allow, allowedOnBulk)
	}
	if rec := e.do("", http.MethodOptions, bulkPath, ""); rec.Header().Get("Allow") != allowedOnBulk {
		t.Errorf("OPTIONS Allow %q, want %q", rec.Header().Get("Allow"), allowedOnBulk)
	}
	wantStatus(t, e.do("", http.MethodPost, bulkPath, bulkBody(), "Content-Type", bulkContentType), http.StatusUnauthorized)
	wantStatus(t, e.do("einstein", http.MethodPost, "/remote.php/dav/bulk/x", bulkBody(), "Content-Type", bulkContentType), http.StatusNotFound)
	// The /dav alias without /remote.php reaches it too.
	rec = e.do("einstein", http.MethodPost, "/dav/bulk", bulkBody(testBulkPart{path: "a.txt", body: "a"}), "Content-Type", bulkContentType)
	if a := bulkAnswers(t, rec)["a.txt"]; a.Error {
		t.Fatalf("/dav/bulk: %s", a.Message)
	}
	// No parts at all is an empty answer.
	if answers := bulkAnswers(t, e.postBulk("einstein", bulkBody())); len(answers) != 0 {
		t.Fatalf("answers %v for no files", answers)
	}
	// The same path twice: the parts are written in order.
	answers := bulkAnswers(t, e.postBulk("einstein", bulkBody(
		testBulkPart{path: "twice.txt", body: "first"}, testBulkPart{path: "twice.txt", body: "second"})))
	if answers["twice.txt"].Error {
		t.Fatal(answers["twice.txt"].Message)
	}
	e.wantContent("einstein", "/webdav/twice.txt", "second")
}

// TestBulkUploadSharesCommits counts the bolt transactions a request of
// 100 small files commits: its commits run together, sharing them.
func TestBulkUploadSharesCommits(t *testing.T) {
	e := newEnv(t, withBulkUpload)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/NC", ""), http.StatusCreated)
	parts := make([]testBulkPart, 100)
	for i := range parts {
		parts[i] = testBulkPart{path: fmt.Sprintf("/NC/%03d.txt", i), body: strings.Repeat(strconv.Itoa(i), 2000)}
	}
	body := bulkBody(parts...)
	before := e.store.WriteCommits()
	answers := bulkAnswers(t, e.postBulk("einstein", body))
	commits := e.store.WriteCommits() - before
	for _, p := range parts {
		if answers[p.path].Error {
			t.Fatalf("%s: %s", p.path, answers[p.path].Message)
		}
		e.wantContent("einstein", "/webdav"+p.path, p.body)
	}
	t.Logf("100 files in %d bolt commits", commits)
	if commits == 0 || commits > 100 {
		t.Fatalf("%d bolt commits for 100 files", commits)
	}
}

// TestBulkUploadFileSentAgain is what Nextcloud's client does when a bulk
// request starts while the previous one is under way: the later request
// carries the files of the earlier one again, with the same bytes and
// times, and the client keeps the etags of the answer it reads first. Both
// answers must give the etag the file ends with, in either order and at
// once; a file sent again with other bytes or another time is written.
func TestBulkUploadFileSentAgain(t *testing.T) {
	e := newEnv(t, withBulkUpload)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/NC", ""), http.StatusCreated)
	first := []testBulkPart{{path: "/NC/a.txt", body: "alpha"}, {path: "/NC/b.txt", body: "beta"}}
	both := append(slices.Clone(first), testBulkPart{path: "/NC/c.txt", body: "gamma"})

	answered := []map[string]bulkAnswer{
		bulkAnswers(t, e.postBulk("einstein", bulkBody(first...))),
		bulkAnswers(t, e.postBulk("einstein", bulkBody(both...))),
	}
	var wg sync.WaitGroup
	recs := make([]*httptest.ResponseRecorder, 2)
	for i := range recs {
		wg.Go(func() { recs[i] = e.postBulk("einstein", bulkBody(both...)) })
	}
	wg.Wait()
	for _, rec := range recs {
		answered = append(answered, bulkAnswers(t, rec))
	}
	for _, p := range first {
		etag := e.do("einstein", http.MethodHead, "/webdav"+p.path, "").Header().Get("ETag")
		for i, answers := range answered {
			if a := answers[p.path]; a.Error || a.ETag != etag {
				t.Errorf("%s: answer %d gave %+v, the file has ETag %s", p.path, i+1, a, etag)
			}
		}
	}

	before := e.do("einstein", http.MethodHead, "/webdav/NC/a.txt", "").Header().Get("ETag")
	changed := bulkAnswers(t, e.postBulk("einstein", bulkBody(
		testBulkPart{path: "/NC/a.txt", body: "ALPHA"},
		testBulkPart{path: "/NC/b.txt", body: "beta", set: []string{"X-File-Mtime", "1700000001"}})))
	for _, path := range []string{"/NC/a.txt", "/NC/b.txt"} {
		head := e.do("einstein", http.MethodHead, "/webdav"+path, "")
		if a := changed[path]; a.Error || a.ETag != head.Header().Get("ETag") {
			t.Errorf("%s sent changed: answer %+v, the file has ETag %s", path, a, head.Header().Get("ETag"))
		}
	}
	if changed["/NC/a.txt"].ETag == before {
		t.Errorf("/NC/a.txt kept its etag %s with other bytes", before)
	}
	e.wantContent("einstein", "/webdav/NC/a.txt", "ALPHA")
}

// TestBulkUploadCaps: a file over the size a part may have is that file's
// refusal; a request of more parts than allowed is refused whole.
func TestBulkUploadCaps(t *testing.T) {
	e := newEnv(t, withBulkUpload)
	big := strings.Repeat("b", maxBulkPartBytes+1)
	answers := bulkAnswers(t, e.postBulk("einstein", bulkBody(
		testBulkPart{path: "big.bin", body: big}, testBulkPart{path: "small.txt", body: "small"})))
	if a := answers["big.bin"]; !a.Error || !strings.Contains(a.Message, "at most") {
		t.Fatalf("a part over the cap: %+v", a)
	}
	wantStatus(t, e.do("einstein", http.MethodHead, "/webdav/big.bin", ""), http.StatusNotFound)
	e.wantContent("einstein", "/webdav/small.txt", "small")

	parts := make([]testBulkPart, maxBulkParts+1)
	for i := range parts {
		parts[i] = testBulkPart{path: fmt.Sprintf("/nowhere/%d.txt", i), body: "x"}
	}
	wantError(t, e.postBulk("einstein", bulkBody(parts...)), http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "at most")
}

// TestBulkUploadAnswerBounded: the answer echoes each X-File-Path, at most
// storage.MaxPathBytes long, and nothing more that grows with it: names
// full of "<", ">" and "&" are not escaped into six bytes each.
func TestBulkUploadAnswerBounded(t *testing.T) {
	e := newEnv(t, withBulkUpload)
	name := strings.Repeat("<&>", storage.MaxNameLen/3)
	path := strings.Repeat(name+"/", storage.MaxPathBytes/(len(name)+1)-1)
	parts := make([]testBulkPart, 100)
	for i := range parts {
		parts[i] = testBulkPart{path: path + strconv.Itoa(i), body: "x"}
	}
	body := bulkBody(parts...)
	rec := e.postBulk("einstein", body)
	answers := bulkAnswers(t, rec)
	if len(answers) != len(parts) || !answers[parts[0].path].Error {
		t.Fatalf("%d answers, the first %+v", len(answers), answers[parts[0].path])
	}
	if rec.Body.Len() > 2*len(body) {
		t.Fatalf("an answer of %d bytes to a request of %d", rec.Body.Len(), len(body))
	}
}
