package davhandler

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestDeadPropertiesRoundTrip sets a property with PROPPATCH and reads it back
// with PROPFIND: a parser must see the same elements, namespaces, attributes
// and text in both.
func TestDeadPropertiesRoundTrip(t *testing.T) {
	tests := map[string]string{
		"bare child of a namespaced property":  `<x:p xmlns:x="urn:x"><bare/></x:p>`,
		"bare child under a default namespace": `<p xmlns="urn:x"><c><bare xmlns=""><deeper/></bare></c></p>`,
		"property in no namespace":             `<p xmlns=""><c xmlns="urn:c"><bare xmlns=""/></c></p>`,
		"prefixed children and attributes":     `<x:p xmlns:x="urn:x" xmlns:y="urn:y"><y:c y:a="1" b="2" xml:lang="de"><x:d/></y:c></x:p>`,
		"one namespace under two prefixes":     `<x:p xmlns:x="urn:x" xmlns:z="urn:x"><z:c x:a="1"/></x:p>`,
		"DAV: children":                        `<x:p xmlns:x="urn:x"><d:href>/a</d:href><href/></x:p>`,
		"text, references and CDATA":           `<x:p xmlns:x="urn:x">a &amp; b &lt;c&gt; &#x1F600; <![CDATA[<raw>]]>` + "\r\n\t" + `</x:p>`,
		"mixed content":                        `<x:p xmlns:x="urn:x">one<b xmlns="urn:b">two<i>three</i></b>four</x:p>`,
		"attribute values":                     `<x:p xmlns:x="urn:x"><c a="&quot;q&quot; &amp; &lt;" t="tab&#9;nl&#10;cr&#13;"/></x:p>`,
	}
	for name, prop := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "x"), http.StatusCreated)
			patch := `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop>` + prop + `</d:prop></d:set></d:propertyupdate>`
			parseMultistatus(t, e.do("einstein", "PROPPATCH", "/webdav/f.txt", patch))
			want := propertyTokens(t, patch)
			res := e.do("einstein", "PROPFIND", "/webdav/f.txt", "", "Depth", "0")
			got := propertyTokens(t, res.Body.String(), want[0])
			if !slices.Equal(got, want) {
				t.Fatalf("read back as\n%s\nwant\n%s\nbody:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), res.Body.String())
			}
		})
	}
}

// propertyTokens returns the tokens of the first element of doc named like
// first (or the first child of a DAV:prop), in a comparable form.
func propertyTokens(t *testing.T, doc string, first ...string) []string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var out []string
	depth, inProp := 0, false
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, fmt.Sprintf("text %q", text.String()))
			text.Reset()
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			s := startString(tok)
			switch {
			case depth > 0:
				depth++
			case len(first) == 0 && inProp, len(first) > 0 && s == first[0]:
				depth = 1
			case tok.Name == xml.Name{Space: nsDAV, Local: "prop"}:
				inProp = true
				continue
			default:
				continue
			}
			flush()
			out = append(out, s)
		case xml.EndElement:
			if depth == 0 {
				continue
			}
			flush()
			out = append(out, "end {"+tok.Name.Space+"}"+tok.Name.Local)
			if depth--; depth == 0 {
				return out
			}
		case xml.CharData:
			if depth > 0 {
				text.Write(tok)
			}
		}
	}
}

// startString is an element's expanded name and its attributes other than
// namespace declarations, sorted.
func startString(el xml.StartElement) string {
	var attrs []string
	for _, a := range el.Attr {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		attrs = append(attrs, fmt.Sprintf("{%s}%s=%q", a.Name.Space, a.Name.Local, a.Value))
	}
	slices.Sort(attrs)
	return "start {" + el.Name.Space + "}" + el.Name.Local + " " + strings.Join(attrs, " ")
}

func TestParseProppatchRefusesWhatCannotRoundTrip(t *testing.T) {
	tests := map[string]string{
		"undeclared element prefix":    `<q:p/>`,
		"undeclared attribute prefix":  `<x:p><c q:a="1"/></x:p>`,
		"prefix bound to nothing":      `<x:p xmlns:q=""/>`,
		"duplicate attribute":          `<x:p><c a="1" a="2"/></x:p>`,
		"duplicate expanded attribute": `<x:p xmlns:y="urn:x"><c x:a="1" y:a="2"/></x:p>`,
		"colon at the start of a name": `<x:p><:c/></x:p>`,
		"colon at the end of a name":   `<x:p><c:/></x:p>`,
		"xmlns prefix on an element":   `<x:p><xmlns:c/></x:p>`,
		"element called xmlns":         `<x:p><xmlns/></x:p>`,
	}
	for name, prop := range tests {
		t.Run(name, func(t *testing.T) {
			body := `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop>` + prop + `</d:prop></d:set></d:propertyupdate>`
			_, err := parseProppatch([]byte(body))
			if err == nil {
				t.Fatalf("accepted %s", prop)
			}
			wantDAVStatus(t, err, http.StatusBadRequest)
		})
	}
}

func TestLongPropertyNames(t *testing.T) {
	long := strings.Repeat("n", 32<<10)
	limit := strings.Repeat("n", maxPropNameBytes)
	tests := []struct {
		name, method, body string
		status             int
	}{
		{"PROPPATCH long local name", "PROPPATCH", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:` + long + `>v</x:` + long + `></d:prop></d:set></d:propertyupdate>`, http.StatusBadRequest},
		{"PROPPATCH long namespace", "PROPPATCH", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:` + long + `"><d:set><d:prop><x:p>v</x:p></d:prop></d:set></d:propertyupdate>`, http.StatusBadRequest},
		{"PROPPATCH remove long name", "PROPPATCH", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:remove><d:prop><x:` + long + `/></d:prop></d:remove></d:propertyupdate>`, http.StatusBadRequest},
		{"PROPFIND long local name", "PROPFIND", `<d:propfind xmlns:d="DAV:" xmlns:x="urn:x"><d:prop><x:` + long + `/></d:prop></d:propfind>`, http.StatusBadRequest},
		{"PROPFIND long include", "PROPFIND", `<d:propfind xmlns:d="DAV:" xmlns:x="urn:` + long + `"><d:allprop/><d:include><x:p/></d:include></d:propfind>`, http.StatusBadRequest},
		{"PROPPATCH at the cap", "PROPPATCH", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="` + limit + `"><d:set><d:prop><x:` + limit + `>v</x:` + limit + `></d:prop></d:set></d:propertyupdate>`, http.StatusMultiStatus},
	}
	e := newEnv(t, func(c *Config) { c.MaxXMLBytes = 1 << 20 })
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "x"), http.StatusCreated)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("einstein", tt.method, "/webdav/f.txt", tt.body, "Depth", "0")
			if tt.status == http.StatusMultiStatus {
				wantStatus(t, rec, tt.status)
				return
			}
			wantError(t, rec, tt.status, "BadRequest", "longer than")
		})
	}
	all := e.do("einstein", "PROPFIND", "/webdav/f.txt", "", "Depth", "0")
	if bytes.Contains(all.Body.Bytes(), []byte(long)) {
		t.Fatal("a refused property was stored")
	}
}

// TestParsePropfindToleratesStrayText: sync clients send PROPFIND bodies
// with text where RFC 4918 has none (owncloudcmd 2.11 among them); the
// names asked for are what counts. Text outside the root element is no
// XML at all (TestXMLBodiesWithContentBesideTheRoot), and ownCloud's own
// server refuses it too.
func TestParsePropfindToleratesStrayText(t *testing.T) {
	want := []xml.Name{{Space: nsDAV, Local: "getetag"}, {Space: "http://owncloud.org/ns", Local: "permissions"}}
	bodies := map[string]string{
		"text in prop": `<?xml version="1.0" ?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>stray<d:getetag/> text <oc:permissions/>
</d:prop></d:propfind>`,
		"text in propfind":      `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">stray<d:prop><d:getetag/><oc:permissions/></d:prop>more</d:propfind>`,
		"space around the root": "\ufeff<?xml version=\"1.0\" ?>\r\n\t" + `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getetag/><oc:permissions/></d:prop></d:propfind>` + "\n<!-- end -->\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			pf, err := parsePropfind([]byte(body))
			if err != nil {
				t.Fatalf("parsePropfind: %v", err)
			}
			if pf.kind != findProp || !slices.Equal(pf.names, want) {
				t.Fatalf("got kind %v names %v, want prop %v", pf.kind, pf.names, want)
			}
		})
	}
}

// TestXMLBodiesWithContentBesideTheRoot: a body is one XML document with
// one root element; a second root, or text, an end tag or a declaration
// beside it, is a 400 with the XML error body for every method that reads
// an XML body, and changes nothing.
func TestXMLBodiesWithContentBesideTheRoot(t *testing.T) {
	const (
		propfind = `<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>`
		patch    = `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>v</x:p></d:prop></d:set></d:propertyupdate>`
		lock     = `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	)
	beside := map[string]func(root string) string{
		"a second root":                func(root string) string { return root + root },
		"a second root of its own":     func(root string) string { return root + `<x/>` },
		"text after the root":          func(root string) string { return root + "\nstray" },
		"text before the root":         func(root string) string { return "stray" + root },
		"CDATA after the root":         func(root string) string { return root + `<![CDATA[x]]>` },
		"an end tag after the root":    func(root string) string { return root + `</x>` },
		"a declaration after the root": func(root string) string { return root + `<!DOCTYPE x>` },
	}
	requests := []struct {
		method, path, root string
		hdr                []string
	}{
		{"PROPFIND", "/webdav/f.txt", propfind, []string{"Depth", "0"}},
		{"PROPFIND", ngPath("einstein", "transfer"), propfind, []string{"Depth", "1"}},
		{"PROPPATCH", "/webdav/f.txt", patch, nil},
		{"LOCK", "/webdav/f.txt", lock, nil},
	}
	e := newEnv(t, withLocks, withChunks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "x"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "transfer"), ""), http.StatusCreated)
	for name, wrap := range beside {
		for _, req := range requests {
			t.Run(name+"/"+req.method+" "+req.path, func(t *testing.T) {
				rec := e.do("einstein", req.method, req.path, wrap(req.root), req.hdr...)
				wantError(t, rec, http.StatusBadRequest, "BadRequest", "malformed XML body")
			})
		}
	}
	// Nothing was stored, and nothing was locked.
	props := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", "", "Depth", "0"))
	if v, ok := props[0].Props["urn:x p"]; ok {
		t.Fatalf("a refused PROPPATCH stored x:p = %q", v)
	}
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "changed"), http.StatusNoContent)
}

// TestDeepXMLValues: a stored XML value (a dead property's, a lock's
// owner) nests at most maxValueDepth elements; one deeper is a 400 with the
// XML error body and nothing is stored.
func TestDeepXMLValues(t *testing.T) {
	nested := func(depth int) string {
		return strings.Repeat("<a>", depth) + "v" + strings.Repeat("</a>", depth)
	}
	patch := func(depth int) string {
		return `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>` + nested(depth) + `</x:p></d:prop></d:set></d:propertyupdate>`
	}
	lock := func(depth int) string {
		return `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>` + nested(depth) + `</d:owner></d:lockinfo>`
	}
	e := newEnv(t, withLocks)
	file := func(t *testing.T) string {
		p := "/webdav/" + strings.ReplaceAll(t.Name()[strings.IndexByte(t.Name(), '/')+1:], " ", "-")
		wantStatus(t, e.do("einstein", "PUT", p, "x"), http.StatusCreated)
		return p
	}
	t.Run("property 65 deep", func(t *testing.T) {
		f := file(t)
		wantError(t, e.do("einstein", "PROPPATCH", f, patch(maxValueDepth+1)), http.StatusBadRequest, "BadRequest", "deep")
		props := parseMultistatus(t, e.do("einstein", "PROPFIND", f, "", "Depth", "0"))
		if _, ok := props[0].Props["urn:x p"]; ok {
			t.Fatal("the refused value was stored")
		}
	})
	t.Run("lock owner 65 deep", func(t *testing.T) {
		f := file(t)
		wantError(t, e.do("einstein", "LOCK", f, lock(maxValueDepth+1)), http.StatusBadRequest, "BadRequest", "deep")
		// Not locked: a PUT without a token succeeds.
		wantStatus(t, e.do("einstein", "PUT", f, "y"), http.StatusNoContent)
	})
	t.Run("property 64 deep", func(t *testing.T) {
		f := file(t)
		parseMultistatus(t, e.do("einstein", "PROPPATCH", f, patch(maxValueDepth)))
		props := parseMultistatus(t, e.do("einstein", "PROPFIND", f, "", "Depth", "0"))
		if got := props[0].Props["urn:x p"]; !strings.Contains(got, "v</a>") || strings.Count(got, "<a") != maxValueDepth {
			t.Fatalf("read back as %q, want %q with namespaces", got, nested(maxValueDepth))
		}
	})
	t.Run("lock owner 64 deep", func(t *testing.T) {
		wantStatus(t, e.do("einstein", "LOCK", file(t), lock(maxValueDepth)), http.StatusOK)
	})
}

// TestDeeplyNestedBodiesAreCheap: a body of nothing but nested elements,
// as large as max_xml_body allows, is refused before it costs more memory
// than a shallow one (encoding/xml keeps a namespace scope and a stack
// entry for every open element: about 100 bytes for each byte of such a
// body).
func TestDeeplyNestedBodiesAreCheap(t *testing.T) {
	deep := strings.Repeat("<a>", DefaultMaxXMLBytes/3)
	bodies := map[string]string{
		"PROPFIND":  `<d:propfind xmlns:d="DAV:"><d:prop>` + deep,
		"PROPPATCH": `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:p xmlns:x="urn:x">` + deep,
		"LOCK":      `<d:lockinfo xmlns:d="DAV:"><d:owner>` + deep,
	}
	parsers := map[string]func([]byte) error{
		"PROPFIND":  func(b []byte) error { _, err := parsePropfind(b); return err },
		"PROPPATCH": func(b []byte) error { _, err := parseProppatch(b); return err },
		"LOCK":      func(b []byte) error { _, err := parseLockInfo(b); return err },
	}
	for method, body := range bodies {
		t.Run(method, func(t *testing.T) {
			var err error
			allocated := allocatedBytes(func() { err = parsers[method]([]byte(body)) })
			wantDAVStatus(t, err, http.StatusBadRequest)
			if !strings.Contains(err.Error(), "deep") {
				t.Fatalf("refused for %v, not for its depth", err)
			}
			// Generous: other tests' goroutines allocate meanwhile.
			if limit := uint64(len(body)) * 8; allocated > limit {
				t.Fatalf("parsing %d bytes allocated %d bytes, more than %d", len(body), allocated, limit)
			}
		})
	}
}

// allocatedBytes is what the process allocates while fn runs.
func allocatedBytes(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
