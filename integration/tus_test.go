package integration

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

const tusResumable = "1.0.0"

// tusMetadata encodes Upload-Metadata from key/value pairs.
func tusMetadata(pairs ...string) string {
	var items []string
	for i := 0; i+1 < len(pairs); i += 2 {
		items = append(items, pairs[i]+" "+base64.StdEncoding.EncodeToString([]byte(pairs[i+1])))
	}
	return strings.Join(items, ",")
}

// tusCreate starts an upload of name (length bytes) in collection; a body
// is sent with the request (creation-with-upload).
func (c *client) tusCreate(collection, name string, length int64, body []byte) (*http.Response, []byte, error) {
	header := map[string]string{
		"Tus-Resumable":   tusResumable,
		"Upload-Length":   strconv.FormatInt(length, 10),
		"Upload-Metadata": tusMetadata("filename", name),
	}
	if body != nil {
		header["Content-Type"] = "application/offset+octet-stream"
	}
	return c.try(http.MethodPost, collection, header, body)
}

// tusPatch appends body at offset.
func (c *client) tusPatch(upload string, offset int64, body []byte) (*http.Response, []byte, error) {
	return c.try(http.MethodPatch, upload, map[string]string{
		"Tus-Resumable": tusResumable,
		"Upload-Offset": strconv.FormatInt(offset, 10),
		"Content-Type":  "application/offset+octet-stream",
	}, body)
}

// tusHead asks for an upload's offset.
func (c *client) tusHead(upload string) (*http.Response, error) {
	resp, _, err := c.try(http.MethodHead, upload, map[string]string{"Tus-Resumable": tusResumable}, nil)
	return resp, err
}

// uploadPath is the path (and query) of an upload URL, which the server may
// give relative to the request or absolute.
func uploadPath(t testing.TB, base, location string) string {
	t.Helper()
	if location == "" {
		t.Fatal("no upload URL")
	}
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := b.Parse(location)
	if err != nil {
		t.Fatalf("upload URL %q: %v", location, err)
	}
	return loc.RequestURI()
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// tempFile writes content to a file for the tus client to read.
func tempFile(t testing.TB, content []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "upload.bin")
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantUploaded checks the file at p (an escaped WebDAV path) with GET and
// PROPFIND: its bytes, size and checksums are those of content.
func wantUploaded(t testing.TB, c *client, p string, content []byte) {
	t.Helper()
	resp, got := c.send(http.MethodGet, p, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, tail(string(got), 500))
	}
	if !bytes.Equal(got, content) {
		t.Fatalf("GET %s: %d bytes, SHA1 %s; want %d bytes, SHA1 %s", p, len(got), sha1Hex(got), len(content), sha1Hex(content))
	}
	w := checksum.NewWriter()
	w.Write(content)
	const body = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
		`<oc:checksums/><oc:size/><d:getcontentlength/></d:prop></d:propfind>`
	responses := c.propfind(p, "0", body)
	if len(responses) != 1 {
		t.Fatalf("PROPFIND %s: %d responses", p, len(responses))
	}
	props := responses[0].props
	size := strconv.Itoa(len(content))
	if props[ocNS+" size"] != size || props["DAV: getcontentlength"] != size {
		t.Errorf("PROPFIND %s: oc:size %q, getcontentlength %q, want %s", p, props[ocNS+" size"], props["DAV: getcontentlength"], size)
	}
	wantSums := "<oc:checksum>" + w.Sums().String() + "</oc:checksum>"
	if got := props[ocNS+" checksums"]; got != wantSums {
		t.Errorf("PROPFIND %s: oc:checksums %q, want %q", p, got, wantSums)
	}
}

// TestTusClientChunked: tus-js-client uploads 12 MiB in 1 MiB PATCHes
// through a spaces URL and a personal-space URL (there with its first chunk
// in the POST); the file has the bytes, size, checksums and mtime sent.
func TestTusClientChunked(t *testing.T) {
	t.Parallel()
	requireTusClient(t)
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	ref := personalSpaceRef(t, s, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/tus", "")
	content := randomBytes(t, 12<<20)
	file := tempFile(t, content)
	tests := []struct {
		name           string
		collection     string
		withCreation   bool
		uploaded       string
		uploadedInHome string
	}{
		{name: "spaces", collection: "/dav/spaces/" + ref + "/tus", uploaded: "/dav/spaces/" + ref + "/tus/spaces.bin", uploadedInHome: "/webdav/tus/spaces.bin"},
		{name: "remote.php webdav", collection: "/remote.php/webdav/tus", withCreation: true, uploaded: "/remote.php/webdav/tus/webdav.bin", uploadedInHome: "/webdav/tus/webdav.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.in(t)
			name := pathBase(tt.uploaded)
			res := runTusClient(t, "einstein", tusOptions{
				Endpoint:                 s.URL + tt.collection,
				File:                     file,
				Metadata:                 map[string]string{"filename": name, "mtime": "1700000000"},
				ChunkSize:                1 << 20,
				UploadDataDuringCreation: tt.withCreation,
			})
			if !res.success {
				t.Fatalf("upload failed: %s", res.failure)
			}
			if res.chunks < 12 || res.accepted != int64(len(content)) {
				t.Errorf("%d chunks acknowledged up to %d bytes, want 12 up to %d", res.chunks, res.accepted, len(content))
			}
			if uploadPath(t, s.URL, res.url) == tt.uploaded {
				t.Errorf("upload URL %s is the file's own URL", res.url)
			}
			wantUploaded(t, c, tt.uploaded, content)
			wantUploaded(t, c, tt.uploadedInHome, content)
			if got := c.prop(tt.uploaded, "DAV:", "getlastmodified"); got != "Tue, 14 Nov 2023 22:13:20 GMT" {
				t.Errorf("getlastmodified %q, want the mtime sent (1700000000)", got)
			}
		})
	}
}

func pathBase(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// TestTusClientResumesAfterDroppedConnection: the connection breaks in the
// middle of a PATCH; tus-js-client asks for the offset, resumes there
// (rather than starting over) and finishes.
func TestTusClientResumesAfterDroppedConnection(t *testing.T) {
	t.Parallel()
	requireTusClient(t)
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	proxy := startCutProxy(t, s.URL)
	const size, chunk = 12 << 20, 1 << 20
	content := randomBytes(t, size)
	proxy.arm(3*chunk+12345, nil)
	res := runTusClient(t, "einstein", tusOptions{
		Endpoint:    proxy.URL + "/webdav/",
		File:        tempFile(t, content),
		Metadata:    map[string]string{"filename": "dropped.bin"},
		ChunkSize:   chunk,
		RetryDelays: []int{0, 200, 500, 1000, 2000},
	})
	if !res.success {
		t.Fatalf("upload failed: %s", res.failure)
	}
	sent, trips := proxy.stats()
	if trips != 1 || res.retries < 1 {
		t.Fatalf("the connection was dropped %d times and the client retried %d times, want 1 and at least 1", trips, res.retries)
	}
	// Starting over would send the 3 MiB before the break again.
	if sent > size+chunk+64<<10 {
		t.Errorf("the client sent %d bytes for a %d byte file: it did not resume where the server was", sent, size)
	}
	wantUploaded(t, c, "/webdav/dropped.bin", content)
}

// TestTusClientResumesAfterRestart: Caddy goes down in the middle of a
// PATCH, killed or stopped; started again on the same data it reports at
// least the bytes it acknowledged, nothing is at the target yet, and the
// client resumes from there and finishes.
func TestTusClientResumesAfterRestart(t *testing.T) {
	t.Parallel()
	requireTusClient(t)
	tests := []struct {
		name string
		// down takes the server down while a PATCH is half sent; the
		// returned channel is closed when it is down.
		down func(s *server) <-chan struct{}
	}{
		{name: "kill -9", down: func(s *server) <-chan struct{} {
			s.kill()
			done := make(chan struct{})
			close(done)
			return done
		}},
		{name: "clean stop", down: func(s *server) <-chan struct{} {
			done := make(chan struct{})
			go func() {
				s.stop()
				close(done)
			}()
			// Caddy waits for the PATCH in flight while it stops; the proxy
			// then breaks it off, as the client's network would.
			time.Sleep(300 * time.Millisecond)
			return done
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "data")
			s := startServer(t, serverOptions{root: root})
			proxy := startCutProxy(t, s.URL)
			const size, chunk = 10 << 20, 1 << 20
			content := randomBytes(t, size)
			file := tempFile(t, content)
			downs := make(chan (<-chan struct{}), 1)
			proxy.arm(5*chunk+777, func() { downs <- tt.down(s) })
			first := runTusClient(t, "einstein", tusOptions{
				Endpoint:  proxy.URL + "/webdav/",
				File:      file,
				Metadata:  map[string]string{"filename": "restart.bin"},
				ChunkSize: chunk,
			})
			if _, trips := proxy.stats(); trips != 1 {
				t.Fatalf("the proxy tripped %d times, want 1", trips)
			}
			<-<-downs
			if first.success {
				t.Fatal("the upload finished although the server went down in the middle")
			}
			if first.accepted < chunk {
				t.Fatalf("acknowledged %d bytes before the server went down, want at least one chunk (%s)", first.accepted, first.failure)
			}

			s = startServer(t, serverOptions{root: root})
			proxy.retarget(s.URL)
			c := newClient(t, s.URL, "einstein")
			upload := uploadPath(t, s.URL, first.url)
			offset := wantOffset(t, c, upload, size)
			t.Logf("%d bytes acknowledged before the server went down, HEAD reports %d after the restart", first.accepted, offset)
			if offset < first.accepted || offset >= size {
				t.Fatalf("HEAD after the restart: Upload-Offset %d, want from the %d bytes acknowledged to less than %d", offset, first.accepted, size)
			}
			if resp, _ := c.do(http.MethodGet, "/webdav/restart.bin", ""); resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET of the unfinished upload's target: %d, want 404", resp.StatusCode)
			}

			second := runTusClient(t, "einstein", tusOptions{
				UploadURL: first.url,
				File:      file,
				Metadata:  map[string]string{"filename": "restart.bin"},
				ChunkSize: chunk,
			})
			if !second.success {
				t.Fatalf("resuming failed: %s", second.failure)
			}
			if left := size - offset; second.chunks > int((left+chunk-1)/chunk) {
				t.Errorf("resumed with %d chunks for the %d bytes left: not from the offset HEAD reported", second.chunks, left)
			}
			wantUploaded(t, c, "/webdav/restart.bin", content)
		})
	}
}

// wantOffset asks for an upload's offset and checks the HEAD answer.
func wantOffset(t testing.TB, c *client, upload string, length int64) int64 {
	t.Helper()
	resp, err := c.tusHead(upload)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		t.Fatalf("HEAD %s: %d, want 200 or 204", upload, resp.StatusCode)
	}
	if got := resp.Header.Get("Upload-Length"); got != strconv.FormatInt(length, 10) {
		t.Errorf("HEAD %s: Upload-Length %q, want %d", upload, got, length)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("HEAD %s: Cache-Control %q, want no-store", upload, got)
	}
	if got := resp.Header.Get("Tus-Resumable"); got != tusResumable {
		t.Errorf("HEAD %s: Tus-Resumable %q", upload, got)
	}
	offset, err := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil {
		t.Fatalf("HEAD %s: Upload-Offset %q", upload, resp.Header.Get("Upload-Offset"))
	}
	return offset
}

// TestTusParallelUploads: 50 uploads at once, each created with its first
// bytes and finished in PATCHes, all end up intact.
func TestTusParallelUploads(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/parallel", "")
	const uploads, size, chunk = 50, 1 << 20, 256 << 10
	contents := make([][]byte, uploads)
	for i := range contents {
		contents[i] = randomBytes(t, size)
	}
	errs := make(chan error, uploads)
	for i := range uploads {
		go func() {
			errs <- tusUploadInChunks(c, s.URL, "/webdav/parallel", fmt.Sprintf("f%02d.bin", i), contents[i], chunk)
		}()
	}
	for range uploads {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	for i, content := range contents {
		wantUploaded(t, c, fmt.Sprintf("/webdav/parallel/f%02d.bin", i), content)
	}
}

// tusUploadInChunks uploads content as name: the first chunk with the
// creation, the rest in PATCHes. The last answer names the new file.
func tusUploadInChunks(c *client, base, collection, name string, content []byte, chunk int) error {
	resp, body, err := c.tusCreate(collection, name, int64(len(content)), content[:chunk])
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%s: POST: %d %s", name, resp.StatusCode, body)
	}
	b, _ := url.Parse(base)
	loc, err := b.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return fmt.Errorf("%s: POST: Location %q", name, resp.Header.Get("Location"))
	}
	upload := loc.RequestURI()
	if got := resp.Header.Get("Upload-Offset"); got != strconv.Itoa(chunk) {
		return fmt.Errorf("%s: POST with %d bytes: Upload-Offset %q", name, chunk, got)
	}
	for off := chunk; off < len(content); off += chunk {
		resp, body, err := c.tusPatch(upload, int64(off), content[off:off+chunk])
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Upload-Offset") != strconv.Itoa(off+chunk) {
			return fmt.Errorf("%s: PATCH at %d: %d, Upload-Offset %q\n%s", name, off, resp.StatusCode, resp.Header.Get("Upload-Offset"), body)
		}
		if off+chunk == len(content) {
			for _, h := range []string{"OC-FileId", "OC-ETag", "ETag", "Last-Modified"} {
				if resp.Header.Get(h) == "" {
					return fmt.Errorf("%s: the last PATCH's answer has no %s: %v", name, h, resp.Header)
				}
			}
		}
	}
	return nil
}

// TestTusUploadsArePerUser: another user can neither see, continue nor end
// an upload (404, as for anything they may not know of), anonymous requests
// get 401, and the owner's upload is unchanged by their attempts.
func TestTusUploadsArePerUser(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	owner := newClient(t, s.URL, "einstein")
	resp, body, err := owner.tusCreate("/webdav/", "mine.txt", 10, []byte("0123"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d\n%s", resp.StatusCode, body)
	}
	upload := uploadPath(t, s.URL, resp.Header.Get("Location"))

	for _, user := range []string{"marie", "richard"} {
		other := newClient(t, s.URL, user)
		for _, req := range []struct {
			method string
			header map[string]string
			body   []byte
		}{
			{method: http.MethodHead, header: map[string]string{"Tus-Resumable": tusResumable}},
			{method: http.MethodPatch, header: map[string]string{"Tus-Resumable": tusResumable, "Upload-Offset": "4", "Content-Type": "application/offset+octet-stream"}, body: []byte("XXXXXX")},
			{method: http.MethodDelete, header: map[string]string{"Tus-Resumable": tusResumable}},
		} {
			resp, body := other.send(req.method, upload, req.header, req.body)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s's %s of einstein's upload: %d, want 404\n%s", user, req.method, resp.StatusCode, body)
			}
		}
	}
	anonymous := newClient(t, s.URL, "")
	if resp, _ := anonymous.do(http.MethodHead, upload, "", "Tus-Resumable", tusResumable); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous HEAD of the upload: %d, want 401", resp.StatusCode)
	}

	if offset := wantOffset(t, owner, upload, 10); offset != 4 {
		t.Fatalf("einstein's upload at offset %d after the others' attempts, want 4", offset)
	}
	resp, body, err = owner.tusPatch(upload, 4, []byte("456789"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("einstein's last PATCH: %d\n%s", resp.StatusCode, body)
	}
	wantUploaded(t, owner, "/webdav/mine.txt", []byte("0123456789"))
	for _, user := range []string{"marie", "richard"} {
		if resp, _ := newClient(t, s.URL, user).do(http.MethodGet, "/webdav/mine.txt", ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s's GET of mine.txt in their own space: %d, want 404", user, resp.StatusCode)
		}
	}
}

// TestTusUploadTTL: the Caddyfile's upload_ttl sets Upload-Expires, an HTTP
// date that long after the creation; OPTIONS through Caddy advertises TUS.
func TestTusUploadTTL(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{davspaces: []string{"upload_ttl 2h"}})
	c := newClient(t, s.URL, "einstein")
	resp, _ := c.expect(http.StatusNoContent, http.MethodOptions, "/webdav/", "")
	if got := resp.Header.Get("Tus-Resumable"); got != tusResumable {
		t.Errorf("OPTIONS: Tus-Resumable %q, want %s", got, tusResumable)
	}
	created := time.Now()
	resp, body, err := c.tusCreate("/webdav/", "ttl.txt", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d\n%s", resp.StatusCode, body)
	}
	expires, err := http.ParseTime(resp.Header.Get("Upload-Expires"))
	if err != nil {
		t.Fatalf("Upload-Expires %q is no HTTP date: %v", resp.Header.Get("Upload-Expires"), err)
	}
	if want := created.Add(2 * time.Hour); expires.Before(want.Add(-time.Minute)) || expires.After(want.Add(time.Minute)) {
		t.Errorf("Upload-Expires %s, want about %s (upload_ttl 2h)", expires, want.UTC())
	}
}

// TestTusCORS: the example's CORS snippet lets a browser client of an
// allowed origin upload with TUS: the preflight allows POST and PATCH with
// the TUS headers, and the answers expose the headers the client reads.
func TestTusCORS(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	const origin = "https://localhost:9200"
	anonymous := newClient(t, s.URL, "")
	for _, method := range []string{http.MethodPost, http.MethodPatch, http.MethodHead, http.MethodDelete} {
		resp, _ := anonymous.do(http.MethodOptions, "/webdav/", "", "Origin", origin, "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", "authorization, tus-resumable, upload-length, upload-metadata, upload-offset, upload-checksum, upload-defer-length, content-type")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("preflight for %s: %d", method, resp.StatusCode)
		}
		if allowed := listHeader(resp.Header, "Access-Control-Allow-Methods", strings.Clone); !allowed[method] {
			t.Errorf("preflight for %s: Access-Control-Allow-Methods %q", method, resp.Header.Get("Access-Control-Allow-Methods"))
		}
		allowed := listHeader(resp.Header, "Access-Control-Allow-Headers", http.CanonicalHeaderKey)
		for _, h := range []string{"Tus-Resumable", "Upload-Length", "Upload-Metadata", "Upload-Offset", "Upload-Checksum", "Upload-Defer-Length", "Content-Type"} {
			if !allowed[h] {
				t.Errorf("preflight for %s: Access-Control-Allow-Headers %q lacks %s", method, resp.Header.Get("Access-Control-Allow-Headers"), h)
			}
		}
	}
	c := newClient(t, s.URL, "einstein")
	resp, _ := c.do("PROPFIND", "/webdav/", "", "Origin", origin, "Depth", "0")
	exposed := listHeader(resp.Header, "Access-Control-Expose-Headers", http.CanonicalHeaderKey)
	for _, h := range []string{"Location", "Upload-Offset", "Upload-Length", "Upload-Expires", "Tus-Resumable", "Tus-Version", "Tus-Extension", "Tus-Max-Size", "Tus-Checksum-Algorithm", "Oc-Fileid", "Oc-Etag"} {
		if !exposed[http.CanonicalHeaderKey(h)] {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", resp.Header.Get("Access-Control-Expose-Headers"), h)
		}
	}
}

// TestTusClientWholeFileChecksum: a checksum of the whole file in the
// metadata is checked when the last byte arrives: a match gives the file,
// a mismatch 460 and no file.
func TestTusClientWholeFileChecksum(t *testing.T) {
	t.Parallel()
	requireTusClient(t)
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	content := randomBytes(t, 3<<20)
	file := tempFile(t, content)
	tests := []struct {
		name     string
		checksum string
		status   int // 0: success
	}{
		{name: "matching SHA1", checksum: "SHA1 " + sha1Hex(content)},
		{name: "matching MD5 written with a colon", checksum: "md5:" + md5Hex(content)},
		{name: "mismatching SHA1", checksum: "SHA1 " + sha1Hex([]byte("something else")), status: 460},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.in(t)
			name := fmt.Sprintf("checked-%d.bin", i)
			res := runTusClient(t, "einstein", tusOptions{
				Endpoint:  s.URL + "/webdav/",
				File:      file,
				Metadata:  map[string]string{"filename": name, "checksum": tt.checksum},
				ChunkSize: 1 << 20,
			})
			if tt.status == 0 {
				if !res.success {
					t.Fatalf("upload failed: %s", res.failure)
				}
				wantUploaded(t, c, "/webdav/"+name, content)
				return
			}
			if res.success || !strings.HasPrefix(res.failure, fmt.Sprintf("status %d:", tt.status)) {
				t.Fatalf("upload with checksum %q: success=%v %s, want status %d", tt.checksum, res.success, res.failure, tt.status)
			}
			if resp, _ := c.do(http.MethodGet, "/webdav/"+name, ""); resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET after the mismatch: %d, want 404", resp.StatusCode)
			}
			resp, err := c.tusHead(uploadPath(t, s.URL, res.url))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("HEAD of the upload after the mismatch: %d, want 404 (the upload ended)", resp.StatusCode)
			}
		})
	}
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}
