package davhandler

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

const searchBody = `<?xml version="1.0" encoding="UTF-8"?>
<oc:search-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><oc:fileid/><d:getcontentlength/><d:resourcetype/><oc:favorite/></d:prop>
  <oc:search><oc:pattern>%s</oc:pattern>%s</oc:search>
</oc:search-files>`

const favoritesBody = `<?xml version="1.0" encoding="UTF-8"?>
<oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><oc:fileid/><oc:favorite/></d:prop>
  <oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules>
</oc:filter-files>`

func search(pattern, paging string) string { return fmt.Sprintf(searchBody, pattern, paging) }

func hrefsOf(res []msResponse) []string {
	hrefs := make([]string, 0, len(res))
	for _, r := range res {
		hrefs = append(hrefs, r.Href)
	}
	return hrefs
}

// seedSearch makes a tree in the Physics space.
func seedSearch(e *env) string {
	base := "/dav/spaces/" + testStorageID + "$physics"
	for _, dir := range []string{"/Reports", "/Reports/Q1 2024", "/Über"} {
		wantStatus(e.t, e.do("einstein", "MKCOL", base+dir, ""), http.StatusCreated)
	}
	for _, f := range []string{"/Annual Report.pdf", "/Reports/Q1 2024/report draft.TXT", "/Über/Ärger.md", "/notes.txt"} {
		wantStatus(e.t, e.do("einstein", "PUT", base+f, "x"), http.StatusCreated)
	}
	return base
}

func TestReportSearchFiles(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	esc := escapePath(base)
	for _, tc := range []struct {
		name, user, path, pattern, paging string
		want                              []string
		rangeHeader                       string
	}{
		{"case and spaces", "einstein", base, "REPORT", "", []string{
			esc + "/Annual%20Report.pdf", esc + "/Reports/Q1%202024/report%20draft.TXT", esc + "/Reports/",
		}, "rows 0-2/3"},
		{"below a folder", "marie", base + "/Reports", "report", "", []string{
			esc + "/Reports/Q1%202024/report%20draft.TXT",
		}, "rows 0-0/1"},
		{"unicode", "richard", base, "ärger", "", []string{esc + "/%C3%9Cber/%C3%84rger.md"}, "rows 0-0/1"},
		{"unicode folder", "richard", base, "ÜBER", "", []string{esc + "/%C3%9Cber/"}, "rows 0-0/1"},
		{"a page", "einstein", base, "report", "<oc:limit>1</oc:limit><oc:offset>1</oc:offset>", []string{
			esc + "/Reports/Q1%202024/report%20draft.TXT",
		}, "rows 1-1/3"},
		{"a limit beyond the cap is capped", "einstein", base, "notes", "<oc:limit>99999999</oc:limit>", []string{esc + "/notes.txt"}, "rows 0-0/1"},
		{"nothing", "einstein", base, "no such thing", "", nil, ""},
		{"below a file", "einstein", base + "/notes.txt", "notes", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.user, "REPORT", tc.path, search(tc.pattern, tc.paging))
			got := hrefsOf(parseMultistatus(t, rec))
			if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Fatalf("hrefs %q, want %q", got, tc.want)
			}
			if h := rec.Header().Get("Content-Range"); h != tc.rangeHeader {
				t.Fatalf("Content-Range %q, want %q", h, tc.rangeHeader)
			}
		})
	}
}

// Each result answers the properties asked for, as PROPFIND would.
func TestReportSearchFilesProps(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	res := parseMultistatus(t, e.do("einstein", "REPORT", base, search("annual", "")))
	if len(res) != 1 {
		t.Fatalf("%d results", len(res))
	}
	pf := parseMultistatus(t, e.do("einstein", "PROPFIND", base+"/Annual Report.pdf", `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/><d:getcontentlength/><d:resourcetype/><oc:favorite/></d:prop></d:propfind>`, "Depth", "0"))
	if fmt.Sprint(res[0].Props) != fmt.Sprint(pf[0].Props) || res[0].Props["http://owncloud.org/ns fileid"] == "" {
		t.Fatalf("REPORT props %v, PROPFIND props %v", res[0].Props, pf[0].Props)
	}
}

func TestReportFilterFilesFavorites(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	fav := `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`
	wantStatus(t, e.do("marie", "PROPPATCH", base+"/notes.txt", fav), http.StatusMultiStatus)
	wantStatus(t, e.do("marie", "PROPPATCH", base+"/Über", fav), http.StatusMultiStatus)
	wantStatus(t, e.do("einstein", "PROPPATCH", base+"/Annual Report.pdf", fav), http.StatusMultiStatus)

	res := parseMultistatus(t, e.do("marie", "REPORT", base, favoritesBody))
	esc := escapePath(base)
	if got, want := hrefsOf(res), []string{esc + "/notes.txt", esc + "/%C3%9Cber/"}; !slices.Equal(got, want) {
		t.Fatalf("marie's favourites %q, want %q", got, want)
	}
	if res[0].Props["http://owncloud.org/ns favorite"] != "1" {
		t.Fatalf("favourite property %v", res[0].Props)
	}
	res = parseMultistatus(t, e.do("einstein", "REPORT", base+"/Reports", favoritesBody))
	if len(res) != 0 {
		t.Fatalf("einstein's favourites below Reports: %q", hrefsOf(res))
	}
}

// A non-member learns nothing: the same 404 as for a space that does not
// exist, for either report.
func TestReportNonMember(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	missing := "/dav/spaces/" + testStorageID + "$nosuchspace"
	for _, body := range []string{search("report", ""), favoritesBody} {
		for _, path := range []string{base, base + "/Reports", missing} {
			rec := e.do("bob", "REPORT", path, body)
			wantError(t, rec, http.StatusNotFound, "NotFound", "")
			if strings.Contains(rec.Body.String(), "Report") {
				t.Fatalf("the refusal names a file: %s", rec.Body.String())
			}
		}
	}
}

func TestReportRefusals(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	for _, tc := range []struct {
		name, body string
		status     int
		exception  string
	}{
		{"no body", "", http.StatusBadRequest, "BadRequest"},
		{"malformed", "<oc:search-files xmlns:oc='http://owncloud.org/ns'><oc:search>", http.StatusBadRequest, "BadRequest"},
		{"no search", `<oc:search-files xmlns:oc="http://owncloud.org/ns"/>`, http.StatusBadRequest, "BadRequest"},
		{"empty pattern", search(" ", ""), http.StatusBadRequest, "BadRequest"},
		{"negative limit", search("x", "<oc:limit>-1</oc:limit>"), http.StatusBadRequest, "BadRequest"},
		{"offset not a number", search("x", "<oc:offset>many</oc:offset>"), http.StatusBadRequest, "BadRequest"},
		{"no rule", `<oc:filter-files xmlns:oc="http://owncloud.org/ns"><oc:filter-rules/></oc:filter-files>`, http.StatusBadRequest, "BadRequest"},
		{"another report", `<d:sync-collection xmlns:d="DAV:"/>`, http.StatusForbidden, "Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("einstein", "REPORT", base, tc.body), tc.status, tc.exception, "")
		})
	}
}

// A share's recipient finds what is below the shared folder, at its path
// in the Shares drive, and nothing beside or above it.
func TestReportThroughShare(t *testing.T) {
	e := newEnv(t)
	einsteinShares(t, e, storage.ShareViewer)
	home := e.personalSpacePath("einstein")
	e.putFile("einstein", home+"/notes beside.txt", "private")

	got := hrefsOf(parseMultistatus(t, e.do("marie", "REPORT", sharesDrive+"/Project", search("NOTES", ""))))
	if want := []string{sharesDrive + "/Project/notes.txt"}; !slices.Equal(got, want) {
		t.Fatalf("marie found %q, want %q", got, want)
	}
	if got := hrefsOf(parseMultistatus(t, e.do("marie", "REPORT", sharesDrive, search("notes", "")))); len(got) != 0 {
		t.Fatalf("the Shares drive's root found %q", got)
	}
	wantError(t, e.do("marie", "REPORT", home, search("notes", "")), http.StatusNotFound, "NotFound", "")
}

// ownCloud Web searches /dav/spaces/ itself: the matches of every space
// the user is a member of, merged in order, and of no other.
func TestReportAllSpaces(t *testing.T) {
	e := newEnv(t)
	base := seedSearch(e)
	home := e.personalSpacePath("einstein")
	e.putFile("einstein", home+"/my report.odt", "x")
	e.putFile("bob", e.personalSpacePath("bob")+"/bob's report.txt", "x")

	rec := e.do("einstein", "REPORT", "/dav/spaces/", search("report", "<oc:limit>3</oc:limit>"))
	got := hrefsOf(parseMultistatus(t, rec))
	esc := escapePath(base)
	want := []string{esc + "/Annual%20Report.pdf", escapePath(home) + "/my%20report.odt", esc + "/Reports/Q1%202024/report%20draft.TXT"}
	if !slices.Equal(got, want) || rec.Header().Get("Content-Range") != "rows 0-2/4" {
		t.Fatalf("einstein found %q (%q), want %q", got, rec.Header().Get("Content-Range"), want)
	}
	got = hrefsOf(parseMultistatus(t, e.do("bob", "REPORT", "/remote.php/dav/spaces/", search("report", ""))))
	if want := []string{"/remote.php" + escapePath(e.personalSpacePath("bob")) + "/bob%27s%20report.txt"}; !slices.Equal(got, want) {
		t.Fatalf("bob found %q, want %q", got, want)
	}
	wantStatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/", "", "Depth", "0"), http.StatusMethodNotAllowed)
}

func TestSearchTerm(t *testing.T) {
	for pattern, want := range map[string]string{
		"report":                          "report",
		" Annual Report ":                 "Annual Report",
		`name:"*annual rep*"`:             "annual rep",
		`name:"*x*" mediatype:("pdf")`:    "x",
		`mediatype:document name:*draft*`: "draft",
		"*wild*":                          "wild",
		"filename:odd":                    "filename:odd",
	} {
		if got := searchTerm(pattern); got != want {
			t.Errorf("searchTerm(%q) = %q, want %q", pattern, got, want)
		}
	}
}
