package davhandler

import (
	"fmt"
	"html"
	"net/http"
	"testing"
)

// TestMkcolHeaders: a created folder is described by the headers a PUT's
// answer carries, the ones PROPFIND then reports for it, so that a sync
// client needs no PROPFIND to learn its etag and id.
func TestMkcolHeaders(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/webdav/d", "/remote.php/dav/files/einstein/d/e", physicsPath + "/f"} {
		t.Run(path, func(t *testing.T) {
			rec := e.do("einstein", "MKCOL", path, "")
			wantStatus(t, rec, http.StatusCreated)
			body := fmt.Sprintf(propfindBody, "<d:getetag/><oc:id/>")
			props := parseMultistatus(t, e.do("einstein", "PROPFIND", path, body, "Depth", "0"))[0].Props
			etag := html.UnescapeString(props["DAV: getetag"])
			if !etagPattern.MatchString(etag) {
				t.Fatalf("getetag %q", etag)
			}
			wantHeader(t, rec, "ETag", etag)
			wantHeader(t, rec, "OC-ETag", etag)
			wantHeader(t, rec, "OC-FileId", props["http://owncloud.org/ns id"])
		})
	}
	// A refused MKCOL describes nothing.
	rec := e.do("einstein", "MKCOL", "/webdav/d", "")
	wantStatus(t, rec, http.StatusMethodNotAllowed)
	for _, name := range []string{"ETag", "OC-ETag", "OC-FileId"} {
		wantHeader(t, rec, name, "")
	}
}
