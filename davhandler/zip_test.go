package davhandler

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// getZip sends GET <p>?zip as user; hdr holds header name/value pairs.
func (e *env) getZip(user, p string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest("GET", escapePath(p)+"?zip", nil)
	req.SetBasicAuth(user, "x")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// readZip reads back an archive: each entry's content by name ("" for a
// folder entry) and its modification time.
func readZip(t *testing.T, body []byte) (map[string]string, map[string]time.Time) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("reading the zip: %v", err)
	}
	contents, mtimes := map[string]string{}, map[string]time.Time{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", f.Name, err)
		}
		contents[f.Name], mtimes[f.Name] = string(b), f.Modified
	}
	return contents, mtimes
}

func TestZipOfNestedFolderRoundTrips(t *testing.T) {
	e := newEnv(t)
	base := "/dav/spaces/" + testStorageID + "$physics"
	wantStatus(t, e.do("einstein", "MKCOL", base+"/lab", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", base+"/lab/sub", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", base+"/lab/empty", ""), http.StatusCreated)
	files := map[string]struct {
		body  string
		mtime int64
	}{
		"lab/a.txt":         {"alpha", 1700000000},
		"lab/sub/b.bin":     {"beta\x00\x01", 1600000000},
		"lab/sub/Grüße.txt": {strings.Repeat("g", 100000), 1500000000},
	}
	for name, f := range files {
		rec := e.do("marie", "PUT", base+"/"+name, f.body, "X-OC-Mtime", fmt.Sprint(f.mtime))
		wantStatus(t, rec, http.StatusCreated)
	}
	wantStatus(t, e.do("einstein", "PUT", base+"/elsewhere.txt", "not in the zip"), http.StatusCreated)

	rec := e.getZip("richard", base+"/lab")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/zip" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename*=UTF-8''lab.zip; filename="lab.zip"` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	contents, mtimes := readZip(t, rec.Body.Bytes())
	want := []string{"lab/", "lab/a.txt", "lab/empty/", "lab/sub/", "lab/sub/Grüße.txt", "lab/sub/b.bin"}
	if len(contents) != len(want) {
		t.Errorf("entries = %v, want %v", contents, want)
	}
	for _, name := range want {
		if _, ok := contents[name]; !ok {
			t.Errorf("no entry %s", name)
		}
	}
	for name, f := range files {
		if contents[name] != f.body {
			t.Errorf("%s: content of %d bytes differs", name, len(contents[name]))
		}
		if got := mtimes[name].Unix(); got != f.mtime {
			t.Errorf("%s: mtime %d, want %d", name, got, f.mtime)
		}
	}
}

func TestZipNamesTheSpaceAndEncodesNonASCII(t *testing.T) {
	e := newEnv(t)
	base := "/dav/spaces/" + testStorageID + "$physics"
	rec := e.getZip("einstein", base+"/")
	wantStatus(t, rec, http.StatusOK)
	if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, `filename="Physics.zip"`) {
		t.Errorf("Content-Disposition = %q", cd)
	}
	wantStatus(t, e.do("einstein", "MKCOL", base+"/Ärger", ""), http.StatusCreated)
	rec = e.getZip("einstein", base+"/Ärger")
	wantStatus(t, rec, http.StatusOK)
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename*=UTF-8''%C3%84rger.zip; filename="Ärger.zip"` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if contents, _ := readZip(t, rec.Body.Bytes()); len(contents) != 1 || contents["Ärger/"] != "" {
		t.Errorf("entries = %v", contents)
	}
}

func TestZipOfNonMemberIsNotFound(t *testing.T) {
	e := newEnv(t)
	base := "/dav/spaces/" + testStorageID + "$physics"
	wantStatus(t, e.do("einstein", "MKCOL", base+"/lab", ""), http.StatusCreated)
	missing := e.getZip("einstein", base+"/nothing")
	wantStatus(t, missing, http.StatusNotFound)
	stranger := e.getZip("bob", base+"/lab")
	wantStatus(t, stranger, http.StatusNotFound)
	if stranger.Body.String() != missing.Body.String() {
		t.Errorf("a non-member's answer %q differs from a missing folder's %q", stranger.Body, missing.Body)
	}
}

// A file URL with ?zip is the file itself: the query only means something
// for folders, and a client that adds it to a file gets what it names.
func TestZipOfFileIsTheFile(t *testing.T) {
	e := newEnv(t)
	base := "/dav/spaces/" + testStorageID + "$physics"
	wantStatus(t, e.do("einstein", "PUT", base+"/a.txt", "alpha"), http.StatusCreated)
	rec := e.getZip("einstein", base+"/a.txt")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "alpha" {
		t.Errorf("body = %q, want the file", rec.Body)
	}
}

// A browser following the page's link (Accept: text/html) gets the zip,
// not the folder's page.
func TestZipWinsOverThePage(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Page = stubPage{} })
	base := "/dav/spaces/" + testStorageID + "$physics"
	rec := e.getZip("einstein", base+"/", "Accept", "text/html")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/zip" {
		t.Errorf("Content-Type = %q", ct)
	}
}

type stubPage struct{}

func (stubPage) WantsPage(r *http.Request) bool { return r.Header.Get("Accept") == "text/html" }
func (stubPage) ServeFolder(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("page"))
}
func (stubPage) ServeNotFound(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusNotFound)
}

// heapWatcher is a response that keeps nothing of the body: it counts the
// bytes and, every so often, records the live heap after a collection.
type heapWatcher struct {
	header  http.Header
	written int64
	writes  int
	maxHeap uint64
}

func (hw *heapWatcher) Header() http.Header { return hw.header }
func (hw *heapWatcher) WriteHeader(int)     {}
func (hw *heapWatcher) Write(p []byte) (int, error) {
	hw.written += int64(len(p))
	if hw.writes++; hw.writes%100 == 0 {
		hw.maxHeap = max(hw.maxHeap, liveHeap())
	}
	return len(p), nil
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The zip of a folder streams: the live heap grows by less than 4 MiB
// while 32 MiB of files are zipped, so it holds no file's content, nor
// the archive, whatever their size.
func TestZipMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 32 MiB")
	}
	const files, size = 500, 64 << 10
	e := newEnvWith(t, boltstore.Options{NoSync: true}) // the heap, not durability
	base := "/dav/spaces/" + testStorageID + "$physics"
	wantStatus(t, e.do("einstein", "MKCOL", base+"/many", ""), http.StatusCreated)
	body := strings.Repeat("x", size)
	for i := range files {
		wantStatus(t, e.do("einstein", "PUT", fmt.Sprintf("%s/many/f%04d", base, i), body), http.StatusCreated)
	}
	before := liveHeap()
	hw := &heapWatcher{header: http.Header{}}
	req := httptest.NewRequest("GET", escapePath(base+"/many")+"?zip", nil)
	req.SetBasicAuth("einstein", "x")
	started := time.Now()
	e.h.ServeHTTP(hw, req)
	elapsed := time.Since(started)
	if hw.written < files*size {
		t.Fatalf("wrote %d bytes, want over %d", hw.written, files*size)
	}
	const limit = 4 << 20
	if hw.maxHeap > before && hw.maxHeap-before > limit {
		t.Errorf("live heap grew by %d bytes while zipping %d files, want under %d", hw.maxHeap-before, files, limit)
	}
	t.Logf("zip of %d bytes in %d writes in %v; live heap before %d, peak %d", hw.written, hw.writes, elapsed.Round(time.Millisecond), before, hw.maxHeap)
}

// removingStore removes a file just before the zip opens it, as another
// client's DELETE would between the listing and the copy.
type removingStore struct {
	storage.Store
	// victim is the name of the file to remove.
	victim string
}

func (s *removingStore) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	if n, err := s.Store.Node(ctx, spaceID, nodeID); err == nil && n.Name == s.victim {
		if err := s.Store.Remove(ctx, spaceID, nodeID, storage.Conditions{}); err != nil {
			return storage.Node{}, nil, err
		}
	}
	return s.Store.Open(ctx, spaceID, nodeID)
}

func TestZipLeavesOutAFileRemovedMeanwhile(t *testing.T) {
	removing := &removingStore{}
	e := newEnv(t, func(c *Config) {
		removing.Store = c.Store
		c.Store = removing
	})
	base := "/dav/spaces/" + testStorageID + "$physics"
	wantStatus(t, e.do("einstein", "MKCOL", base+"/lab", ""), http.StatusCreated)
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		wantStatus(t, e.do("einstein", "PUT", base+"/lab/"+name, name), http.StatusCreated)
	}
	removing.victim = "b.txt"
	rec := e.getZip("einstein", base+"/lab")
	wantStatus(t, rec, http.StatusOK)
	contents, _ := readZip(t, rec.Body.Bytes())
	want := map[string]string{"lab/": "", "lab/a.txt": "a.txt", "lab/c.txt": "c.txt"}
	if fmt.Sprint(contents) != fmt.Sprint(want) {
		t.Errorf("entries = %v, want %v", contents, want)
	}
}
