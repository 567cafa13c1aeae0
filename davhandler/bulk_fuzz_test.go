package davhandler

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// FuzzBulkRequest sends arbitrary bodies to the bulk upload: each is
// answered 200 with an answer per file, or refused whole with a 4xx in the
// WebDAV error shape; never a server fault, and every file answered as
// committed is there.
func FuzzBulkRequest(f *testing.F) {
	good := bulkPartText(testBulkPart{path: "/NC/a.txt", body: "alpha"})
	end := "--" + bulkBoundaryValue + "--\r\n"
	for _, seed := range []string{
		bulkBody(),
		bulkBody(testBulkPart{path: "/NC/a.txt", body: "alpha"}, testBulkPart{path: "b.txt", body: ""}),
		bulkBody(testBulkPart{path: "/NC/../x.txt", body: "x"}),
		bulkBody(testBulkPart{path: "/NC/a.txt", body: "x", set: []string{"X-File-MD5", md5Hex("y")}}),
		bulkBody(testBulkPart{path: "/NC/a.txt", body: "x", set: []string{"OC-Checksum", "SHA1:" + sha1Hex("x")}}),
		bulkBody(testBulkPart{path: "/NC/a.txt", body: "x", set: []string{"X-File-Mtime", "1.5"}}),
		good,
		good + bulkPartText(testBulkPart{path: "/NC/c.txt", body: "long", set: []string{"Content-Length", "2"}}) + end,
		good + bulkPartText(testBulkPart{path: "", body: "x"}) + end,
		"preamble\r\n" + good + end + "epilogue",
		"--" + bulkBoundaryValue + "\r\nContent-Length: 1\r\n\r\n",
		good + "--" + bulkBoundaryValue + "\r\nX-File-Pa",
		bulkBody(testBulkPart{path: strings.Repeat("a/", storage.MaxPathSegments) + "f.txt", body: "x"}),
		"",
	} {
		f.Add(seed)
	}
	e := newEnv(f, withBulkUpload)
	if rec := e.do("einstein", "MKCOL", "/webdav/NC", ""); rec.Code != http.StatusCreated {
		f.Fatalf("MKCOL: %d", rec.Code)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e := &env{t: t, h: e.h, store: e.store, physics: e.physics}
		rec := e.do("einstein", http.MethodPost, bulkPath, body, "Content-Type", bulkContentType)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if !strings.Contains(rec.Body.String(), "<d:error") {
				t.Fatalf("%d without the WebDAV error body: %s", rec.Code, rec.Body.String())
			}
			return
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
		var answers map[string]bulkAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil {
			t.Fatalf("answer is no JSON object: %v\n%s", err, rec.Body.String())
		}
		for path, a := range answers {
			if a.Error {
				continue
			}
			if a.ETag == "" || a.FileID == "" {
				t.Fatalf("%q committed without etag or file id: %+v", path, a)
			}
			if head := e.do("einstein", http.MethodHead, escapePath("/webdav/"+strings.TrimLeft(path, "/")), ""); head.Code != http.StatusOK {
				t.Fatalf("%q answered as committed, HEAD %d", path, head.Code)
			}
		}
	})
}
