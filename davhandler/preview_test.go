package davhandler

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/preview"
)

const physicsURL = "/dav/spaces/" + testStorageID + "%24physics"

func newPreviewEnv(t *testing.T) *env {
	return newEnv(t, func(c *Config) { c.Previews = preview.New(preview.Options{MaxPixels: 4_000_000}) })
}

func testPNG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.SetNRGBA(0, 0, color.NRGBA{A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// declaredPNG is a PNG header declaring w×h pixels that never follow.
func declaredPNG(t *testing.T, w, h uint32) string {
	data := []byte(testPNG(t, 1, 1))
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return string(data)
}

func TestPreviewOfAFile(t *testing.T) {
	e := newPreviewEnv(t)
	wantStatus(t, e.do("marie", "PUT", physicsURL+"/wide%20pic.png", testPNG(t, 400, 200)), http.StatusCreated)
	etag := e.do("marie", "HEAD", physicsURL+"/wide%20pic.png", "").Header().Get("ETag")

	rec := e.do("richard", "GET", physicsURL+"/wide%20pic.png?preview=1&x=120&y=120&a=1&c=abc", "")
	wantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("Content-Type"); got != "image/png" {
		t.Errorf("Content-Type %q, want image/png", got)
	}
	if got := rec.Header().Get("ETag"); got != etag {
		t.Errorf("preview ETag %q, want the file's %q", got, etag)
	}
	img, err := png.Decode(rec.Body)
	if err != nil {
		t.Fatalf("preview is no PNG: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(128, 64) {
		t.Errorf("preview of 400×200 in a 120 box (snapped to 128), aspect kept: %v, want 128×64", got)
	}

	rec = e.do("richard", "GET", physicsURL+"/wide%20pic.png?preview=1&x=64&y=64", "", "If-None-Match", etag)
	wantStatus(t, rec, http.StatusNotModified)

	rec = e.do("richard", "HEAD", physicsURL+"/wide%20pic.png?preview=1&x=64&y=64", "")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "0" {
		t.Errorf("HEAD: body of %d bytes, Content-Length %q", rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

func TestPreviewRefusals(t *testing.T) {
	e := newPreviewEnv(t)
	for name, content := range map[string]string{
		"report.pdf": "%PDF-1.7 ...",
		"fake.png":   "I am text, not a picture",
		"bomb.png":   declaredPNG(t, 100_000, 100_000),
		"notes.txt":  "first line\nsecond line\n",
	} {
		wantStatus(t, e.do("marie", "PUT", physicsURL+"/"+name, content), http.StatusCreated)
	}
	wantStatus(t, e.do("marie", "MKCOL", physicsURL+"/folder", ""), http.StatusCreated)
	for _, tc := range []struct {
		user, path string
		status     int
		message    string
	}{
		{"marie", "/report.pdf?preview=1&x=64&y=64", http.StatusNotFound, msgNoPreview},
		{"marie", "/folder?preview=1&x=64&y=64", http.StatusNotFound, msgNoPreview},
		{"marie", "/fake.png?preview=1&x=64&y=64", http.StatusUnsupportedMediaType, msgPreviewMismatch},
		{"marie", "/bomb.png?preview=1&x=64&y=64", http.StatusRequestEntityTooLarge, msgPreviewTooLarge},
		{"marie", "/notes.txt?preview=1&x=-4&y=64", http.StatusBadRequest, "preview x"},
		{"marie", "/notes.txt?preview=1&x=64&y=many", http.StatusBadRequest, "preview y"},
		{"marie", "/missing.png?preview=1&x=64&y=64", http.StatusNotFound, ""},
		// Not a member: the space does not exist for them.
		{"alice", "/notes.txt?preview=1&x=64&y=64", http.StatusNotFound, ""},
	} {
		rec := e.do(tc.user, "GET", physicsURL+tc.path, "")
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.message) || !strings.Contains(rec.Body.String(), "<d:error") {
			t.Errorf("%s as %s: %d %s, want %d with %q in the XML error body", tc.path, tc.user, rec.Code, rec.Body.String(), tc.status, tc.message)
		}
	}
	rec := e.do("marie", "GET", physicsURL+"/notes.txt?preview=1&x=64&y=64", "")
	wantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("Content-Type"); got != "image/png" {
		t.Errorf("text preview Content-Type %q, want image/png", got)
	}
}

func TestNoPreviewsWithoutAGenerator(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("marie", "PUT", physicsURL+"/pic.png", testPNG(t, 10, 10)), http.StatusCreated)
	rec := e.do("marie", "GET", physicsURL+"/pic.png?preview=1&x=64&y=64", "")
	wantStatus(t, rec, http.StatusNotFound)
}

// TestPreviewTimedOutIsKeptForTheRetry: a preview that takes longer than
// the time limit answers 503 with Retry-After; the work goes on, and its
// preview is kept in the cache, which answers the client's retry (a new
// making could not finish within the limit).
func TestPreviewTimedOutIsKeptForTheRetry(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Previews = preview.New(preview.Options{Timeout: time.Millisecond}) })
	wantStatus(t, e.do("marie", "PUT", physicsURL+"/large.png", testPNG(t, 1500, 1500)), http.StatusCreated)
	const path = physicsURL + "/large.png?preview=1&x=64&y=64"
	rec := e.do("marie", "GET", path, "")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("first request: %d, Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		rec = e.do("marie", "GET", path, "")
		if rec.Code == http.StatusOK {
			break
		}
		retry := rec.Code == http.StatusServiceUnavailable || rec.Code == http.StatusTooManyRequests
		if !retry || time.Now().After(deadline) {
			t.Fatalf("retry: %d %s; want the kept preview", rec.Code, rec.Body.String())
		}
	}
	img, err := png.Decode(rec.Body)
	if err != nil {
		t.Fatalf("kept preview: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(64, 64) {
		t.Errorf("kept preview of %v, want 64x64", got)
	}
}
