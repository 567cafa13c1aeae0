package webfinger

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"text/template"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestInstanceLinks(t *testing.T) {
	fizz := map[string]string{"foo": "bar"}
	tests := []struct {
		name   string
		rules  []Rule
		claims map[string]any
		want   []testLink // instance links only
		debug  int        // rules logged as giving no link
	}{
		{
			name:   "default rules",
			rules:  nil,
			claims: alice,
			want:   []testLink{instanceLink(testPlatform, defaultTitles)},
		},
		{
			name:   "default rules without sub",
			claims: map[string]any{"email": "a@b"},
		},
		{
			name:   "default rules with empty sub",
			claims: map[string]any{"sub": ""},
		},
		{
			name:   "no rules",
			rules:  []Rule{},
			claims: alice,
		},
		{
			// The oCIS unit test, verbatim.
			name:   "template with claims and break",
			rules:  []Rule{{Claim: "customclaim", Regex: ".+@.+\\..+", Href: "https://{{.otherclaim}}.domain.tld", Titles: fizz, Break: true}},
			claims: map[string]any{"customclaim": "some@fizz.buzz", "otherclaim": "someone"},
			want:   []testLink{instanceLink("https://someone.domain.tld", fizz)},
		},
		{
			name: "regex miss",
			rules: []Rule{
				{Claim: "email", Regex: "@example\\.com$", Href: "https://com.example.org"},
				{Claim: "email", Regex: "@example\\.org$", Href: "https://org.example.org"},
			},
			claims: alice,
			want:   []testLink{instanceLink("https://org.example.org", nil)},
		},
		{
			name:   "regex is unanchored",
			rules:  []Rule{{Claim: "email", Regex: "example", Href: "https://a.example.org"}},
			claims: alice,
			want:   []testLink{instanceLink("https://a.example.org", nil)},
		},
		{
			name:   "missing tested claim",
			rules:  []Rule{{Claim: "tenant", Regex: ".*", Href: "https://a.example.org"}},
			claims: alice,
		},
		{
			name: "array claim",
			rules: []Rule{
				{Claim: "groups", Regex: "^admins$", Href: "https://admin.example.org", Titles: map[string]string{"en": "Admin", "de": "Verwaltung"}},
				{Claim: "groups", Regex: "^students$", Href: "https://students.example.org"},
				{Claim: "roles", Regex: "^editor$", Href: "https://editors.example.org"},
			},
			claims: map[string]any{"groups": []any{"staff", 7.0, "admins"}, "roles": []string{"viewer", "editor"}},
			want: []testLink{
				instanceLink("https://admin.example.org", map[string]string{"en": "Admin", "de": "Verwaltung"}),
				instanceLink("https://editors.example.org", nil),
			},
		},
		{
			name:   "array elements that are not strings do not match",
			rules:  []Rule{{Claim: "ids", Regex: "7", Href: "https://a.example.org"}},
			claims: map[string]any{"ids": []any{7.0, true}},
		},
		{
			name: "number and bool claims are formatted",
			rules: []Rule{
				{Claim: "uid", Regex: "^12345678$", Href: "https://uid.example.org/{{.uid}}"},
				{Claim: "email_verified", Regex: "^true$", Href: "https://verified.example.org"},
				{Claim: "small", Regex: "^0\\.5$", Href: "https://small.example.org/{{.small}}"},
				{Claim: "n", Regex: "^42$", Href: "https://json-number.example.org"},
			},
			claims: map[string]any{"uid": 12345678.0, "email_verified": true, "small": 0.5, "n": json.Number("42")},
			want: []testLink{
				instanceLink("https://uid.example.org/12345678", nil),
				instanceLink("https://verified.example.org", nil),
				instanceLink("https://small.example.org/0.5", nil),
				instanceLink("https://json-number.example.org", nil),
			},
		},
		{
			name:   "structured claims do not match",
			rules:  []Rule{{Claim: "address", Regex: ".*", Href: "https://a.example.org"}},
			claims: map[string]any{"address": map[string]any{"locality": "Berlin"}},
		},
		{
			name:   "null claims do not match",
			rules:  []Rule{{Claim: "sub", Regex: ".*", Href: "https://a.example.org"}},
			claims: map[string]any{"sub": nil},
		},
		{
			name: "no break: every matching rule adds a link, in rule order",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "https://one.example.org"},
				{Claim: "email", Regex: ".+", Href: "https://two.example.org"},
				{Claim: "sub", Regex: ".+", Href: "https://three.example.org"},
			},
			claims: alice,
			want: []testLink{
				instanceLink("https://one.example.org", nil),
				instanceLink("https://two.example.org", nil),
				instanceLink("https://three.example.org", nil),
			},
		},
		{
			name: "break stops after a matching rule only",
			rules: []Rule{
				{Claim: "email", Regex: "@example\\.com$", Href: "https://com.example.org", Break: true},
				{Claim: "sub", Regex: ".+", Href: "https://one.example.org", Break: true},
				{Claim: "sub", Regex: ".+", Href: "https://two.example.org"},
			},
			claims: alice,
			want:   []testLink{instanceLink("https://one.example.org", nil)},
		},
		{
			name: "templates with claims, PLATFORM_URL and OCIS_URL",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}/users/{{.preferred_username}}"},
				{Claim: "sub", Regex: ".+", Href: "{{.OCIS_URL}}?mail={{.email | urlquery}}"},
				{Claim: "sub", Regex: ".+", Href: "https://{{index .groups 0}}.example.org"},
			},
			claims: alice,
			want: []testLink{
				instanceLink(testPlatform+"/users/alice", nil),
				instanceLink(testPlatform+"?mail=alice%40example.org", nil),
				instanceLink("https://staff.example.org", nil),
			},
		},
		{
			name: "a claim cannot shadow the platform URL",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}/{{.OCIS_URL}}"},
			},
			claims: map[string]any{"sub": "x", "PLATFORM_URL": "https://evil.example.org", "OCIS_URL": "https://evil.example.org"},
			want:   []testLink{instanceLink(testPlatform+"/"+testPlatform, nil)},
		},
		{
			name: "missing claim in the template gives no link, later rules still apply",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "https://{{.tenant}}.example.org", Titles: fizz},
				{Claim: "sub", Regex: ".+", Href: "https://fallback.example.org"},
			},
			claims: alice,
			want:   []testLink{instanceLink("https://fallback.example.org", nil)},
			debug:  1,
		},
		{
			name:   "null claim in the template gives no link",
			rules:  []Rule{{Claim: "sub", Regex: ".+", Href: "https://{{.tenant}}.example.org"}},
			claims: map[string]any{"sub": "x", "tenant": nil},
			debug:  1,
		},
		{
			name:   "missing nested claim gives no link",
			rules:  []Rule{{Claim: "sub", Regex: ".+", Href: "https://{{.org.name}}.example.org"}},
			claims: map[string]any{"sub": "x", "org": map[string]any{"id": "1"}},
			debug:  1,
		},
		{
			name:   "null nested claim gives no link",
			rules:  []Rule{{Claim: "sub", Regex: ".+", Href: "https://{{.org.name}}.example.org"}},
			claims: map[string]any{"sub": "x", "org": map[string]any{"name": nil}},
			debug:  1,
		},
		{
			name:   "nested claim",
			rules:  []Rule{{Claim: "sub", Regex: ".+", Href: "https://{{.org.name}}.example.org"}},
			claims: map[string]any{"sub": "x", "org": map[string]any{"name": "acme"}},
			want:   []testLink{instanceLink("https://acme.example.org", nil)},
		},
		{
			name: "href that is not a URL gives no link",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "{{.preferred_username}}"},
				{Claim: "sub", Regex: ".+", Href: "https://{{.preferred_username}}:x:y/"},
				{Claim: "sub", Regex: ".+", Href: "https://{{.empty}}"},
				{Claim: "sub", Regex: ".+", Href: "ftp://{{.preferred_username}}.example.org"},
				{Claim: "sub", Regex: ".+", Href: "https://ok.example.org"},
			},
			claims: map[string]any{"sub": "x", "preferred_username": "alice", "empty": ""},
			want:   []testLink{instanceLink("https://ok.example.org", nil)},
			debug:  4,
		},
		{
			name: "a matching rule whose link fails still breaks",
			rules: []Rule{
				{Claim: "sub", Regex: ".+", Href: "https://{{.tenant}}.example.org", Break: true},
				{Claim: "sub", Regex: ".+", Href: "https://fallback.example.org"},
			},
			claims: alice,
			debug:  1,
		},
		{
			name:   "no claims at all",
			claims: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			fv := &fakeVerifier{ids: map[string]map[string]any{"t": tt.claims}}
			h := newHandler(t, Config{PlatformURL: testPlatform, Rules: tt.rules, Verifier: fv, Logger: zap.New(core)})
			w := do(h, http.MethodGet, "/?resource=acct:alice@example.org", "Bearer t")
			if strings.Contains(w.Body.String(), "no value") {
				t.Errorf("body contains <no value>: %s", w.Body)
			}
			doc := decode(t, w)
			want := append([]testLink{issuerLink()}, tt.want...)
			if !reflect.DeepEqual(doc.Links, want) {
				t.Errorf("links\n got %+v\nwant %+v", doc.Links, want)
			}
			if n := logs.FilterMessage("webfinger: instance rule gives no link").Len(); n != tt.debug {
				t.Errorf("%d rules logged as giving no link, want %d: %v", n, tt.debug, logs.All())
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q for a signed-in answer", w.Header().Get("Cache-Control"))
			}
		})
	}
}

func TestIdentityIsNotModified(t *testing.T) {
	claims := map[string]any{"sub": "x", "tenant": nil}
	fv := &fakeVerifier{ids: map[string]map[string]any{"t": claims}}
	h := newHandler(t, Config{PlatformURL: testPlatform, Verifier: fv})
	decode(t, do(h, http.MethodGet, "/?resource=acct:a@b", "Bearer t"))
	if want := (map[string]any{"sub": "x", "tenant": nil}); !reflect.DeepEqual(claims, want) {
		t.Errorf("claims changed to %v", claims)
	}
}

func TestWant(t *testing.T) {
	rules := []Rule{
		{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}"},
		{Claim: "email", Regex: ".+", Href: "https://{{.preferred_username}}.example.org/{{.OCIS_URL}}/{{.sub}}"},
		{Claim: "groups", Regex: ".+", Href: "https://{{with .org}}{{.name}}{{$.tenant}}{{else}}{{.fallback}}{{end}}.example.org"},
		{Claim: "email", Regex: ".+", Href: `https://{{if .a}}{{.b.c}}{{end}}{{range .list}}{{.inner}}{{end}}{{printf "%s" .d | urlquery}}{{(.e).f}}`},
		{Claim: "x", Regex: ".+", Href: `{{define "t"}}{{.g}}{{end}}https://{{template "t" .}}`},
	}
	wantClaims := []string{"sub", "email", "preferred_username", "groups", "org", "tenant", "fallback", "a", "b", "list", "d", "e", "x", "g"}
	fv := &fakeVerifier{ids: map[string]map[string]any{"t": alice}}
	h := newHandler(t, Config{Rules: rules, Verifier: fv})
	if !slices.Equal(h.want, wantClaims) {
		t.Errorf("want = %q\n      expected %q", h.want, wantClaims)
	}
	do(h, http.MethodGet, "/?resource=acct:a@b", "Bearer t")
	do(h, http.MethodGet, "/?resource=acct:a@b&rel="+RelServerInstance, "Bearer t")
	// Without instance links, nothing is wanted: no userinfo round trip.
	do(h, http.MethodGet, "/?resource=acct:a@b&rel="+RelIssuer, "Bearer t")
	noInstance := newHandler(t, Config{Rules: rules, Verifier: fv, Relations: []string{RelIssuer}})
	do(noInstance, http.MethodGet, "/?resource=acct:a@b", "Bearer t")
	wantCalls := []verifyCall{{"t", wantClaims}, {"t", wantClaims}, {"t", nil}, {"t", nil}}
	if !reflect.DeepEqual(fv.calls, wantCalls) {
		t.Errorf("calls %q, want %q", fv.calls, wantCalls)
	}

	if got := newHandler(t, Config{}).want; !slices.Equal(got, []string{"sub"}) {
		t.Errorf("default want = %q", got)
	}
	if got := newHandler(t, Config{Rules: []Rule{}}).want; len(got) != 0 {
		t.Errorf("want without rules = %q", got)
	}
}

func TestTemplateFields(t *testing.T) {
	tests := map[string][]string{
		"https://static.example.org":                              nil,
		"{{.PLATFORM_URL}}":                                       {"PLATFORM_URL"},
		"{{.a}}{{.a.b}}{{$.a}}":                                   {"a"},
		"{{$x := .a}}{{$x.b}}":                                    {"a"},
		"{{with $y := .a}}{{$y}}{{.z}}{{end}}":                    {"a"},
		"{{range $i, $e := .l}}{{$.m}}{{end}}":                    {"l", "m"},
		"{{if and .a (not .b)}}{{.c}}{{else if .d}}{{.e}}{{end}}": {"a", "b", "c", "d", "e"},
		"{{with .a}}{{else with .b}}{{.c}}{{else}}{{.d}}{{end}}":  {"a", "b", "d"},
	}
	for src, want := range tests {
		tmpl := template.Must(template.New("href").Parse(src))
		if got := templateFields(tmpl); !slices.Equal(got, want) {
			t.Errorf("templateFields(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestMatchesScalars(t *testing.T) {
	r, err := compileRule(Rule{Claim: "c", Regex: "^1$", Href: "https://x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"1", 1.0, float32(1), 1, int64(1), json.Number("1"), []any{"0", "1"}, []string{"1"}} {
		if !r.matches(map[string]any{"c": v}) {
			t.Errorf("%T %v does not match ^1$", v, v)
		}
	}
	for _, v := range []any{"2", 1.5, []any{1.0}, []string{}, map[string]any{"1": "1"}, nil, struct{}{}} {
		if r.matches(map[string]any{"c": v}) {
			t.Errorf("%T %v matches ^1$", v, v)
		}
	}
}

// The simple renderer must say exactly what text/template says.
func TestSimpleHrefMatchesTemplate(t *testing.T) {
	claims := map[string]any{
		"s": "alice", "empty": "", "t": true, "f": false, "whole": 12345678.0, "neg": -3.0,
		"frac": 0.5, "huge": 1e300, "list": []any{"a", 1.0}, "obj": map[string]any{"k": "v"}, "null": nil,
		"html": "<a&b>",
	}
	hrefs := []string{
		"https://static.example.org",
		"{{.PLATFORM_URL}}",
		"{{.OCIS_URL}}/x/{{.s}}",
		"https://{{.s}}.{{.empty}}{{.t}}{{.f}}/{{.whole}}/{{.neg}}",
		"https://x/{{.frac}}", "https://x/{{.huge}}", "https://x/{{.list}}", "https://x/{{.obj}}", "https://x/{{.html}}",
		"https://x/{{.null}}", "https://x/{{.missing}}",
	}
	for _, src := range hrefs {
		r, err := compileRule(Rule{Claim: "s", Href: src})
		if err != nil {
			t.Fatal(err)
		}
		if r.simple == nil {
			t.Errorf("%q is not simple", src)
			continue
		}
		d := &hrefData{claims: claims, platform: testPlatform}
		got, ok, err := r.simple.render(d)
		if !ok {
			continue // rendered by text/template anyway
		}
		var b strings.Builder
		terr := r.href.Execute(&b, d.asMap())
		if (err != nil) != (terr != nil) || (err == nil && got != b.String()) {
			t.Errorf("%q: simple %q, %v; template %q, %v", src, got, err, b.String(), terr)
		}
	}
	for _, src := range []string{"{{.a.b}}", "{{.a | urlquery}}", "{{$x := .a}}", "{{if .a}}x{{end}}", "{{printf `%s` .a}}", `{{define "t"}}{{end}}x`} {
		r, err := compileRule(Rule{Claim: "s", Href: src})
		if err != nil {
			t.Fatal(err)
		}
		if r.simple != nil {
			t.Errorf("%q taken as simple", src)
		}
	}
}

func TestTitlesAreNotHTMLEscaped(t *testing.T) {
	fv := &fakeVerifier{ids: map[string]map[string]any{"t": alice}}
	titles := map[string]string{"en": "R&D <Cloud>", "de": "F&E"}
	h := newHandler(t, Config{PlatformURL: testPlatform, Verifier: fv, Rules: []Rule{{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}", Titles: titles}}})
	w := do(h, http.MethodGet, "/?resource=acct:a@b", "Bearer t")
	if want := `"titles":{"de":"F&E","en":"R&D <Cloud>"}}]}`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("body %s, want it to contain %s", w.Body, want)
	}
}
