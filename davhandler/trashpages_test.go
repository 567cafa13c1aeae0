package davhandler

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// propfindTrash sends a Depth 1 PROPFIND of the trash to target, a path
// already escaped with its query, as user.
func (e *env) propfindTrash(user, target string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest("PROPFIND", target, nil)
	req.SetBasicAuth(user, "x")
	req.Header.Set("Depth", "1")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

var nextLink = regexp.MustCompile(`^<(\?[^>]+)>; rel="next"$`)

// TestTrashPages: the trash root at Depth 1 lists every item, newest
// first, across the store's pages; ?limit=N pages it on the wire, each
// answer naming the next in a Link header until the last; a bad page is
// a 400 in the DAV shape.
func TestTrashPages(t *testing.T) {
	e := newEnv(t)
	space := e.personalSpaceID("einstein")
	base := escapePath(trashPath(space))
	const n = firstReadDirPage + readDirPage + 3 // three store pages
	for i := range n {
		e.putFile("einstein", fmt.Sprintf("/webdav/f%d.txt", i), "x")
		wantStatus(t, e.do("einstein", "DELETE", fmt.Sprintf("/webdav/f%d.txt", i), ""), http.StatusNoContent)
	}

	all := parseMultistatus(t, e.propfindTrash("einstein", base))
	if len(all) != n+1 {
		t.Fatalf("the complete listing has %d responses, want the root and %d items", len(all), n)
	}
	var hrefs []string
	var stamps []int64
	for _, r := range all[1:] {
		hrefs = append(hrefs, r.Href)
		ts, _ := strconv.ParseInt(r.Props[nsOC+" trashbin-delete-timestamp"], 10, 64)
		stamps = append(stamps, -ts)
	}
	if !slices.IsSorted(stamps) {
		t.Error("the complete listing is not newest first")
	}
	if len(slices.Compact(slices.Sorted(slices.Values(hrefs)))) != n {
		t.Error("the complete listing repeats an item")
	}

	var paged []string
	target, pages := base+"?limit=100", 0
	for target != "" {
		rec := e.propfindTrash("einstein", target)
		rs := parseMultistatus(t, rec)
		if rs[0].Href != base+"/" {
			t.Fatalf("page %d starts with %q, not the root", pages, rs[0].Href)
		}
		for _, r := range rs[1:] {
			paged = append(paged, r.Href)
		}
		pages++
		target = ""
		if link := rec.Header().Get("Link"); link != "" {
			m := nextLink.FindStringSubmatch(link)
			if m == nil || len(rs) != 101 {
				t.Fatalf("page %d of %d items says Link %q", pages, len(rs)-1, link)
			}
			target = base + m[1]
		}
	}
	if wantPages := n/100 + 1; pages != wantPages || !slices.Equal(paged, hrefs) {
		t.Errorf("%d pages listed %d items, want %d pages with the %d of the complete listing in its order", pages, len(paged), wantPages, n)
	}

	key := trashKey(t, hrefs[0])
	for _, q := range []string{"limit=0", "limit=-1", "limit=x", "limit=1001", "limit=", "after=" + key,
		"limit=5&after=nokey", "limit=5&after=" + url.QueryEscape("a/b.c"), "limit=5&after=12."} {
		wantError(t, e.propfindTrash("einstein", base+"?"+q), http.StatusBadRequest, exceptions[http.StatusBadRequest], "")
	}
	if rs := parseMultistatus(t, e.propfindTrash("einstein", base+"?limit=5&after=1.x")); len(rs) != 1 {
		t.Errorf("a page after the oldest item has %d responses, want the root alone", len(rs))
	}
}
