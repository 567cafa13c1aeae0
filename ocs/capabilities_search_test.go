package ocs

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// ownCloud Web offers its search box only when dav.reports lists
// search-files, in JSON and in XML alike.
func TestCapabilitiesSearchReports(t *testing.T) {
	h := newUploadsHandler(t, false, false)
	c := capabilitiesOf(t, h)
	dav, _ := c["dav"].(map[string]any)
	if got := fmt.Sprint(dav["reports"]); got != "[search-files]" {
		t.Fatalf("dav.reports %s in %v", got, c)
	}
	w := serve(h, http.MethodGet, "/ocs/v1.php/cloud/capabilities", "X-User", "einstein")
	var env struct {
		Reports []string `xml:"data>capabilities>dav>reports>element"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil || !slices.Equal(env.Reports, []string{"search-files"}) {
		t.Fatalf("dav reports %q, %v: %s", env.Reports, err, w.Body)
	}
}

// searchReports is dav.reports as JSON decodes it.
var searchReports = []any{"search-files"}
