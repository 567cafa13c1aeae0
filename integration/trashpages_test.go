package integration

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
)

// The trash-bin root pages on the wire through the real Caddy and the
// cluster's balancer: ?limit=N answers N items and a Link to the next
// page until the last, which together are the complete listing, in its
// order; a bad page is a 400 in the DAV shape.
func TestTrashPagesOnTheWire(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{}, trashPagesScenario)
}

var nextPageLink = regexp.MustCompile(`^<(\?[^>]+)>; rel="next"$`)

func trashPagesScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	u := undoSpace{c: c, ref: personalSpaceRef(t, s, "einstein")}
	for i := range 7 {
		name := fmt.Sprintf("paged%d.txt", i)
		u.put(http.StatusCreated, name, name)
		c.expect(http.StatusNoContent, http.MethodDelete, u.path(name), "")
	}
	var complete []string
	for _, it := range u.trash() {
		complete = append(complete, it.key)
	}
	if len(complete) != 7 {
		t.Fatalf("the complete listing has %d items, want 7", len(complete))
	}

	var paged []string
	var sizes []int
	for next := u.trashPath("") + "?limit=3"; next != ""; {
		resp, body := c.expect(http.StatusMultiStatus, "PROPFIND", next, trashPropsBody, "Depth", "1", "Content-Type", "application/xml")
		responses, err := parseMultistatus([]byte(body))
		if err != nil {
			t.Fatalf("PROPFIND %s: %v", next, err)
		}
		sizes = append(sizes, len(responses)-1)
		for _, r := range responses {
			if key := u.trashHrefRest(r.href); key != "" {
				paged = append(paged, key)
			}
		}
		next = ""
		if link := resp.Header.Get("Link"); link != "" {
			m := nextPageLink.FindStringSubmatch(link)
			if m == nil {
				t.Fatalf("Link %q names no next page", link)
			}
			next = u.trashPath("") + m[1]
		}
	}
	if !slices.Equal(sizes, []int{3, 3, 1}) || !slices.Equal(paged, complete) {
		t.Fatalf("pages of %v items list %v, want 3, 3, 1 listing %v", sizes, paged, complete)
	}
	for _, query := range []string{"?limit=0", "?limit=1001", "?limit=2&after=not-a-key"} {
		_, body := c.expect(http.StatusBadRequest, "PROPFIND", u.trashPath("")+query, trashPropsBody, "Depth", "1")
		wantDAVError(t, body, "BadRequest")
	}
}
