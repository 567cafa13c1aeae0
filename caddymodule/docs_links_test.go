package caddymodule

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// markdownLink matches an inline link or image target: [label](target).
// A label may span lines, as wrapped prose does.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlug is the anchor GitHub gives a heading: lowercase, spaces to
// '-', punctuation dropped except '-' and '_'.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestHeadingSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Limits", "limits"},
		{"`davspaces`", "davspaces"},
		{"`caddy davspaces check [--deep] [--repair]`", "caddy-davspaces-check---deep---repair"},
		{"Resumable uploads (TUS)", "resumable-uploads-tus"},
		{"Beside Apache and nginx: `scripts/bench`", "beside-apache-and-nginx-scriptsbench"},
		{"ownCloud desktop 7.x", "owncloud-desktop-7x"},
		{"The original service's settings", "the-original-services-settings"},
		{"`oidc_auth`", "oidc_auth"},
		{"Sign-in reference: `oidc_auth`, `webfinger`, app passwords, Login Flow v2", "sign-in-reference-oidc_auth-webfinger-app-passwords-login-flow-v2"},
		{"PUT 1 GiB × 3 — über", "put-1-gib--3--über"},
	}
	for _, tt := range tests {
		if got := headingSlug(tt.heading); got != tt.want {
			t.Errorf("headingSlug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// pageAnchors returns the anchors of a Markdown page's headings (outside
// fenced blocks), a repeated heading numbered as GitHub does.
func pageAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if fenced || level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		slug := headingSlug(line[level:])
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// withoutFences drops fenced code blocks, whose brackets are not links.
func withoutFences(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestDocsLinksResolve keeps the manual's cross-references working after
// pages move: every relative link of the README and docs/ points at a file
// that exists, and every #anchor at a heading of the page it names.
func TestDocsLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = pageAnchors(string(text))
		return anchors[page]
	}
	links := 0
	for _, page := range manualPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(withoutFences(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: the link %s points at no file", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
				t.Errorf("%s: the link %s points at no heading of %s", page, target, dest)
			}
		}
	}
	if links == 0 {
		t.Error("no relative link in the manual: the check checks nothing")
	}
}
