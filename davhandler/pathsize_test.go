package davhandler

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestPathSizeRefusedAtEveryEntry: a path longer or deeper than
// storage.ValidPathSize allows, wherever a client names it, is refused
// with a 4xx in the WebDAV error shape and changes nothing.
func TestPathSizeRefusedAtEveryEntry(t *testing.T) {
	deep := strings.Repeat("a/", storage.MaxPathSegments) + "f.txt"
	long := strings.Repeat(strings.Repeat("n", 200)+"/", storage.MaxPathBytes/200+1) + "f.txt"
	attack := strings.Repeat("a/", 128<<10)
	tus := func(name string) []string {
		return []string{"Tus-Resumable", "1.0.0", "Upload-Length", "1", "Upload-Metadata", tusMeta("filename", name)}
	}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
	}{
		{name: "PUT deep URL", method: http.MethodPut, path: "/webdav/" + deep, body: "x", status: http.StatusRequestURITooLong},
		{name: "PUT long URL", method: http.MethodPut, path: "/remote.php/dav/files/einstein/" + long, body: "x", status: http.StatusRequestURITooLong},
		{name: "MKCOL deep URL", method: "MKCOL", path: "/webdav/" + deep, status: http.StatusRequestURITooLong},
		{name: "PROPFIND a 256 KiB URL", method: "PROPFIND", path: "/webdav/" + attack, hdr: []string{"Depth", "0"}, status: http.StatusRequestURITooLong},
		{name: "v1 chunk below a deep folder", method: http.MethodPut, path: "/webdav/" + deep + "-chunking-4711-2-0", body: "x",
			hdr: []string{"OC-Chunked", "1", "OC-Total-Length", "2"}, status: http.StatusRequestURITooLong},
		{name: "MOVE to a deep Destination", method: "MOVE", path: "/webdav/f.txt", hdr: []string{"Destination", "/webdav/" + deep}, status: http.StatusBadRequest},
		{name: "COPY to a long Destination", method: "COPY", path: "/webdav/f.txt", hdr: []string{"Destination", "http://example.com/webdav/" + long}, status: http.StatusBadRequest},
		{name: "TUS deep filename", method: http.MethodPost, path: "/webdav/", hdr: tus(deep), status: http.StatusBadRequest},
		{name: "TUS 256 KiB filename", method: http.MethodPost, path: "/webdav/", hdr: tus(attack + "f.txt"), status: http.StatusBadRequest},
		{name: "bulk deep X-File-Path", method: http.MethodPost, path: bulkPath, body: bulkBody(testBulkPart{path: deep, body: "x"}),
			hdr: []string{"Content-Type", bulkContentType}, status: http.StatusBadRequest},
		{name: "bulk 256 KiB X-File-Path", method: http.MethodPost, path: bulkPath, body: bulkBody(testBulkPart{path: attack + "f.txt", body: "x"}),
			hdr: []string{"Content-Type", bulkContentType}, status: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withChunks, withUploads, withBulkUpload)
			wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/f.txt", "f"), http.StatusCreated)
			before := personalTree(t, e, "einstein")
			wantPathSizeError(t, e.do("einstein", tc.method, tc.path, tc.body, tc.hdr...), tc.status)
			wantTree(t, personalTree(t, e, "einstein"), before...)
		})
	}
}

// TestPathSizeRefusedAtNGAssembly: the Destination of a chunking NG
// upload's assembly is held to the same rule; the upload stays.
func TestPathSizeRefusedAtNGAssembly(t *testing.T) {
	e := newEnv(t, withChunks)
	upload := ngPath("einstein", "1001")
	wantStatus(t, e.do("einstein", "MKCOL", upload, "", "OC-Total-Length", "1"), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, upload+"/0", "x"), http.StatusCreated)
	deep := "/remote.php/dav/files/einstein/" + strings.Repeat("a/", storage.MaxPathSegments) + "f.txt"
	wantPathSizeError(t, e.do("einstein", "MOVE", upload+"/.file", "", "Destination", deep, "OC-Total-Length", "1"), http.StatusBadRequest)
	wantTree(t, personalTree(t, e, "einstein"))
	wantStatus(t, e.do("einstein", "PROPFIND", upload+"/0", "", "Depth", "0"), http.StatusMultiStatus)
}

// wantPathSizeError checks a refusal of a path's size: status, with the
// WebDAV error body naming the caps.
func wantPathSizeError(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	wantStatus(t, rec, status)
	var body struct {
		XMLName xml.Name `xml:"DAV: error"`
		Message string   `xml:"http://sabredav.org/ns message"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not the DAV error shape: %v\n%.300s", err, rec.Body.String())
	}
	want := "at most " + strconv.Itoa(storage.MaxPathBytes) + " bytes and " + strconv.Itoa(storage.MaxPathSegments) + " names"
	if !strings.Contains(body.Message, want) {
		t.Fatalf("message %q does not say %q", body.Message, want)
	}
	if n := rec.Body.Len(); n > 1024 {
		t.Fatalf("the refusal is %d bytes: it echoes the path", n)
	}
}
