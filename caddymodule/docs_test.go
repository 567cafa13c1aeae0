package caddymodule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// manualPages returns the manual's pages whose examples and links are
// checked: the README and every Markdown file under docs/.
func manualPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"../README.md"}
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("listing docs/: %v", err)
	}
	if len(pages) == 1 {
		t.Fatal("no pages in docs/: the manual is missing")
	}
	return pages
}

// fencedBlock is one fenced code block of a Markdown page.
type fencedBlock struct {
	lang string
	line int // of the opening fence
	body string
}

// fencedBlocks returns the fenced code blocks of a Markdown text.
func fencedBlocks(text string) []fencedBlock {
	var blocks []fencedBlock
	var open *fencedBlock
	var body strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		switch {
		case open == nil && fence:
			open = &fencedBlock{lang: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "```")), line: n}
			body.Reset()
		case open != nil && fence:
			open.body = body.String()
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			body.WriteString(line + "\n")
		}
	}
	return blocks
}

// fencedBlocksOf returns the fenced code blocks of a Markdown file.
func fencedBlocksOf(t *testing.T, page string) []fencedBlock {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return fencedBlocks(string(text))
}

func TestFencedBlocks(t *testing.T) {
	text := "intro\n```caddyfile\na {\n}\n```\ntext\n```json\n{}\n```\n```\nplain\n```\n"
	got := fencedBlocks(text)
	want := []fencedBlock{{"caddyfile", 2, "a {\n}\n"}, {"json", 7, "{}\n"}, {"", 10, "plain\n"}}
	if len(got) != len(want) {
		t.Fatalf("got %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// adaptExample adapts one Caddyfile example of the manual. An example that
// shows a directive's block alone (the adapter says a directive must
// appear in a site block) is adapted inside a site, as it would be used.
func adaptExample(adapter caddyconfig.Adapter, body, where string) error {
	_, _, err := adapter.Adapt([]byte(body), map[string]any{"filename": where})
	if err == nil || !strings.Contains(err.Error(), "directives must appear in a site block") {
		return err
	}
	site := "example.org {\n" + body + "}\n"
	if _, _, err := adapter.Adapt([]byte(site), map[string]any{"filename": where}); err != nil {
		return fmt.Errorf("inside a site block: %w", err)
	}
	return nil
}

// TestDocsExamplesAdapt keeps the manual honest: every ```caddyfile block
// of the README and docs/ must be a Caddyfile the real adapter accepts (so
// every option it names exists and is written right), and every ```json
// block and .json file there must parse. A directive's block alone is adapted
// inside a site; a synopsis or a fragment with elisions is written in a
// plain ``` block instead.
func TestDocsExamplesAdapt(t *testing.T) {
	pages := manualPages(t)
	adapter := caddyconfig.GetAdapter("caddyfile")
	caddyfiles := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range fencedBlocks(string(text)) {
			where := page + ":" + strconv.Itoa(b.line)
			switch b.lang {
			case "caddyfile":
				caddyfiles++
				if err := adaptExample(adapter, b.body, where); err != nil {
					t.Errorf("%s: the Caddyfile does not adapt: %v", where, err)
				}
			case "json":
				if !json.Valid([]byte(b.body)) {
					t.Errorf("%s: the JSON block does not parse", where)
				}
			}
		}
	}
	if caddyfiles == 0 {
		t.Error("no ```caddyfile block in docs/: the check checks nothing")
	}
	files, _ := filepath.Glob("../docs/recipes/*.json")
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(bytes.TrimSpace(body)) {
			t.Errorf("%s does not parse as JSON", f)
		}
	}
}
