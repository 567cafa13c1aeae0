package davhandler

import (
	"context"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestWriteXMLText(t *testing.T) {
	tests := []struct{ in, text, attr string }{
		{"plain", "plain", "plain"},
		{`a&b<c>"d'`, `a&amp;b&lt;c&gt;"d'`, `a&amp;b&lt;c&gt;&quot;d'`},
		{"t\tn\nr\r", "t\tn\nr&#xD;", "t&#x9;n&#xA;r&#xD;"},
		{"ü€😀", "ü€😀", "ü€😀"},
		{"\uFFFE\uFFFF", "\uFFFD\uFFFD", "\uFFFD\uFFFD"},
		{"nul\x00bel\x07", "nul\uFFFDbel\uFFFD", "nul\uFFFDbel\uFFFD"},
		{"bad\xffutf8\xed\xa0\x80", "bad\uFFFDutf8\uFFFD\uFFFD\uFFFD", "bad\uFFFDutf8\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		var text, attr strings.Builder
		writeXMLText(&text, tt.in)
		writeXMLAttr(&attr, tt.in)
		if text.String() != tt.text || attr.String() != tt.attr {
			t.Errorf("%q: text %q, attribute %q; want %q, %q", tt.in, text.String(), attr.String(), tt.text, tt.attr)
		}
		if appended := appendXMLText([]byte("<"), tt.in); string(appended) != "<"+tt.text {
			t.Errorf("%q: appended as text %q; want %q", tt.in, appended, "<"+tt.text)
		}
		wantReadBack(t, tt.in, text.String(), attr.String())
	}
}

// wantReadBack checks that a parser reads the escaped forms of in back as in,
// with the characters XML cannot carry replaced.
func wantReadBack(t testing.TB, in, text, attr string) {
	t.Helper()
	var doc struct {
		A    string `xml:"a,attr"`
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte(`<e a="`+attr+`">`+text+`</e>`), &doc); err != nil {
		t.Fatalf("%q: escaped forms do not parse: %v", in, err)
	}
	// Ranging over invalid UTF-8 yields U+FFFD for each bad byte.
	want := strings.Map(func(r rune) rune {
		if !isXMLChar(r) {
			return '\uFFFD'
		}
		return r
	}, in)
	if doc.Text != want || doc.A != want {
		t.Fatalf("%q read back as text %q, attribute %q", in, doc.Text, doc.A)
	}
}

func TestWriteXMLMarkup(t *testing.T) {
	var b strings.Builder
	writeXMLMarkup(&b, "<a x=\"\uFFFF\">&amp;\uFFFE\x01\xff</a>")
	if want := "<a x=\"\uFFFD\">&amp;\uFFFD\uFFFD\uFFFD</a>"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	if appended := appendXMLMarkup(nil, "<a x=\"\uFFFF\">&amp;\uFFFE\x01\xff</a>"); b.String() != string(appended) {
		t.Fatalf("appended %q, written %q", appended, b.String())
	}
}

// TestMultistatusNeverCarriesNonXMLCharacters stores, behind the handler's
// back, a name and a dead property value XML cannot carry: every listing
// must still parse.
func TestMultistatusNeverCarriesNonXMLCharacters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	space, err := e.store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	name, wantName := "bad\uFFFE\uFFFF", "bad\uFFFD\uFFFD"
	folder, err := e.store.Mkdir(ctx, space.ID, space.ID, name)
	if err != nil {
		// The store may refuse such names itself; the value still counts.
		name, wantName = "plain", "plain"
		folder, err = e.store.Mkdir(ctx, space.ID, space.ID, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	err = e.store.PatchProps(ctx, space.ID, folder.ID, []storage.PropPatch{{Property: storage.Property{
		Name:  storage.PropName{Space: "urn:x\uFFFE", Local: "p"},
		Value: "<v xmlns=\"urn:y\">\uFFFF\x00</v>",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"", strings.Replace(propfindBody, "%s", "<oc:name/><d:displayname/>", 1)} {
		res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", body, "Depth", "1"))
		if len(res) != 2 {
			t.Fatalf("%d responses, want 2", len(res))
		}
		if got := res[1].Props[nsOC+" name"]; got != wantName {
			t.Errorf("oc:name %q", got)
		}
	}
}
