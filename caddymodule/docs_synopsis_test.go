package caddymodule

import (
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// synopsisHeader is the first line of a directive's synopsis in the
// manual: a plain block that lists every subdirective with placeholders
// such as <url>, which no adapter takes as a whole.
var synopsisHeader = regexp.MustCompile(`^(davspaces|oidc_auth|webfinger)( \[<matcher>\])? \{$`)

// synopsisOption is one subdirective a synopsis names: its name, and the
// block it sits in below the directive ("" at the top, else the block's
// header with placeholders filled in).
type synopsisOption struct {
	directive, parent, name string
	line                    int
}

// synopsisOptions returns the subdirectives a synopsis block names, one
// and two levels below its directive.
func synopsisOptions(b fencedBlock) []synopsisOption {
	lines := strings.Split(strings.TrimRight(b.body, "\n"), "\n")
	m := synopsisHeader.FindStringSubmatch(lines[0])
	if m == nil {
		return nil
	}
	var opts []synopsisOption
	parent := ""
	for i, line := range lines[1:] {
		depth := len(line) - len(strings.TrimLeft(line, "\t"))
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.ContainsAny(fields[0][:1], "}<#…") {
			continue
		}
		opt := synopsisOption{directive: m[1], name: fields[0], line: b.line + 2 + i}
		switch depth {
		case 1:
			parent = ""
			if code, _, _ := strings.Cut(line, " #"); strings.HasSuffix(strings.TrimSpace(code), "{") {
				parent = blockHeader(fields)
			}
		case 2:
			opt.parent = parent
		default:
			continue
		}
		opts = append(opts, opt)
	}
	return opts
}

// blockHeader is a synopsis line that opens a block, up to its '{', with
// each placeholder filled in by a word the parsers take as a name.
func blockHeader(fields []string) string {
	var words []string
	for _, f := range fields {
		if f == "{" {
			break
		}
		if strings.HasPrefix(f, "<") || strings.HasPrefix(f, "[") {
			f = "x"
		}
		words = append(words, f)
	}
	return strings.Join(words, " ")
}

// TestDocsSynopsesNameKnownOptions checks the synopses the adapter cannot
// take whole: each subdirective they name, set alone in its block, must
// be one the directive's parser knows (its arguments may be wrong, its
// name may not).
func TestDocsSynopsesNameKnownOptions(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	synopses, checked := 0, 0
	for _, page := range manualPages(t) {
		for _, b := range fencedBlocksOf(t, page) {
			opts := synopsisOptions(b)
			if b.lang != "" || len(opts) == 0 {
				continue
			}
			synopses++
			for _, o := range opts {
				inner := o.name
				if o.parent != "" {
					inner = o.parent + " {\n\t\t\t" + o.name + "\n\t\t}"
				}
				site := "example.org {\n\t" + o.directive + " {\n\t\t" + inner + "\n\t}\n}\n"
				_, _, err := adapter.Adapt([]byte(site), nil)
				if err != nil && strings.Contains(err.Error(), "unrecognized") {
					t.Errorf("%s:%d: %s names %q, which its parser does not know: %v", page, o.line, o.directive, o.name, err)
				}
				checked++
			}
		}
	}
	if synopses < 3 || checked == 0 {
		t.Errorf("found %d synopses naming %d options, want the davspaces, oidc_auth and webfinger ones", synopses, checked)
	}
}

func TestSynopsisOptions(t *testing.T) {
	b := fencedBlock{line: 10, body: "webfinger [<matcher>] {\n" +
		"\tissuer <url>   # the issuer\n" +
		"\tinstance {     # repeatable\n" +
		"\t\tclaim <claim>\n" +
		"\t\t<user> <hash>\n" +
		"\t}\n" +
		"\tspace <name> {\n" +
		"\t\tid <id>\n" +
		"\t}\n" +
		"}\n"}
	want := []synopsisOption{
		{"webfinger", "", "issuer", 12},
		{"webfinger", "", "instance", 13},
		{"webfinger", "instance", "claim", 14},
		{"webfinger", "", "space", 17},
		{"webfinger", "space x", "id", 18},
	}
	got := synopsisOptions(b)
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("option %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := synopsisOptions(fencedBlock{body: "request_body {\n\tmax_size 1GB\n}\n"}); got != nil {
		t.Errorf("a block that is no synopsis gave %+v", got)
	}
}
