package davhandler

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// withChunks offers chunked uploads, kept by the env's own store.
func withChunks(cfg *Config) {
	cfg.Chunks = cfg.Store.(storage.ChunkedUploads)
}

// ngPath is the path of einstein's NG upload transfer, or of one of its parts.
func ngPath(user, transfer string, part ...string) string {
	return strings.Join(append([]string{"/remote.php/dav/uploads/" + user + "/" + transfer}, part...), "/")
}

func sha1Header(content string) string {
	sum := sha1.Sum([]byte(content))
	return "SHA1:" + hex.EncodeToString(sum[:])
}

// tree lists every path of a space, folders with a trailing slash.
func tree(t testing.TB, e *env, spaceID string) []string {
	t.Helper()
	var out []string
	var walk func(folderID, prefix string)
	walk = func(folderID, prefix string) {
		nodes, err := e.store.ReadDir(context.Background(), spaceID, folderID, "", 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.IsFolder() {
				out = append(out, prefix+n.Name+"/")
				walk(n.ID, prefix+n.Name+"/")
				continue
			}
			out = append(out, prefix+n.Name)
		}
	}
	walk(spaceID, "")
	return out
}

// personalTree lists the paths of a user's personal space.
func personalTree(t testing.TB, e *env, user string) []string {
	t.Helper()
	space, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user})
	if err != nil {
		t.Fatal(err)
	}
	return tree(t, e, space.ID)
}

func wantTree(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("space holds %q, want %q", got, want)
	}
}

// ngUpload starts an NG upload as einstein and stores its parts.
func ngUpload(t testing.TB, e *env, transfer string, parts ...string) {
	t.Helper()
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", transfer), ""), http.StatusCreated)
	for i := 0; i+1 < len(parts); i += 2 {
		wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", transfer, parts[i]), parts[i+1]), http.StatusCreated)
	}
}

// partSizes reads the parts an upload's Depth 1 listing shows, by name.
func partSizes(t testing.TB, e *env, user, transfer string) map[string]string {
	t.Helper()
	rec := e.do(user, "PROPFIND", ngPath(user, transfer), "", "Depth", "1")
	out := map[string]string{}
	for _, r := range parseMultistatus(t, rec)[1:] {
		out[r.Href[strings.LastIndexByte(r.Href, '/')+1:]] = r.Props["DAV: getcontentlength"]
	}
	return out
}

func TestNaturalCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int // sign
	}{
		{"1", "2", -1},
		{"2", "10", -1},
		{"10", "02", 1},
		{"0000000000000010", "9", 1},
		{"000000000000000-000000010485759", "000000010485760-000000020971519", -1},
		{"5-9", "5-10", -1},
		{"a2", "a10", -1},
		{"a", "b", -1},
		{"7", "7", 0},
		{"07", "7", -1}, // equal values: by text
		{"99999999999999999999999", "100000000000000000000000", -1},
		{"1", "1a", -1},
	}
	for _, tt := range tests {
		got := naturalCompare(tt.a, tt.b)
		if sign(got) != tt.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
		if back := naturalCompare(tt.b, tt.a); sign(back) != -tt.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want sign %d", tt.b, tt.a, back, -tt.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// TestChunkingNG: the upload a Nextcloud client makes — parts out of
// order, a listing to resume from, the MOVE that assembles them.
func TestChunkingNG(t *testing.T) {
	e := newEnv(t, withChunks)
	upload := ngPath("einstein", "1001")
	wantStatus(t, e.do("einstein", "MKCOL", upload, "", "OC-Total-Length", "19"), http.StatusCreated)
	wantError(t, e.do("einstein", "MKCOL", upload, ""), http.StatusMethodNotAllowed, "MethodNotAllowed", msgExists)
	// Padding differs on purpose: the order is the numbers'.
	parts := []struct{ name, content string }{
		{"0000000000000014", "world"},
		{"0", "hello "},
		{"006", "chunked "},
	}
	for _, p := range parts {
		rec := e.do("einstein", http.MethodPut, upload+"/"+p.name, p.content, "OC-Checksum", sha1Header(p.content))
		wantStatus(t, rec, http.StatusCreated)
		wantHeader(t, rec, "ETag", "")
	}
	wantTree(t, personalTree(t, e, "einstein"))

	listing := parseMultistatus(t, e.do("einstein", "PROPFIND", upload, "", "Depth", "1"))
	var hrefs []string
	for _, r := range listing {
		hrefs = append(hrefs, r.Href)
		if !etagPattern.MatchString(r.Props["DAV: getetag"]) {
			t.Fatalf("%s: etag %q", r.Href, r.Props["DAV: getetag"])
		}
	}
	wantTree(t, hrefs, upload+"/", upload+"/0", upload+"/006", upload+"/0000000000000014")
	if rt := listing[0].Props["DAV: resourcetype"]; rt != "<d:collection/>" {
		t.Fatalf("upload resourcetype %q", rt)
	}
	if got := partSizes(t, e, "einstein", "1001"); got["006"] != "8" || got["0"] != "6" || got["0000000000000014"] != "5" {
		t.Fatalf("part sizes %v", got)
	}
	if n := len(parseMultistatus(t, e.do("einstein", "PROPFIND", upload, "", "Depth", "0"))); n != 1 {
		t.Fatalf("Depth 0 lists %d entries", n)
	}
	one := parseMultistatus(t, e.do("einstein", "PROPFIND", upload+"/006", "", "Depth", "0"))
	if len(one) != 1 || one[0].Props["DAV: getcontentlength"] != "8" {
		t.Fatalf("part listing %+v", one)
	}

	content := "hello chunked world"
	rec := e.do("einstein", "MOVE", upload+"/.file", "",
		"Destination", "/remote.php/dav/files/einstein/big.bin",
		"OC-Total-Length", "19", "OC-Checksum", sha1Header(content), "X-OC-Mtime", "1700000000")
	wantStatus(t, rec, http.StatusCreated)
	for _, name := range []string{"ETag", "OC-ETag", "OC-FileId"} {
		if rec.Header().Get(name) == "" {
			t.Fatalf("no %s header", name)
		}
	}
	wantHeader(t, rec, "OC-Perm", "RDNVWZP")
	wantHeader(t, rec, "X-OC-Mtime", "accepted")
	wantContent(t, e, "/webdav/big.bin", content)
	get := e.do("einstein", http.MethodGet, "/webdav/big.bin", "")
	wantHeader(t, get, "OC-Checksum", sha1Header(content))
	wantHeader(t, get, "Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT")
	wantTree(t, personalTree(t, e, "einstein"), "big.bin")
	wantStatus(t, e.do("einstein", "PROPFIND", upload, "", "Depth", "1"), http.StatusNotFound)

	// A second upload replaces the file; the client's If header names
	// the destination's etag.
	ngUpload(t, e, "1002", "1", "new ", "2", "bytes")
	rec = e.do("einstein", "MOVE", ngPath("einstein", "1002", ".file"), "",
		"Destination", "https://example.com/remote.php/dav/files/einstein/big.bin",
		"If", "</remote.php/dav/files/einstein/big.bin> (["+get.Header().Get("ETag")+"])")
	wantStatus(t, rec, http.StatusNoContent)
	wantContent(t, e, "/webdav/big.bin", "new bytes")

	ngUpload(t, e, "1003", "1", "dropped")
	wantStatus(t, e.do("einstein", http.MethodDelete, ngPath("einstein", "1003"), ""), http.StatusNoContent)
	wantStatus(t, e.do("einstein", http.MethodDelete, ngPath("einstein", "1003"), ""), http.StatusNotFound)
	wantTree(t, personalTree(t, e, "einstein"), "big.bin")
}

// TestChunkingNGResume: a Nextcloud client resuming an upload lists its
// parts, deletes those it will not reuse (after a gap, or stale), sends
// the missing ones and assembles the file without the deleted ones.
func TestChunkingNGResume(t *testing.T) {
	e := newEnv(t, withChunks)
	upload := ngPath("einstein", "1")
	// The first attempt stopped with a gap where part 2 belongs.
	ngUpload(t, e, "1", "1", "hello ", "3", "stale", "4", "left over")
	for _, part := range []string{"3", "4"} {
		wantStatus(t, e.do("einstein", "DELETE", upload+"/"+part, ""), http.StatusNoContent)
		wantStatus(t, e.do("einstein", "PROPFIND", upload+"/"+part, "", "Depth", "0"), http.StatusNotFound)
	}
	wantError(t, e.do("einstein", "DELETE", upload+"/4", ""), http.StatusNotFound, "NotFound", msgNotFound)
	if got := partSizes(t, e, "einstein", "1"); len(got) != 1 || got["1"] != "6" {
		t.Fatalf("parts after the deletes %v, want 1 alone", got)
	}
	for _, p := range []struct{ name, content string }{{"2", "chunked "}, {"3", "world"}} {
		wantStatus(t, e.do("einstein", http.MethodPut, upload+"/"+p.name, p.content, "OC-Total-Length", "19"), http.StatusCreated)
	}
	content := "hello chunked world"
	rec := e.do("einstein", "MOVE", upload+"/.file", "",
		"Destination", "/remote.php/dav/files/einstein/big.bin",
		"OC-Total-Length", "19", "OC-Checksum", sha1Header(content))
	wantStatus(t, rec, http.StatusCreated)
	wantContent(t, e, "/webdav/big.bin", content)
	wantTree(t, personalTree(t, e, "einstein"), "big.bin")
}

// TestChunkingNGIntoProjectSpace: any WebDAV path the user may write to
// takes an assembled file.
func TestChunkingNGIntoProjectSpace(t *testing.T) {
	e := newEnv(t, withChunks)
	ngUpload(t, e, "7", "1", "phys", "2", "ics")
	rec := e.do("einstein", "MOVE", ngPath("einstein", "7", ".file"), "", "Destination", physicsPath+"/p.txt")
	wantStatus(t, rec, http.StatusCreated)
	wantContent(t, e, physicsPath+"/p.txt", "physics")
}

// TestChunkingNGRefusals: every bad request is a clear error, leaves the
// space as it was, and (but where the assembly was tried) the upload too.
func TestChunkingNGRefusals(t *testing.T) {
	const content = "hello chunked world"
	dest := "/remote.php/dav/files/einstein/big.bin"
	move := func(hdr ...string) func(e *env) int {
		return func(e *env) int {
			base := []string{"Destination", dest, "OC-Total-Length", "19"}
			return e.do("einstein", "MOVE", ngPath("einstein", "1", ".file"), "", append(base, hdr...)...).Code
		}
	}
	tests := []struct {
		name    string
		setup   func(e *env)
		request func(e *env) int
		status  int
		// kept: the upload is still there, with all three parts.
		kept bool
	}{
		{name: "missing part", request: func(e *env) int {
			wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "2"), ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", ngPath("einstein", "2", "1"), "hello "), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", ngPath("einstein", "2", "3"), "world"), http.StatusCreated)
			return e.do("einstein", "MOVE", ngPath("einstein", "2", ".file"), "", "Destination", dest, "OC-Total-Length", "19").Code
		}, status: http.StatusBadRequest, kept: true},
		{name: "OC-Total-Length too large", request: move("OC-Total-Length", "20"), status: http.StatusBadRequest},
		{name: "OC-Total-Length too small", request: move("OC-Total-Length", "18"), status: http.StatusBadRequest},
		{name: "OC-Total-Length no number", request: move("OC-Total-Length", "x"), status: http.StatusBadRequest, kept: true},
		{name: "wrong OC-Checksum", request: move("OC-Checksum", sha1Header("other")), status: http.StatusBadRequest},
		{name: "malformed OC-Checksum", request: move("OC-Checksum", "SHA1:xyz"), status: http.StatusBadRequest, kept: true},
		{name: "no Destination", request: move("Destination", ""), status: http.StatusBadRequest, kept: true},
		{name: "Destination an upload", request: move("Destination", ngPath("einstein", "9")), status: http.StatusBadRequest, kept: true},
		{name: "Destination in marie's space", request: move("Destination", "/remote.php/dav/files/marie/big.bin"), status: http.StatusNotFound},
		{name: "Destination in an unknown space", request: move("Destination", "/dav/spaces/nope/big.bin"), status: http.StatusNotFound},
		{name: "Destination read-only", request: func(e *env) int {
			// richard may only read Physics.
			wantStatus(t, e.do("richard", "MKCOL", ngPath("richard", "1"), ""), http.StatusCreated)
			wantStatus(t, e.do("richard", "PUT", ngPath("richard", "1", "1"), "r"), http.StatusCreated)
			return e.do("richard", "MOVE", ngPath("richard", "1", ".file"), "", "Destination", physicsPath+"/r.txt").Code
		}, status: http.StatusForbidden, kept: true},
		{name: "Destination parent missing", request: move("Destination", "/webdav/missing/big.bin"), status: http.StatusConflict},
		{name: "Destination a folder", request: move("Destination", "/webdav/folder"), status: http.StatusConflict},
		{name: "Overwrite F", request: move("Destination", "/webdav/existing.txt", "Overwrite", "F"), status: http.StatusPreconditionFailed},
		{name: "If-Match fails", request: move("Destination", "/webdav/existing.txt", "If-Match", `"nope"`), status: http.StatusPreconditionFailed},
		{name: "If fails", request: move("Destination", "/webdav/existing.txt", "If", `</webdav/existing.txt> (["nope"])`), status: http.StatusPreconditionFailed},
		{name: "quota at assembly", setup: func(e *env) { e.store.SetPersonalQuota(20) }, request: move(), status: http.StatusInsufficientStorage},
		{name: "twice", request: func(e *env) int {
			wantStatus(t, e.do("einstein", "MOVE", ngPath("einstein", "1", ".file"), "", "Destination", "/webdav/first.bin"), http.StatusCreated)
			return move()(e)
		}, status: http.StatusNotFound},
		{name: "MOVE of a part", request: func(e *env) int {
			return e.do("einstein", "MOVE", ngPath("einstein", "1", "1"), "", "Destination", dest).Code
		}, status: http.StatusMethodNotAllowed, kept: true},
		{name: "PUT .file", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", ".file"), "x").Code
		}, status: http.StatusMethodNotAllowed, kept: true},
		{name: "GET a part", request: func(e *env) int {
			return e.do("einstein", "GET", ngPath("einstein", "1", "1"), "").Code
		}, status: http.StatusMethodNotAllowed, kept: true},
		{name: "part name ..", request: func(e *env) int {
			return e.do("einstein", "PUT", "/remote.php/dav/uploads/einstein/1/%2e%2e", "x").Code
		}, status: http.StatusBadRequest, kept: true},
		{name: "part name too long", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", strings.Repeat("9", 256)), "x").Code
		}, status: http.StatusBadRequest, kept: true},
		{name: "part below a part", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "1", "2"), "x").Code
		}, status: http.StatusNotFound, kept: true},
		{name: "part into an unknown upload", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "404", "1"), "x").Code
		}, status: http.StatusNotFound, kept: true},
		{name: "part past OC-Total-Length", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "4"), "!", "OC-Total-Length", "19").Code
		}, status: http.StatusBadRequest, kept: true},
		{name: "part replaced within OC-Total-Length", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "3"), "WORLD", "OC-Total-Length", "19").Code
		}, status: http.StatusCreated, kept: true},
		{name: "part past the quota", setup: func(e *env) { e.store.SetPersonalQuota(20) }, request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "4"), "!!").Code
		}, status: http.StatusInsufficientStorage, kept: true},
		// The upload belongs to the space its MKCOL named (the personal
		// one): a Destination naming a space without a quota lifts nothing.
		{name: "part past its upload's space quota", setup: func(e *env) { e.store.SetPersonalQuota(22) }, request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "4"), "!!", "Destination", physicsPath+"/big.bin").Code
		}, status: http.StatusInsufficientStorage, kept: true},
		{name: "part with a wrong checksum", request: func(e *env) int {
			return e.do("einstein", "PUT", ngPath("einstein", "1", "4"), "!", "OC-Checksum", sha1Header("?")).Code
		}, status: http.StatusBadRequest, kept: true},
		{name: "part into an upload being assembled", request: func(e *env) int {
			if _, err := e.h.chunks.ClaimChunkedUpload(context.Background(), ngUploadID("einstein", "1")); err != nil {
				t.Fatal(err)
			}
			return e.do("einstein", "PUT", ngPath("einstein", "1", "4"), "!").Code
		}, status: http.StatusConflict, kept: true},
		{name: "DELETE of an unknown part", request: func(e *env) int {
			return e.do("einstein", "DELETE", ngPath("einstein", "1", "4"), "").Code
		}, status: http.StatusNotFound, kept: true},
		{name: "DELETE of a part of an unknown upload", request: func(e *env) int {
			return e.do("einstein", "DELETE", ngPath("einstein", "404", "1"), "").Code
		}, status: http.StatusNotFound, kept: true},
		{name: "DELETE of a part below a part", request: func(e *env) int {
			return e.do("einstein", "DELETE", ngPath("einstein", "1", "1", "2"), "").Code
		}, status: http.StatusNotFound, kept: true},
		{name: "DELETE of a part being assembled", request: func(e *env) int {
			if _, err := e.h.chunks.ClaimChunkedUpload(context.Background(), ngUploadID("einstein", "1")); err != nil {
				t.Fatal(err)
			}
			return e.do("einstein", "DELETE", ngPath("einstein", "1", "1"), "").Code
		}, status: http.StatusConflict, kept: true},
		{name: "MKCOL past the quota", setup: func(e *env) { e.store.SetPersonalQuota(20) }, request: func(e *env) int {
			return e.do("einstein", "MKCOL", ngPath("einstein", "2"), "", "OC-Total-Length", "19").Code
		}, status: http.StatusInsufficientStorage, kept: true},
		{name: "MKCOL with a body", request: func(e *env) int {
			return e.do("einstein", "MKCOL", ngPath("einstein", "2"), "<x/>").Code
		}, status: http.StatusUnsupportedMediaType, kept: true},
		{name: "unauthenticated", request: func(e *env) int {
			return e.do("", "PROPFIND", ngPath("einstein", "1"), "", "Depth", "1").Code
		}, status: http.StatusUnauthorized, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withChunks)
			wantStatus(t, e.do("einstein", "MKCOL", "/webdav/folder", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/existing.txt", "old"), http.StatusCreated)
			ngUpload(t, e, "1", "1", "hello ", "2", "chunked ", "3", "world")
			before := personalTree(t, e, "einstein")
			if tt.setup != nil {
				tt.setup(e)
			}
			if got := tt.request(e); got != tt.status {
				t.Fatalf("status %d, want %d", got, tt.status)
			}
			after := personalTree(t, e, "einstein")
			if tt.name == "twice" {
				after = slices.DeleteFunc(after, func(p string) bool { return p == "first.bin" })
			}
			wantTree(t, after, before...)
			wantTree(t, tree(t, e, "physics"))
			wantContent(t, e, "/webdav/existing.txt", "old")
			if tt.kept {
				if got := partSizes(t, e, "einstein", "1"); len(got) != 3 {
					t.Fatalf("the upload's parts are %v, want all three", got)
				}
			} else {
				wantStatus(t, e.do("einstein", "PROPFIND", ngPath("einstein", "1"), "", "Depth", "1"), http.StatusNotFound)
			}
		})
	}
}

// TestChunkingNGOtherUsers: another user's uploads answer as absent ones,
// whatever the method, and stay untouched.
func TestChunkingNGOtherUsers(t *testing.T) {
	e := newEnv(t, withChunks)
	ngUpload(t, e, "1", "1", "secret")
	requests := []struct{ method, path, body string }{
		{"MKCOL", ngPath("einstein", "2"), ""},
		{"MKCOL", ngPath("einstein", "1"), ""},
		{"PUT", ngPath("einstein", "1", "2"), "x"},
		{"PROPFIND", ngPath("einstein", "1"), ""},
		{"PROPFIND", ngPath("einstein", "1", "1"), ""},
		{"MOVE", ngPath("einstein", "1", ".file"), ""},
		{"DELETE", ngPath("einstein", "1"), ""},
		{"DELETE", ngPath("einstein", "1", "1"), ""},
		// marie's own namespace has no upload 1.
		{"PUT", ngPath("marie", "1", "2"), "x"},
		{"PROPFIND", ngPath("marie", "1"), ""},
		{"MOVE", ngPath("marie", "1", ".file"), ""},
		{"DELETE", ngPath("marie", "1"), ""},
		{"DELETE", ngPath("marie", "1", "1"), ""},
	}
	for _, rq := range requests {
		rec := e.do("marie", rq.method, rq.path, rq.body, "Depth", "1", "Destination", "/remote.php/dav/files/marie/stolen.bin")
		wantError(t, rec, http.StatusNotFound, "NotFound", msgNotFound)
	}
	if got := partSizes(t, e, "einstein", "1"); len(got) != 1 || got["1"] != "6" {
		t.Fatalf("einstein's parts are %v", got)
	}
	wantTree(t, personalTree(t, e, "marie"))
	// Without a chunk store, the uploads namespace is empty.
	plain := newEnv(t)
	wantStatus(t, plain.do("einstein", "MKCOL", ngPath("einstein", "1"), ""), http.StatusNotFound)
}

// TestChunkingNGLocked: an assembly onto a locked file needs the lock's
// token, as a PUT does.
func TestChunkingNGLocked(t *testing.T) {
	e := newEnv(t, withChunks, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "old"), http.StatusCreated)
	token := e.lock("einstein", "/webdav/f.txt", lockExclusive)
	ngUpload(t, e, "1", "1", "new")
	rec := e.do("einstein", "MOVE", ngPath("einstein", "1", ".file"), "", "Destination", "/webdav/f.txt")
	wantStatus(t, rec, http.StatusLocked)
	wantCondition(t, rec, "lock-token-submitted", "/webdav/f.txt")
	wantContent(t, e, "/webdav/f.txt", "old")

	ngUpload(t, e, "2", "1", "new")
	rec = e.do("einstein", "MOVE", ngPath("einstein", "2", ".file"), "", "Destination", "/webdav/f.txt", "If", "</webdav/f.txt> (<"+token+">)")
	wantStatus(t, rec, http.StatusNoContent)
	wantContent(t, e, "/webdav/f.txt", "new")
}

// TestTusUploadsBesideNG: TUS upload URLs (one segment) still reach TUS.
func TestTusUploadsBesideNG(t *testing.T) {
	e := newEnv(t, withUploads, withChunks)
	for _, tt := range []struct{ prefix, name string }{{"", "plain.txt"}, {"/remote.php", "remote.txt"}} {
		loc := e.tusStart("einstein", tt.prefix+"/webdav/", tt.name, 3)
		if !strings.HasPrefix(loc, tt.prefix+"/dav/uploads/") {
			t.Fatalf("Location %q", loc)
		}
		wantStatus(t, e.tusPatch("einstein", loc, 0, "abc"), http.StatusNoContent)
	}
	wantTree(t, personalTree(t, e, "einstein"), "plain.txt", "remote.txt")
}

// TestChunkingNGAllow: a 405 below an upload names what it allows; uploads
// cannot be locked.
func TestChunkingNGAllow(t *testing.T) {
	e := newEnv(t, withChunks, withLocks)
	ngUpload(t, e, "1", "1", "x")
	tests := []struct {
		method, path, allow string
	}{
		{"PUT", ngPath("einstein", "1"), allowedOnChunkedUpload},
		{"LOCK", ngPath("einstein", "1"), allowedOnChunkedUpload},
		{"GET", ngPath("einstein", "1", "1"), allowedOnChunk},
		{"PROPPATCH", ngPath("einstein", "1", "1"), allowedOnChunk},
		{"DELETE", ngPath("einstein", "1", ".file"), allowedOnAssemble},
		{"PROPFIND", ngPath("einstein", "1", ".file"), allowedOnAssemble},
	}
	for _, tt := range tests {
		rec := e.do("einstein", tt.method, tt.path, "")
		wantError(t, rec, http.StatusMethodNotAllowed, "MethodNotAllowed", "")
		wantHeader(t, rec, "Allow", tt.allow)
	}
}

// TestChunkedUploadsExpire: both kinds of upload are kept for UploadTTL.
func TestChunkedUploadsExpire(t *testing.T) {
	e := newEnv(t, withChunks, func(cfg *Config) { cfg.UploadTTL = time.Hour })
	ngUpload(t, e, "1", "1", "x")
	wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "x"), http.StatusCreated)
	target, err := e.h.resolve(context.Background(), storage.User{ID: "einstein"}, davPath{kind: baseHome, base: "/webdav", segments: []string{"f.bin"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{ngUploadID("einstein", "1"), v1UploadID(storage.User{ID: "einstein"}, target, v1Chunk{file: "f.bin", transfer: "4711", count: 2})}
	for _, id := range ids {
		u, err := e.h.chunks.ChunkedUpload(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if left := time.Until(u.Expires); left < 59*time.Minute || left > time.Hour {
			t.Fatalf("upload %s expires in %v, want an hour", id, left)
		}
	}
}

func TestChunkedUploadKind(t *testing.T) {
	user := storage.User{ID: "a/b"}
	tgt := &target{space: storage.Space{ID: "s"}, parent: storage.Node{ID: "p"}}
	for id, want := range map[string]string{
		ngUploadID(user.ID, "t/1"):                          "chunking-ng",
		v1UploadID(user, tgt, v1Chunk{file: "f", count: 2}): "chunking-v1",
		"big": "other",
	} {
		if got := ChunkedUploadKind(id); got != want {
			t.Errorf("ChunkedUploadKind(%q) = %q, want %q", id, got, want)
		}
	}
}
