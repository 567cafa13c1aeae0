package caddymodule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// docsPages are the manual's pages whose examples are checked.
var docsPages = []string{"../docs/*.md", "../docs/recipes/*.md"}

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

// TestDocsExamplesAdapt keeps the manual honest: every ```caddyfile block
// of docs/ must be a whole Caddyfile the real adapter accepts (so every
// option it names exists and is written right), and every ```json block
// and .json file there must parse. A fragment is written in a plain
// ``` block instead.
func TestDocsExamplesAdapt(t *testing.T) {
	var pages []string
	for _, pattern := range docsPages {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, matches...)
	}
	if len(pages) == 0 {
		t.Fatal("no pages in docs/: the manual is missing")
	}
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
				if _, _, err := adapter.Adapt([]byte(b.body), map[string]any{"filename": where}); err != nil {
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
