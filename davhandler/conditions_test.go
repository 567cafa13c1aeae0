package davhandler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestETagListMatches(t *testing.T) {
	tests := []struct {
		list        string
		strong      bool // If-Match
		weak        bool // If-None-Match
		malformed   bool
		description string
	}{
		{list: `"abc"`, strong: true, weak: true, description: "one tag"},
		{list: `W/"abc"`, strong: false, weak: true, description: "weak tag"},
		{list: `"x", W/"abc"`, strong: false, weak: true, description: "weak in a list"},
		{list: `"x", "abc"`, strong: true, weak: true, description: "second of two"},
		{list: `"x","abc"`, strong: true, weak: true, description: "no space"},
		{list: ` , "abc" ,`, strong: true, weak: true, description: "empty list elements"},
		{list: `*`, strong: true, weak: true, description: "star"},
		{list: `"a,bc"`, strong: false, weak: false, description: "comma inside quotes is one tag"},
		{list: `"a,bc", "abc"`, strong: true, weak: true, description: "comma inside quotes then the tag"},
		{list: `"abcd"`, strong: false, weak: false, description: "other tag"},
		{list: `"ABC"`, strong: false, weak: false, description: "case matters"},
		{list: `w/"abc"`, malformed: true, description: "lower-case weak prefix"},
		{list: `abc`, malformed: true, description: "unquoted"},
		{list: `"abc`, malformed: true, description: "unterminated"},
		{list: `"abc" "abc"`, malformed: true, description: "missing comma"},
		{list: `"a b"`, malformed: true, description: "space inside"},
		{list: `*, "abc"`, malformed: true, description: "star in a list"},
		{list: `,`, malformed: true, description: "no tag"},
	}
	for _, tt := range tests {
		t.Run(tt.description, func(t *testing.T) {
			tags, err := parseETagList(tt.list)
			if (err != nil) != tt.malformed {
				t.Fatalf("parseETagList(%q) error %v, want malformed=%v", tt.list, err, tt.malformed)
			}
			if err != nil {
				return
			}
			if got := tags.matches("abc", true); got != tt.strong {
				t.Errorf("strong match of %q = %v", tt.list, got)
			}
			if got := tags.matches("abc", false); got != tt.weak {
				t.Errorf("weak match of %q = %v", tt.list, got)
			}
		})
	}
}

func TestIfMatchIsStrong(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "original"), http.StatusCreated)
	etag := e.do("einstein", "HEAD", "/webdav/f.txt", "").Header().Get("ETag")
	tests := []struct {
		name   string
		hdr    []string
		status int
	}{
		{"weak If-Match", []string{"If-Match", "W/" + etag}, http.StatusPreconditionFailed},
		{"malformed If-Match", []string{"If-Match", etag[1:]}, http.StatusBadRequest},
		{"malformed If-None-Match", []string{"If-None-Match", "W/"}, http.StatusBadRequest},
		{"weak If-None-Match matches", []string{"If-None-Match", "W/" + etag}, http.StatusPreconditionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "changed", tt.hdr...), tt.status)
		})
	}
	// A list may come in several header lines.
	req := httptest.NewRequest("PUT", "/webdav/f.txt", strings.NewReader("changed"))
	req.SetBasicAuth("einstein", "x")
	req.Header.Add("If-Match", `"nope"`)
	req.Header.Add("If-Match", etag)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusNoContent)
}
