package davhandler

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestPropfindEmptyProp: a d:prop with no names is answered as allprop,
// as oCIS does; ownCloud Web's versions panel sends it
// (packages/web-client/src/webdav/listFileVersions.ts) and reads
// d:getetag and d:getlastmodified from the answer. Every d:response
// carries a propstat (RFC 4918 §14.24).
func TestPropfindEmptyProp(t *testing.T) {
	e := newEnv(t)
	e.putFile("einstein", "/webdav/f.txt", "one")
	id := e.putFile("einstein", "/webdav/f.txt", "two")
	e.mkcol("einstein", "/webdav", "folder")
	e.putFile("einstein", "/webdav/gone.txt", "x")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/gone.txt", ""), http.StatusNoContent)

	const emptyProp = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop/></d:propfind>`
	tests := []struct {
		name, path, depth string
		responses         int
		want              []string // properties the last response has
	}{
		{"versions", "/dav/meta/" + id + "/v", "1", 2, []string{"DAV: getetag", "DAV: getlastmodified"}},
		{"a file", "/webdav/f.txt", "0", 1, []string{"DAV: getetag", "DAV: getcontentlength", "http://owncloud.org/ns fileid"}},
		{"a folder", "/webdav", "1", 3, []string{"DAV: getetag", "DAV: resourcetype"}},
		{"the trash", trashPath(e.personalSpaceID("einstein")), "1", 2, []string{"DAV: resourcetype"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("einstein", "PROPFIND", tt.path, emptyProp, "Depth", tt.depth)
			everyResponseHasPropstat(t, rec.Body.String())
			responses := parseMultistatus(t, rec)
			if len(responses) != tt.responses {
				t.Fatalf("%d responses, want %d:\n%s", len(responses), tt.responses, rec.Body)
			}
			last := responses[len(responses)-1]
			for _, p := range tt.want {
				if _, ok := last.Props[p]; !ok {
					t.Errorf("%s lacks %s:\n%s", last.Href, p, rec.Body)
				}
			}
		})
	}
}

// everyResponseHasPropstat checks RFC 4918 §14.24 on a multistatus.
func everyResponseHasPropstat(t *testing.T, body string) {
	t.Helper()
	for _, r := range regexp.MustCompile(`(?s)<d:response>.*?</d:response>`).FindAllString(body, -1) {
		if !strings.Contains(r, "<d:propstat>") && !strings.Contains(r, "<d:status>") {
			t.Errorf("a response with neither propstat nor status: %s", r)
		}
	}
}
