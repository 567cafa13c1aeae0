package integration

import (
	"os"
	"strings"
	"testing"
)

// TestWebBesideSiteIsTheDocumented keeps webBesideCaddyfile the site
// docs/browser.md tells operators to write for ownCloud Web beside
// davspaces: every line of the test's site but the ones it must fill in
// itself (port, data directory, bundle, issuer) is a line of the page's.
func TestWebBesideSiteIsTheDocumented(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../docs/browser.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedSite(string(page), "cloud.example.org {")
	if documented == nil {
		t.Fatal("docs/browser.md has no cloud.example.org site")
	}
	_, site, ok := strings.Cut(webBesideCaddyfile, "http://127.0.0.1:%[1]d {\n")
	if !ok {
		t.Fatal("webBesideCaddyfile has no site block")
	}
	for line := range strings.SplitSeq(site, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, "%[") || strings.Contains(line, "{$") {
			continue
		}
		if !documented[line] {
			t.Errorf("the test's site has %q; docs/browser.md's has not", line)
		}
	}
}

// documentedSite returns the trimmed lines of the fenced block of a
// Markdown page that starts with the site address header.
func documentedSite(page, header string) map[string]bool {
	var lines map[string]bool
	fenced := false
	for line := range strings.SplitSeq(page, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			if fenced && lines != nil {
				return lines
			}
			fenced = !fenced
		case fenced && lines == nil && line == header:
			lines = map[string]bool{}
		case lines != nil:
			lines[strings.TrimSpace(line)] = true
		}
	}
	return lines
}
