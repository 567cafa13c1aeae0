package davhandler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPut(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", "PUT", "/webdav/f.txt", "12345", "X-OC-Mtime", "1500000000", "OC-Checksum", "SHA1:8cb2237d0679ca88db6464eac60da96345513964")
	wantStatus(t, rec, http.StatusCreated)
	for _, h := range []string{"ETag", "OC-ETag", "OC-FileId", "Last-Modified"} {
		if rec.Header().Get(h) == "" {
			t.Errorf("PUT response lacks %s", h)
		}
	}
	if !etagPattern.MatchString(rec.Header().Get("OC-ETag")) || rec.Header().Get("X-OC-Mtime") != "accepted" {
		t.Errorf("headers %v", rec.Header())
	}
	if lm := rec.Header().Get("Last-Modified"); lm != time.Unix(1500000000, 0).UTC().Format(http.TimeFormat) {
		t.Errorf("Last-Modified %s", lm)
	}
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "678"), http.StatusNoContent)
	if got := e.do("einstein", "GET", "/webdav/f.txt", "").Body.String(); got != "678" {
		t.Fatalf("content %q", got)
	}
}

func TestPutRefusals(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "original"), http.StatusCreated)
	etag := e.do("einstein", "HEAD", "/webdav/f.txt", "").Header().Get("ETag")
	tests := []struct {
		name, path, body string
		hdr              []string
		status           int
		exception, msg   string
	}{
		{"checksum mismatch", "/webdav/f.txt", "changed", []string{"OC-Checksum", "SHA1:0000000000000000000000000000000000000000"}, http.StatusBadRequest, "BadRequest", "The computed checksum does not match"},
		{"unsupported checksum", "/webdav/f.txt", "changed", []string{"OC-Checksum", "CRC32:abcd"}, http.StatusBadRequest, "BadRequest", "unsupported checksum algorithm"},
		{"malformed checksum", "/webdav/f.txt", "changed", []string{"OC-Checksum", "SHA1"}, http.StatusBadRequest, "BadRequest", "malformed"},
		{"bad mtime", "/webdav/f.txt", "changed", []string{"X-OC-Mtime", "yesterday"}, http.StatusBadRequest, "BadRequest", "X-OC-Mtime"},
		{"if-match mismatch", "/webdav/f.txt", "changed", []string{"If-Match", `"nope"`}, http.StatusPreconditionFailed, "PreconditionFailed", ""},
		{"if-none-match star", "/webdav/f.txt", "changed", []string{"If-None-Match", "*"}, http.StatusPreconditionFailed, "PreconditionFailed", ""},
		{"content-range", "/webdav/f.txt", "changed", []string{"Content-Range", "bytes 0-6/7"}, http.StatusBadRequest, "BadRequest", "Content-Range"},
		{"missing parent", "/webdav/nope/f.txt", "changed", nil, http.StatusConflict, "Conflict", ""},
		{"onto a folder", "/webdav/", "changed", nil, http.StatusConflict, "Conflict", ""},
		{"traversal", "/webdav/../f.txt", "changed", nil, http.StatusBadRequest, "BadRequest", "reserved"},
		{"viewer", "/dav/spaces/physics/f.txt", "changed", nil, http.StatusForbidden, "Forbidden", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := "einstein"
			if tt.name == "viewer" {
				user = "richard"
			}
			path := tt.path
			if tt.name == "traversal" {
				path = "/webdav/%2e%2e/f.txt"
			}
			wantError(t, e.do(user, "PUT", path, tt.body, tt.hdr...), tt.status, tt.exception, tt.msg)
			if got := e.do("einstein", "GET", "/webdav/f.txt", ""); got.Body.String() != "original" || got.Header().Get("ETag") != etag {
				t.Fatalf("a refused PUT changed the file: %q %s", got.Body.String(), got.Header().Get("ETag"))
			}
		})
	}
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "new", "If-Match", etag), http.StatusNoContent)
}

func TestGet(t *testing.T) {
	e := newEnv(t)
	content := strings.Repeat("0123456789", 5) + "ab" // 52 bytes
	wantStatus(t, e.do("einstein", "PUT", "/webdav/comma,.txt", content), http.StatusCreated)
	rec := e.do("einstein", "GET", "/webdav/comma,.txt", "")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != content {
		t.Fatalf("body %q", rec.Body.String())
	}
	hdr := rec.Header()
	if hdr.Get("Content-Disposition") != `inline; filename*=UTF-8''comma%2C.txt; filename="comma,.txt"` ||
		!strings.HasPrefix(hdr.Get("OC-Checksum"), "SHA1:") || hdr.Get("Accept-Ranges") != "bytes" ||
		!strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("headers %v", hdr)
	}
	etag := hdr.Get("ETag")
	ranges := []struct {
		rng, body, contentRange string
		status                  int
	}{
		{"bytes=0-51", content, "bytes 0-51/52", http.StatusPartialContent},
		{"bytes=0-55", content, "bytes 0-51/52", http.StatusPartialContent},
		{"bytes=-11", content[41:], "bytes 41-51/52", http.StatusPartialContent},
		{"bytes=55-60", "", "bytes */52", http.StatusRequestedRangeNotSatisfiable},
	}
	for _, r := range ranges {
		rec := e.do("einstein", "GET", "/webdav/comma,.txt", "", "Range", r.rng)
		if r.status == http.StatusRequestedRangeNotSatisfiable {
			wantError(t, rec, r.status, "RequestedRangeNotSatisfiable", "")
		} else {
			wantStatus(t, rec, r.status)
			if rec.Body.String() != r.body {
				t.Errorf("%s: body %q", r.rng, rec.Body.String())
			}
		}
		if rec.Header().Get("Content-Range") != r.contentRange {
			t.Errorf("%s: Content-Range %q", r.rng, rec.Header().Get("Content-Range"))
		}
	}
	wantStatus(t, e.do("einstein", "GET", "/webdav/comma,.txt", "", "If-None-Match", etag), http.StatusNotModified)
	wantError(t, e.do("einstein", "GET", "/webdav/comma,.txt", "", "If-Match", `"other"`), http.StatusPreconditionFailed, "PreconditionFailed", "")
	head := e.do("einstein", "HEAD", "/webdav/comma,.txt", "")
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != "52" {
		t.Fatalf("HEAD: %d %v", head.Code, head.Header())
	}
	wantStatus(t, e.do("einstein", "HEAD", "/webdav/missing", ""), http.StatusNotFound)
}

func TestMkcol(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	wantError(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusMethodNotAllowed, "MethodNotAllowed", "The resource you tried to create already exists")
	wantError(t, e.do("einstein", "MKCOL", "/webdav/x/y", ""), http.StatusConflict, "Conflict", "")
	wantError(t, e.do("einstein", "MKCOL", "/webdav/e", "<body/>"), http.StatusUnsupportedMediaType, "UnsupportedMediaType", "")
	wantError(t, e.do("richard", "MKCOL", "/dav/spaces/physics/e", ""), http.StatusForbidden, "Forbidden", "")
	wantStatus(t, e.do("marie", "MKCOL", "/dav/spaces/physics/e", ""), http.StatusCreated)
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/d/f", "1234"), http.StatusCreated)
	wantError(t, e.do("einstein", "DELETE", "/webdav/", ""), http.StatusMethodNotAllowed, "MethodNotAllowed", "deleting spaces")
	wantError(t, e.do("einstein", "DELETE", "/webdav/d", "", "If-Match", `"x"`), http.StatusPreconditionFailed, "PreconditionFailed", "")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/d", ""), http.StatusNoContent)
	wantError(t, e.do("einstein", "DELETE", "/webdav/d", ""), http.StatusNotFound, "NotFound", "")
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", fmt.Sprintf(propfindBody, "<oc:size/>"), "Depth", "0"))
	if res[0].Props["http://owncloud.org/ns size"] != "0" {
		t.Fatalf("space size after delete: %+v", res[0])
	}
}

func TestProppatch(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "x"), http.StatusCreated)
	read := func(user string) msResponse {
		return parseMultistatus(t, e.do(user, "PROPFIND", "/dav/spaces/physics/f.txt",
			fmt.Sprintf(propfindBody, `<oc:favorite/><z:color xmlns:z="urn:z"/>`), "Depth", "0"))[0]
	}
	// A protected property fails the whole request; nothing is applied.
	mixed := `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:color>red</z:color><d:getetag>"x"</d:getetag></d:prop></d:set></d:propertyupdate>`
	rec := e.do("einstein", "PROPPATCH", "/dav/spaces/physics/f.txt", mixed)
	res := parseMultistatus(t, rec)[0]
	if !strings.Contains(res.Statuses["DAV: getetag"], "403") || !strings.Contains(res.Statuses["urn:z color"], "424") ||
		!strings.Contains(rec.Body.String(), "cannot-modify-protected-property") {
		t.Fatalf("mixed PROPPATCH: %s", rec.Body.String())
	}
	if _, ok := read("einstein").Props["urn:z color"]; ok {
		t.Fatal("a failed PROPPATCH applied a property")
	}
	set := `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><z:color>red</z:color><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`
	res = parseMultistatus(t, e.do("einstein", "PROPPATCH", "/dav/spaces/physics/f.txt", set))[0]
	if !strings.Contains(res.Statuses["urn:z color"], "200") {
		t.Fatalf("set: %+v", res)
	}
	// Favourites are per user.
	if got := read("einstein"); got.Props["http://owncloud.org/ns favorite"] != "1" || got.Props["urn:z color"] != "red" {
		t.Fatalf("einstein sees %+v", got)
	}
	if got := read("marie"); got.Props["http://owncloud.org/ns favorite"] != "0" || got.Props["urn:z color"] != "red" {
		t.Fatalf("marie sees %+v", got)
	}
	// A viewer may not change shared properties, but may keep favourites.
	wantError(t, e.do("richard", "PROPPATCH", "/dav/spaces/physics/f.txt", set), http.StatusForbidden, "Forbidden", "")
	fav := `<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`
	wantStatus(t, e.do("richard", "PROPPATCH", "/dav/spaces/physics/f.txt", fav), http.StatusMultiStatus)
	if got := read("richard"); got.Props["http://owncloud.org/ns favorite"] != "1" {
		t.Fatalf("richard sees %+v", got)
	}
	remove := `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:remove><d:prop><z:color/></d:prop></d:remove></d:propertyupdate>`
	wantStatus(t, e.do("marie", "PROPPATCH", "/dav/spaces/physics/f.txt", remove), http.StatusMultiStatus)
	if _, ok := read("einstein").Props["urn:z color"]; ok {
		t.Fatal("remove did not remove")
	}
	wantError(t, e.do("einstein", "PROPPATCH", "/dav/spaces/physics/f.txt", "<broken"), http.StatusBadRequest, "BadRequest", "")
}

func TestCopyMove(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/a/f.txt", "abc"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/g.txt", "g"), http.StatusCreated)
	idBefore := e.do("einstein", "HEAD", "/webdav/a/f.txt", "").Header().Get("OC-FileId")
	spaces := e.personalSpacePath("einstein")
	tests := []struct {
		name, method, src, dst string
		hdr                    []string
		status                 int
	}{
		{"copy to new", "COPY", "/webdav/a", "http://example.com/webdav/b", nil, http.StatusCreated},
		{"copy overwrite F", "COPY", "/webdav/g.txt", "/webdav/a/f.txt", []string{"Overwrite", "F"}, http.StatusPreconditionFailed},
		{"copy overwrite", "COPY", "/webdav/g.txt", "/webdav/b/f.txt", nil, http.StatusNoContent},
		{"copy into itself", "COPY", "/webdav/a", "/webdav/a/sub", nil, http.StatusConflict},
		{"copy bad depth", "COPY", "/webdav/a", "/webdav/c", []string{"Depth", "1"}, http.StatusBadRequest},
		{"copy bad overwrite", "COPY", "/webdav/a", "/webdav/c", []string{"Overwrite", "maybe"}, http.StatusBadRequest},
		{"move missing parent", "MOVE", "/webdav/g.txt", "/webdav/nope/g.txt", nil, http.StatusConflict},
		{"move across spaces", "MOVE", "/webdav/g.txt", "/dav/spaces/physics/g.txt", nil, http.StatusBadGateway},
		{"move other host", "MOVE", "/webdav/g.txt", "http://elsewhere.example/webdav/h.txt", nil, http.StatusBadGateway},
		{"move onto itself", "MOVE", "/webdav/g.txt", "/webdav/g.txt", nil, http.StatusForbidden},
		{"move space root", "MOVE", "/webdav/", "/webdav/x", nil, http.StatusForbidden},
		{"move via spaces path", "MOVE", "/webdav/a/f.txt", spaces + "/moved.txt", nil, http.StatusCreated},
		{"move no destination", "MOVE", "/webdav/g.txt", "", nil, http.StatusBadRequest},
		{"move missing source", "MOVE", "/webdav/none", "/webdav/x", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := append([]string{"Destination", escapePath(tt.dst)}, tt.hdr...)
			if strings.HasPrefix(tt.dst, "http") {
				hdr[1] = tt.dst
			}
			rec := e.do("einstein", tt.method, tt.src, "", hdr...)
			if tt.status >= 400 {
				wantError(t, rec, tt.status, exceptions[tt.status], "")
				return
			}
			wantStatus(t, rec, tt.status)
		})
	}
	if got := e.do("einstein", "GET", "/webdav/b/f.txt", "").Body.String(); got != "g" {
		t.Fatalf("overwritten copy holds %q", got)
	}
	if got := e.do("einstein", "HEAD", "/webdav/moved.txt", "").Header().Get("OC-FileId"); got != idBefore {
		t.Fatalf("MOVE changed the file id: %s → %s", idBefore, got)
	}
}

func TestAccess(t *testing.T) {
	e := newEnv(t)
	einstein := e.personalSpacePath("einstein")
	wantStatus(t, e.do("einstein", "PUT", einstein+"/secret.txt", "s"), http.StatusCreated)
	tests := []struct {
		name, user, method, path string
		status                   int
	}{
		{"no user", "", "PROPFIND", "/webdav/", http.StatusUnauthorized},
		{"options without user", "", "OPTIONS", "/webdav/", http.StatusNoContent},
		{"foreign personal space", "marie", "PROPFIND", einstein, http.StatusNotFound},
		{"foreign file", "marie", "GET", einstein + "/secret.txt", http.StatusNotFound},
		{"foreign missing file", "marie", "GET", einstein + "/nothing", http.StatusNotFound},
		{"foreign put", "marie", "PUT", einstein + "/x", http.StatusNotFound},
		{"foreign delete", "marie", "DELETE", einstein + "/secret.txt", http.StatusNotFound},
		{"foreign files path", "marie", "PROPFIND", "/dav/files/einstein/", http.StatusNotFound},
		{"own files path", "einstein", "PROPFIND", "/dav/files/Einstein/", http.StatusMultiStatus},
		{"foreign storage id", "einstein", "PROPFIND", "/dav/spaces/other$physics", http.StatusNotFound},
		{"unknown space", "einstein", "PROPFIND", "/dav/spaces/nope", http.StatusNotFound},
		{"project member", "richard", "PROPFIND", "/dav/spaces/physics", http.StatusMultiStatus},
		{"project non-member", "nobody", "PROPFIND", "/dav/spaces/physics", http.StatusNotFound},
		{"unknown method", "einstein", "PATCH", "/webdav/", http.StatusNotImplemented},
		{"foreign unknown method", "marie", "PATCH", einstein + "/secret.txt", http.StatusNotFound},
		{"foreign lock", "marie", "LOCK", einstein + "/secret.txt", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.path, "", "Depth", "0")
			if tt.status >= 400 {
				wantError(t, rec, tt.status, exceptions[tt.status], "")
				return
			}
			wantStatus(t, rec, tt.status)
		})
	}
	if got := e.do("einstein", "GET", einstein+"/secret.txt", "").Body.String(); got != "s" {
		t.Fatalf("secret changed: %q", got)
	}
}

func TestOptions(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/webdav/", "/dav/spaces/", "/dav/spaces/x/y", "/remote.php/dav/files/u/"} {
		rec := e.do("", "OPTIONS", p, "")
		wantStatus(t, rec, http.StatusNoContent)
		if rec.Header().Get("DAV") == "" || !strings.Contains(rec.Header().Get("Allow"), "PROPFIND") {
			t.Fatalf("%s: %v", p, rec.Header())
		}
	}
}

func TestQuota(t *testing.T) {
	e := newEnv(t)
	space := e.physics
	space.Quota = 10
	if _, err := e.store.PutSpace(context.Background(), space); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/a", "123456"), http.StatusCreated)
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/physics", fmt.Sprintf(propfindBody, "<d:quota-available-bytes/><d:quota-used-bytes/>"), "Depth", "0"))
	if res[0].Props["DAV: quota-available-bytes"] != "4" || res[0].Props["DAV: quota-used-bytes"] != "6" {
		t.Fatalf("quota props: %+v", res[0])
	}
	wantError(t, e.do("einstein", "PUT", "/dav/spaces/physics/b", "12345"), http.StatusInsufficientStorage, "InsufficientStorage", "quota")
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/b", ""), http.StatusNotFound)
	// Replacing a file counts only the difference.
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/a", "1234567890"), http.StatusNoContent)
}

func TestPutByFileID(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", "PUT", "/webdav/f.txt", "old")
	wantStatus(t, rec, http.StatusCreated)
	id := rec.Header().Get("OC-FileId")
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/"+id, "new"), http.StatusNoContent)
	if got := e.do("einstein", "GET", "/webdav/f.txt", "").Body.String(); got != "new" {
		t.Fatalf("content %q", got)
	}
	wantStatus(t, e.do("marie", "PUT", "/dav/spaces/"+id, "stolen"), http.StatusNotFound)
}
