package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// searchFiles is the REPORT ownCloud Web sends for its search.
func searchFiles(pattern string, limit int) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<oc:search-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><oc:fileid/><d:getetag/><d:resourcetype/><oc:favorite/><oc:permissions/></d:prop>
  <oc:search><oc:pattern>%s</oc:pattern><oc:limit>%d</oc:limit></oc:search>
</oc:search-files>`, pattern, limit)
}

// filterFavorites is the REPORT of the favourites list.
const filterFavorites = `<?xml version="1.0" encoding="UTF-8"?>
<oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><oc:fileid/><oc:favorite/></d:prop>
  <oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules>
</oc:filter-files>`

// report sends a REPORT and returns the decoded hrefs of its results and
// its Content-Range.
func (c *client) report(path, body string) ([]string, string) {
	c.t.Helper()
	resp, b := c.expect(http.StatusMultiStatus, "REPORT", path, body, "Content-Type", "application/xml")
	responses, err := parseMultistatus([]byte(b))
	if err != nil {
		c.t.Fatalf("REPORT %s: %v\n%s", path, err, b)
	}
	var hrefs []string
	for _, r := range responses {
		if r.props[ocNS+" fileid"] == "" {
			c.t.Fatalf("REPORT %s: %s without oc:fileid:\n%s", path, r.href, b)
		}
		p, err := url.PathUnescape(r.href)
		if err != nil {
			c.t.Fatalf("REPORT %s: href %q: %v", path, r.href, err)
		}
		hrefs = append(hrefs, p)
	}
	return hrefs, resp.Header.Get("Content-Range")
}

// TestSearchThroughCaddy: ownCloud Web's search and favourites REPORTs,
// on each store, through the real Caddy: names with spaces, in other
// scripts and cases are found below the space or folder searched, on
// every base path; a non-member's REPORT finds nothing and learns
// nothing.
func TestSearchThroughCaddy(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		name     string
		postgres bool
	}{{"embedded", false}, {"postgres", true}} {
		t.Run(store.name, func(t *testing.T) {
			s := startAccessLogged(t, store.postgres).server
			einstein := protocolClient(t, s, "einstein", false)
			marie := protocolClient(t, s, "marie", false)
			richard := protocolClient(t, s, "richard", false)
			checkSearch(t, einstein, marie, richard)
		})
	}
}

func checkSearch(t *testing.T, einstein, marie, richard *client) {
	for _, dir := range []string{"Docs", "Docs/Q1%202024"} {
		einstein.expect(http.StatusCreated, "MKCOL", "/remote.php/webdav/"+dir, "")
	}
	for _, f := range []string{"Docs/Annual%20Report%202024.pdf", "Docs/Q1%202024/report%20draft.TXT",
		"Reise%20nach%20K%C3%B6ln.txt", "%C3%9CBERSICHT.md", "notes.txt"} {
		einstein.expect(http.StatusCreated, "PUT", "/remote.php/webdav/"+f, "x")
	}
	ref := einstein.prop("/webdav/", ocNS, "spaceid")
	space := "/remote.php/dav/spaces/" + ref

	for _, tc := range []struct {
		name, path, pattern string
		want                []string
		contentRange        string
	}{
		{"spaces and case", space, "REPORT", []string{
			space + "/Docs/Annual Report 2024.pdf", space + "/Docs/Q1 2024/report draft.TXT"}, "rows 0-1/2"},
		{"a folder", space + "/Docs/Q1%202024", "report", []string{
			space + "/Docs/Q1 2024/report draft.TXT"}, "rows 0-0/1"},
		{"unicode", space, "köln", []string{space + "/Reise nach Köln.txt"}, "rows 0-0/1"},
		{"unicode case", space, "übersicht", []string{space + "/ÜBERSICHT.md"}, "rows 0-0/1"},
		{"files base path", "/remote.php/dav/files/einstein/", "notes", []string{"/remote.php/dav/files/einstein/notes.txt"}, "rows 0-0/1"},
		{"webdav base path", "/remote.php/webdav/Docs", "2024", []string{
			"/remote.php/webdav/Docs/Annual Report 2024.pdf", "/remote.php/webdav/Docs/Q1 2024/"}, "rows 0-1/2"},
		{"nothing", space, "nowhere", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, contentRange := einstein.in(t).report(tc.path, searchFiles(tc.pattern, 50))
			if !slices.Equal(got, tc.want) || contentRange != tc.contentRange {
				t.Fatalf("found %q (Content-Range %q), want %q (%q)", got, contentRange, tc.want, tc.contentRange)
			}
		})
	}

	t.Run("favourites", func(t *testing.T) {
		fav := `<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`
		einstein.expect(http.StatusMultiStatus, "PROPPATCH", "/remote.php/webdav/notes.txt", fav)
		einstein.expect(http.StatusMultiStatus, "PROPPATCH", "/remote.php/webdav/Docs/Q1%202024", fav)
		got, _ := einstein.in(t).report(space, filterFavorites)
		if want := []string{space + "/notes.txt", space + "/Docs/Q1 2024/"}; !slices.Equal(got, want) {
			t.Fatalf("favourites %q, want %q", got, want)
		}
		if got, _ := einstein.in(t).report(space+"/Docs", filterFavorites); !slices.Equal(got, []string{space + "/Docs/Q1 2024/"}) {
			t.Fatalf("favourites below Docs %q", got)
		}
	})

	t.Run("a non-member", func(t *testing.T) {
		for _, path := range []string{space, space + "/Docs", "/remote.php/dav/spaces/" + strings.Replace(ref, "$", "$x", 1)} {
			for _, body := range []string{searchFiles("report", 50), filterFavorites} {
				_, b := marie.in(t).expect(http.StatusNotFound, "REPORT", path, body)
				wantDAVError(t, b, "NotFound")
				if strings.Contains(b, "Report") || strings.Contains(b, "Docs") {
					t.Fatalf("the refusal tells of the space:\n%s", b)
				}
			}
		}
	})

	t.Run("a viewer of a project space", func(t *testing.T) {
		physics := "/remote.php/dav/spaces/" + projectSpaceRef(ref, "Physics")
		einstein.in(t).expect(http.StatusCreated, "PUT", physics+"/Relativit%C3%A4t.pdf", "x")
		got, _ := richard.in(t).report(physics, searchFiles("RELATIVITÄT", 50))
		if want := []string{physics + "/Relativität.pdf"}; !slices.Equal(got, want) {
			t.Fatalf("richard found %q, want %q", got, want)
		}
		_, b := richard.in(t).expect(http.StatusBadRequest, "REPORT", physics, "<oc:search-files")
		wantDAVError(t, b, "BadRequest")

		// ownCloud Web searches every space at once, in KQL.
		got, contentRange := richard.in(t).report("/remote.php/dav/spaces/", searchFiles(`name:"*relativ*"`, 200))
		if want := []string{physics + "/Relativität.pdf"}; !slices.Equal(got, want) || contentRange != "rows 0-0/1" {
			t.Fatalf("richard found %q (%q) in all his spaces, want %q", got, contentRange, want)
		}
	})
}
