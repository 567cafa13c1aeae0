package davhandler

import (
	"net/http"
	"testing"
)

// TestNamesXMLCannotCarry checks that every way a name enters a request
// refuses characters an XML listing could not hold, invalid UTF-8 and
// backslashes.
func TestNamesXMLCannotCarry(t *testing.T) {
	bad := map[string]string{
		"U+FFFE":           "%EF%BF%BE",
		"U+FFFF":           "%EF%BF%BF",
		"surrogate":        "%ED%A0%80",
		"invalid UTF-8 FE": "%FE",
		"invalid UTF-8 FF": "a%FFb",
		"truncated UTF-8":  "a%C3",
		"backslash":        "a%5Cb",
		"backslash climb":  "..%5C..%5Cx",
	}
	for name, seg := range bad {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/ok.txt", "x"), http.StatusCreated)
			space := e.personalSpacePath("einstein")
			requests := []struct {
				label, method, path string
				hdr                 []string
			}{
				{"PUT by path", "PUT", "/webdav/" + seg, nil},
				{"MKCOL by path", "MKCOL", "/remote.php/webdav/" + seg, nil},
				{"PUT in a space", "PUT", space + "/" + seg, nil},
				{"files user", "PROPFIND", "/dav/files/" + seg + "/", []string{"Depth", "0"}},
				{"space id", "PROPFIND", "/dav/spaces/" + seg + "/", []string{"Depth", "0"}},
				{"Destination", "MOVE", "/webdav/ok.txt", []string{"Destination", "http://example.com/webdav/" + seg}},
				{"Destination in a space", "COPY", "/webdav/ok.txt", []string{"Destination", space + "/" + seg}},
			}
			for _, r := range requests {
				body := ""
				if r.method == "PUT" {
					body = "x"
				}
				rec := e.do("einstein", r.method, r.path, body, r.hdr...)
				if rec.Code != http.StatusBadRequest {
					t.Errorf("%s: status %d, want 400", r.label, rec.Code)
					continue
				}
				wantError(t, rec, http.StatusBadRequest, "BadRequest", "name validation failed: ")
			}
			listing := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", "", "Depth", "1"))
			if len(listing) != 2 {
				t.Fatalf("listing holds %d entries, want the folder and ok.txt", len(listing))
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"plain.txt", true},
		{"ünïcødé €", true},
		{"emoji 😀", true},
		{"private use \uE000", true},
		{"\uFFFD replacement", true},
		{"a\\b", false},
		{"\uFFFE", false},
		{"\uFFFF", false},
		{"a\xffb", false},
		{"\xed\xa0\x80", false},
		{"tab\tname", false},
		{"del\x7f", false},
		{"..", false},
	}
	for _, tt := range tests {
		if err := validateName(tt.name); (err == nil) != tt.ok {
			t.Errorf("validateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
