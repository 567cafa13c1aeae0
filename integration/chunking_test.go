package integration

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/internal/testidp"
)

// Chunked uploads through the real Caddy, signed in with access tokens of
// the test OpenID Connect provider: Nextcloud's chunking NG below
// /remote.php/dav/uploads/{user}/{transfer} and ownCloud's v1 chunks
// (OC-Chunked). The provider's users are alice (who uploads), bob and
// carol (who try to meddle).

// chunkEnv is a Caddy that trusts the test provider, and its users.
type chunkEnv struct {
	s     *server
	alice *client
	// others, by name, are users who are no member of alice's space.
	others map[string]*client
}

func startChunkEnv(t *testing.T, opts serverOptions) *chunkEnv {
	t.Helper()
	idp := testidp.Start(t, testidp.Options{})
	opts.issuer = idp.Issuer
	s := startServer(t, opts)
	bearer := func(user string) *client {
		return &client{t: t, base: s.URL, token: idp.Token(t, user), http: &http.Client{Timeout: time.Minute}}
	}
	return &chunkEnv{s: s, alice: bearer("alice"), others: map[string]*client{"bob": bearer("bob"), "carol": bearer("carol")}}
}

// ngUpload is the escaped path of an NG upload, or of a part of it.
func ngUpload(user, transfer string, part ...string) string {
	return strings.Join(append([]string{"/remote.php/dav/uploads", user, transfer}, part...), "/")
}

// ngPart is one part of an NG upload: its name and bytes.
type ngPart struct {
	name  string
	bytes []byte
}

// splitParts cuts content into parts of size bytes named as Nextcloud
// names them: numbers from 1, padded to five digits.
func splitParts(content []byte, size int) []ngPart {
	var parts []ngPart
	for off := 0; off < len(content); off += size {
		end := min(off+size, len(content))
		parts = append(parts, ngPart{name: fmt.Sprintf("%05d", len(parts)+1), bytes: content[off:end]})
	}
	return parts
}

// putPartsInPairs sends parts two at a time, in the order given.
func (c *client) putPartsInPairs(upload string, parts []ngPart, header map[string]string) {
	c.t.Helper()
	for i := 0; i < len(parts); i += 2 {
		pair := parts[i:min(i+2, len(parts))]
		errs := make(chan error, len(pair))
		for _, p := range pair {
			go func() { errs <- c.tryPart(upload+"/"+p.name, p.bytes, header) }()
		}
		for range pair {
			if err := <-errs; err != nil {
				c.t.Fatal(err)
			}
		}
	}
}

// tryPart stores one part; it may run in a goroutine of its own.
func (c *client) tryPart(path string, body []byte, header map[string]string) error {
	resp, b, err := c.try(http.MethodPut, path, header, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %d, want 201\n%s", path, resp.StatusCode, b)
	}
	return nil
}

// startNGUpload creates an upload and stores its parts one after the other.
func (c *client) startNGUpload(upload string, parts ...ngPart) {
	c.t.Helper()
	c.expect(http.StatusCreated, "MKCOL", upload, "")
	for _, p := range parts {
		if err := c.tryPart(upload+"/"+p.name, p.bytes, nil); err != nil {
			c.t.Fatal(err)
		}
	}
}

// wantGone checks that an NG upload no longer exists for its owner.
func (c *client) wantGone(upload string) {
	c.t.Helper()
	if resp, body := c.do("PROPFIND", upload+"/", "", "Depth", "1"); resp.StatusCode != http.StatusNotFound {
		c.t.Errorf("PROPFIND of the upload %s afterwards: %d, want 404\n%s", upload, resp.StatusCode, tail(body, 500))
	}
}

// ocChecksum is the OC-Checksum header of content's SHA1.
func ocChecksum(content []byte) string { return "SHA1:" + sha1Hex(content) }

// TestChunkAnonymousRequests: every NG request and a v1 chunk without
// credentials is refused with 401 and the WebDAV error body, and changes
// nothing.
func TestChunkAnonymousRequests(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{})
	upload := ngUpload("alice", "anon-1")
	e.alice.startNGUpload(upload, ngPart{"00001", []byte("kept")})
	before := e.alice.snapshot("/webdav/")
	dest := e.s.URL + "/remote.php/dav/files/alice/anon.bin"
	anonymous := newClient(t, e.s.URL, "")
	tests := []struct {
		name, method, path, body string
		header                   []string
	}{
		{name: "MKCOL of a new upload", method: "MKCOL", path: ngUpload("alice", "anon-2")},
		{name: "MKCOL of an existing upload", method: "MKCOL", path: upload},
		{name: "PUT of a part", method: http.MethodPut, path: upload + "/00002", body: "stolen", header: []string{"OC-Total-Length", "10"}},
		{name: "PUT of an existing part", method: http.MethodPut, path: upload + "/00001", body: "lost"},
		{name: "PROPFIND of the upload", method: "PROPFIND", path: upload + "/", header: []string{"Depth", "1"}},
		{name: "PROPFIND of a part", method: "PROPFIND", path: upload + "/00001", header: []string{"Depth", "0"}},
		{name: "MOVE .file", method: "MOVE", path: upload + "/.file", header: []string{"Destination", dest, "OC-Total-Length", "4"}},
		{name: "DELETE of the upload", method: http.MethodDelete, path: upload},
		{name: "PUT of a part below /dav", method: http.MethodPut, path: strings.TrimPrefix(upload, "/remote.php") + "/00003", body: "stolen"},
		{name: "v1 chunk", method: http.MethodPut, path: "/remote.php/webdav/v1.bin-chunking-4711-2-0", body: "half", header: []string{"OC-Chunked", "1", "OC-Total-Length", "8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := anonymous.in(t).do(tt.method, tt.path, tt.body, tt.header...)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s %s without credentials: %d, want 401\n%s", tt.method, tt.path, resp.StatusCode, body)
			}
			wantDAVError(t, body, "NotAuthenticated")
		})
	}
	if diff := snapshotDiff(before, e.alice.snapshot("/webdav/")); diff != "" {
		t.Errorf("anonymous requests changed the space:\n%s", diff)
	}
	wantPartSizes(t, e.alice, upload, map[string]string{"00001": "4"})
}

// wantPartSizes checks the parts an NG upload lists, by name.
func wantPartSizes(t testing.TB, c *client, upload string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, r := range c.propfind(upload+"/", "1", "") {
		if name := strings.TrimSuffix(r.href, "/"); name != strings.TrimSuffix(upload, "/") {
			got[pathBase(name)] = r.props["DAV: getcontentlength"]
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parts of %s: %v, want %v", upload, got, want)
	}
}

// TestChunkNGRoundTrip: a multi-MB file in parts sent out of order, two at
// a time, assembled with its size, checksum and mtime: the file has them,
// and the upload is gone.
func TestChunkNGRoundTrip(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{})
	c := e.alice
	c.expect(http.StatusCreated, "MKCOL", "/webdav/big", "")
	content := randomBytes(t, 6<<20+12345)
	parts := splitParts(content, 1<<20)
	outOfOrder := []ngPart{parts[6], parts[2], parts[0], parts[5], parts[3], parts[1], parts[4]}
	if len(outOfOrder) != len(parts) {
		t.Fatalf("%d parts, the test sends 7", len(parts))
	}
	dest := e.s.URL + "/remote.php/dav/files/alice/big/ng.bin"
	total := strconv.Itoa(len(content))
	upload := ngUpload("alice", "web-file-upload-"+uuid.NewString())
	// Nextcloud names the Destination and the total on every request.
	header := map[string]string{"Destination": dest, "OC-Total-Length": total}
	if resp, body := c.send("MKCOL", upload, header, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("MKCOL %s: %d, want 201\n%s", upload, resp.StatusCode, body)
	}
	c.putPartsInPairs(upload, outOfOrder, header)

	resp, body := c.expect(http.StatusCreated, "MOVE", upload+"/.file", "",
		"Destination", dest, "OC-Total-Length", total, "OC-Checksum", ocChecksum(content), "X-OC-Mtime", "1700000000")
	for _, h := range []string{"ETag", "OC-ETag", "OC-FileId", "OC-Perm"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("MOVE .file: no %s header: %v\n%s", h, resp.Header, body)
		}
	}
	if got := resp.Header.Get("X-OC-Mtime"); got != "accepted" {
		t.Errorf("MOVE .file: X-OC-Mtime %q, want accepted", got)
	}
	wantUploaded(t, c, "/webdav/big/ng.bin", content)

	listing := c.propfind("/webdav/big/", "1", "")
	entry := findEntry(listing, "/ng.bin")
	if entry == nil {
		t.Fatalf("PROPFIND of the folder does not list ng.bin: %v", listing)
	}
	if got := entry.props["DAV: getlastmodified"]; got != "Tue, 14 Nov 2023 22:13:20 GMT" {
		t.Errorf("getlastmodified %q, want the X-OC-Mtime sent (1700000000)", got)
	}
	if got := entry.props[ocNS+" checksums"]; !strings.Contains(got, ocChecksum(content)) {
		t.Errorf("oc:checksums %q lacks the OC-Checksum sent, %s", got, ocChecksum(content))
	}
	c.wantGone(upload)
}

// findEntry is the response of a multistatus whose href ends in suffix.
func findEntry(responses []davResponse, suffix string) *davResponse {
	for i := range responses {
		if strings.HasSuffix(responses[i].href, suffix) {
			return &responses[i]
		}
	}
	return nil
}

// TestChunkNGReplaceWithIf: an upload replaces a file when the MOVE's If
// header names the file's etag, as Nextcloud sends it (the absolute URL of
// the Destination); with a stale etag it is refused and the file unchanged.
func TestChunkNGReplaceWithIf(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{})
	c := e.alice
	const dest = "/remote.php/dav/files/alice/replaced.txt"
	resp, _ := c.expect(http.StatusCreated, http.MethodPut, dest, "first version")
	stale := resp.Header.Get("ETag")
	if stale == "" {
		t.Fatal("PUT answered no ETag")
	}
	ifEtag := func(etag string) string { return "<" + e.s.URL + dest + "> ([" + etag + "])" }

	second := []byte("second version, sent in parts")
	upload := ngUpload("alice", "replace-1")
	c.startNGUpload(upload, splitParts(second, 7)...)
	resp, body := c.expect(http.StatusNoContent, "MOVE", upload+"/.file", "",
		"Destination", e.s.URL+dest, "OC-Total-Length", strconv.Itoa(len(second)), "If", ifEtag(stale))
	if resp.Header.Get("ETag") == "" || resp.Header.Get("ETag") == stale {
		t.Errorf("MOVE .file over the file: ETag %q, want a new one (was %s)\n%s", resp.Header.Get("ETag"), stale, body)
	}
	wantUploaded(t, c, "/webdav/replaced.txt", second)
	c.wantGone(upload)

	upload = ngUpload("alice", "replace-2")
	c.startNGUpload(upload, ngPart{"00001", []byte("never seen")})
	_, body = c.expect(http.StatusPreconditionFailed, "MOVE", upload+"/.file", "",
		"Destination", e.s.URL+dest, "If", ifEtag(stale))
	wantDAVError(t, body, "PreconditionFailed")
	wantUploaded(t, c, "/webdav/replaced.txt", second)
	c.wantGone(upload)
}

// TestChunkV1Parallel: ownCloud v1 chunks of one file, all but the last
// at once, then the last: only the answer that completes the file has an
// ETag, the file has the bytes, and no chunk ever shows in the space.
func TestChunkV1Parallel(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{davspaces: []string{"depth_infinity"}})
	c := e.alice
	c.expect(http.StatusCreated, "MKCOL", "/remote.php/webdav/v1", "")
	content := randomBytes(t, 5<<20+999)
	chunks := splitParts(content, 1<<20)
	header := func(last bool) map[string]string {
		h := map[string]string{"OC-Chunked": "1", "OC-Total-Length": strconv.Itoa(len(content)), "X-OC-Mtime": "1700000000"}
		if last {
			// The client sends the whole file's checksum with the chunk it
			// sends last.
			h["OC-Checksum"] = ocChecksum(content)
		}
		return h
	}
	chunkPath := func(i int) string {
		return fmt.Sprintf("/remote.php/webdav/v1/file.bin-chunking-4711-%d-%d", len(chunks), i)
	}

	errs := make(chan error, len(chunks)-1)
	for i, chunk := range chunks[:len(chunks)-1] {
		go func() { errs <- c.tryV1Chunk(chunkPath(i), chunk.bytes, header(false), false) }()
	}
	for range len(chunks) - 1 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	last := len(chunks) - 1
	if err := c.tryV1Chunk(chunkPath(last), chunks[last].bytes, header(true), true); err != nil {
		t.Fatal(err)
	}
	wantUploaded(t, c, "/webdav/v1/file.bin", content)
	for _, r := range c.propfind("/webdav/", "infinity", "") {
		if strings.Contains(r.href, "-chunking-") {
			t.Errorf("PROPFIND Depth infinity lists a chunk: %s", r.href)
		}
	}
}

// tryV1Chunk stores one v1 chunk: 201, with an ETag exactly when it
// completes the file.
func (c *client) tryV1Chunk(path string, body []byte, header map[string]string, completes bool) error {
	resp, b, err := c.try(http.MethodPut, path, header, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %d, want 201\n%s", path, resp.StatusCode, b)
	}
	if etag := resp.Header.Get("ETag"); (etag != "") != completes {
		return fmt.Errorf("PUT %s: ETag %q, completing the file %v: only the chunk that completes it has one", path, etag, completes)
	}
	return nil
}

// TestChunkUploadsArePerUser: other users meddling with alice's upload,
// by its URL or by its transfer id under their own name, get the 404 of
// an unknown transfer, byte for byte; alice's upload is unchanged and
// still assembles.
func TestChunkUploadsArePerUser(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{})
	const transfer = "shared-transfer-id"
	upload := ngUpload("alice", transfer)
	e.alice.startNGUpload(upload, ngPart{"00001", []byte("alice's ")})
	before := e.alice.snapshot("/webdav/")
	stolen := e.s.URL + "/remote.php/dav/files/alice/stolen.txt"

	requests := []struct {
		method, part, body string
		header             []string
	}{
		{method: "MKCOL"},
		{method: http.MethodPut, part: "00002", body: "meddled"},
		{method: http.MethodPut, part: "00001", body: "replaced"},
		{method: "PROPFIND", header: []string{"Depth", "1"}},
		{method: "PROPFIND", part: "00001", header: []string{"Depth", "0"}},
		{method: "MOVE", part: ".file", header: []string{"Destination", stolen}},
		{method: http.MethodDelete},
	}
	for user, other := range e.others {
		unknown := uuid.NewString()
		for _, req := range requests {
			owners := map[string]string{"alice's": "alice"}
			if req.method != "MKCOL" {
				// Their own namespace: the transfer id is alice's, the
				// upload is not theirs. (A MKCOL there starts their own.)
				owners["their own"] = user
			}
			for label, owner := range owners {
				name := strings.TrimSpace(fmt.Sprintf("%s/%s/%s %s", user, label, req.method, req.part))
				t.Run(name, func(t *testing.T) {
					c := other.in(t)
					resp, body := c.do(req.method, ngPath(owner, unknown, req.part), req.body, req.header...)
					if resp.StatusCode != http.StatusNotFound {
						t.Fatalf("%s of an unknown transfer: %d, want 404\n%s", req.method, resp.StatusCode, body)
					}
					want := newAnswer(resp, []byte(body))
					resp, body = c.do(req.method, ngPath(owner, transfer, req.part), req.body, req.header...)
					want.check(t, req.method+" of alice's upload", resp, []byte(body))
				})
			}
		}
	}

	if diff := snapshotDiff(before, e.alice.snapshot("/webdav/")); diff != "" {
		t.Errorf("the other users changed alice's space:\n%s", diff)
	}
	wantPartSizes(t, e.alice, upload, map[string]string{"00001": "8"})
	if err := e.alice.tryPart(upload+"/00002", []byte("own file"), nil); err != nil {
		t.Fatal(err)
	}
	e.alice.expect(http.StatusCreated, "MOVE", upload+"/.file", "", "Destination", e.s.URL+"/remote.php/dav/files/alice/own.txt")
	wantUploaded(t, e.alice, "/webdav/own.txt", []byte("alice's own file"))
}

// ngPath is ngUpload with an optional part.
func ngPath(user, transfer, part string) string {
	if part == "" {
		return ngUpload(user, transfer)
	}
	return ngUpload(user, transfer, part)
}

// TestChunkNGRefusedAssembly: an assembly that does not add up is a 400:
// nothing appears in the space, and the upload is gone.
func TestChunkNGRefusedAssembly(t *testing.T) {
	t.Parallel()
	e := startChunkEnv(t, serverOptions{})
	c := e.alice
	content := randomBytes(t, 3<<20)
	parts := splitParts(content, 1<<20)
	dest := e.s.URL + "/remote.php/dav/files/alice/refused.bin"
	total := strconv.Itoa(len(content))
	tests := []struct {
		name   string
		parts  []ngPart
		header []string
	}{
		{name: "OC-Total-Length too large", parts: parts, header: []string{"OC-Total-Length", strconv.Itoa(len(content) + 1)}},
		{name: "OC-Total-Length too small", parts: parts, header: []string{"OC-Total-Length", strconv.Itoa(len(content) - 1)}},
		{name: "wrong OC-Checksum", parts: parts, header: []string{"OC-Total-Length", total, "OC-Checksum", ocChecksum(content[1:])}},
		{name: "a part missing", parts: []ngPart{parts[0], parts[2]}, header: []string{"OC-Total-Length", total}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.in(t)
			before := c.snapshot("/webdav/")
			upload := ngUpload("alice", fmt.Sprintf("refused-%d", i))
			c.startNGUpload(upload, tt.parts...)
			_, body := c.expect(http.StatusBadRequest, "MOVE", upload+"/.file", "", append([]string{"Destination", dest}, tt.header...)...)
			wantDAVError(t, body, "BadRequest")
			if diff := snapshotDiff(before, c.snapshot("/webdav/")); diff != "" {
				t.Errorf("a refused assembly changed the space:\n%s", diff)
			}
			c.wantGone(upload)
		})
	}
}
