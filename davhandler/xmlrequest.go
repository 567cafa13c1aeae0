package davhandler

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

const (
	nsDAV       = davxml.NSDAV
	nsOC        = davxml.NSOC
	nsNextcloud = "http://nextcloud.org/ns"
)

// maxPropNameBytes caps the local name and the namespace of a property:
// the store refuses longer ones, and the parser refuses them first so that
// a PROPFIND naming one gets the same 400.
const maxPropNameBytes = storage.MaxPropNameBytes

// propfindKind is what a PROPFIND asks for.
type propfindKind int

const (
	findAllprop propfindKind = iota
	findPropname
	findProp
)

// propfindRequest is a parsed PROPFIND body.
type propfindRequest struct {
	kind  propfindKind
	names []xml.Name // the d:prop names, or the d:include names with allprop
}

// readXMLBody reads a capped request body. An empty body is returned as nil.
func (h *Handler) readXMLBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxXMLBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, withReason(errorf(http.StatusRequestEntityTooLarge, "XML request body is larger than %d bytes", h.maxXMLBytes), reasonMaxXMLBody)
	}
	if err != nil {
		return nil, bodyReadError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	return body, nil
}

// readPropfind reads and parses a PROPFIND body, of a path or of a chunked
// upload.
func (h *Handler) readPropfind(w http.ResponseWriter, r *http.Request) (propfindRequest, error) {
	body, err := h.readXMLBody(w, r)
	if err != nil {
		return propfindRequest{}, err
	}
	return parsePropfind(body)
}

// parsePropfind parses a PROPFIND body; an empty body means allprop.
func parsePropfind(body []byte) (propfindRequest, error) {
	if body == nil {
		return propfindRequest{kind: findAllprop}, nil
	}
	dec, root, err := openDocument(body, "propfind")
	if err != nil {
		return propfindRequest{}, err
	}
	var pf propfindRequest
	var seen struct{ prop, allprop, propname, include bool }
	err = eachChild(dec, root, func(el xml.StartElement) error {
		if el.Name.Space != nsDAV {
			return dec.Skip()
		}
		switch el.Name.Local {
		case "prop":
			seen.prop = true
			pf.kind = findProp
			return collectNames(dec, el, &pf.names)
		case "allprop":
			seen.allprop = true
		case "propname":
			seen.propname = true
			pf.kind = findPropname
		case "include":
			seen.include = true
			return collectNames(dec, el, &pf.names)
		}
		return dec.Skip()
	})
	if err != nil {
		return propfindRequest{}, err
	}
	n := 0
	for _, b := range []bool{seen.prop, seen.allprop, seen.propname} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return propfindRequest{}, badXML("propfind must hold exactly one of prop, allprop and propname")
	case n == 0 && !seen.include:
		// An empty propfind element asks for all properties.
		pf.kind = findAllprop
	case seen.include && !seen.allprop:
		return propfindRequest{}, badXML("include is only allowed with allprop")
	case seen.allprop:
		pf.kind = findAllprop
	case seen.prop && len(pf.names) == 0:
		// An empty d:prop asks for nothing in RFC 4918, but oCIS answers
		// it as allprop and ownCloud Web's versions panel sends it.
		pf.kind = findAllprop
	}
	return pf, nil
}

// proppatchRequest is a parsed PROPPATCH body: the set and remove
// instructions in document order.
type proppatchRequest struct {
	patches []storage.PropPatch
}

// parseProppatch parses a PROPPATCH body.
func parseProppatch(body []byte) (proppatchRequest, error) {
	if body == nil {
		return proppatchRequest{}, badXML("PROPPATCH needs a propertyupdate body")
	}
	dec, root, err := openDocument(body, "propertyupdate")
	if err != nil {
		return proppatchRequest{}, err
	}
	var pp proppatchRequest
	err = eachChild(dec, root, func(el xml.StartElement) error {
		if el.Name.Space != nsDAV || (el.Name.Local != "set" && el.Name.Local != "remove") {
			return dec.Skip()
		}
		remove := el.Name.Local == "remove"
		return eachChild(dec, el, func(prop xml.StartElement) error {
			if prop.Name != (xml.Name{Space: nsDAV, Local: "prop"}) {
				return dec.Skip()
			}
			return eachChild(dec, prop, func(p xml.StartElement) error {
				if err := checkPropName(p.Name); err != nil {
					return err
				}
				value, err := innerXML(dec, p)
				if err != nil {
					return err
				}
				pp.patches = append(pp.patches, storage.PropPatch{
					Property: storage.Property{Name: storage.PropName{Space: p.Name.Space, Local: p.Name.Local}, Value: value},
					Remove:   remove,
				})
				return nil
			})
		})
	})
	if err != nil {
		return proppatchRequest{}, err
	}
	if len(pp.patches) == 0 {
		return proppatchRequest{}, badXML("propertyupdate names no property")
	}
	return pp, nil
}

func badXML(format string, args ...any) *davError {
	return errorf(http.StatusBadRequest, "malformed XML body: "+format, args...)
}

// maxValueDepth caps how deeply the elements of a stored XML value (a dead
// property's, a lock's owner) nest: a listing carrying it must stay within
// the depth limits of clients' parsers (libxml2's is 256).
const maxValueDepth = 64

// maxDocumentDepth caps how deeply the elements of any request body nest.
// Twice maxValueDepth leaves room for the elements a value sits in: four
// in a PROPPATCH body (propertyupdate, set, prop and the property's own),
// seven in a listing of locks, which tests read with the same check.
const maxDocumentDepth = 2 * maxValueDepth

// byteOrderMark may open a UTF-8 document; encoding/xml takes it for text.
const byteOrderMark = "\ufeff"

// openDocument checks a request body and reads up to its root element,
// which must be DAV:<local>.
func openDocument(body []byte, local string) (*xml.Decoder, xml.StartElement, error) {
	body = bytes.TrimPrefix(body, []byte(byteOrderMark))
	if err := checkDocument(body); err != nil {
		return nil, xml.StartElement{}, err
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	root, err := rootElement(dec, local)
	return dec, root, err
}

// checkDocument reads the whole document once, before anything is taken
// from it, refusing what encoding/xml tolerates but XML forbids: anything
// but space, comments and processing instructions beside the one root
// element (a second root, text, an end tag after it), and elements nested
// deeper than maxDocumentDepth, refused as soon as seen so that a deeply
// nested body costs no more than a shallow one. It also refuses what
// Namespaces in XML forbids, which a stored property value could not carry
// back out: an undeclared prefix, a prefix bound to the empty name
// (xmlns:p=""), a colon a prefix cannot explain, an element called xmlns,
// and two attributes with one expanded name.
func checkDocument(body []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var doc documentWalk
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return badXML("%v", err)
		}
		if err := doc.next(tok); err != nil {
			return err
		}
	}
}

// documentWalk follows a document's tokens for checkDocument.
type documentWalk struct {
	open      namespaceScopes // one for each open element
	rootEnded bool
}

func (d *documentWalk) next(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		switch {
		case d.rootEnded:
			return badXML("the document has more than one root element")
		case len(d.open) == maxDocumentDepth:
			return withReason(badXML("elements are nested more than %d deep", maxDocumentDepth), reasonXMLDepth)
		}
		return d.open.push(t)
	case xml.EndElement:
		// RawToken does not pair the tags; Token will refuse a mismatch.
		if len(d.open) == 0 {
			return badXML("the end tag %s has no start tag", t.Name.Local)
		}
		d.open.pop()
		d.rootEnded = len(d.open) == 0
	case xml.CharData:
		if len(d.open) == 0 && !isXMLSpace(t) {
			return badXML("text outside the root element")
		}
	case xml.Directive:
		if d.rootEnded {
			return badXML("a declaration after the root element")
		}
	}
	return nil
}

// isXMLSpace reports whether text is XML's white space only (XML 1.0 §2.3).
func isXMLSpace(text []byte) bool {
	return len(bytes.TrimLeft(text, " \t\r\n")) == 0
}

// namespaceScopes are the prefixes declared on the open elements, innermost
// last.
type namespaceScopes []map[string]string

// push declares the namespaces of el and checks its names.
func (s *namespaceScopes) push(el xml.StartElement) error {
	decls := map[string]string{}
	for _, a := range el.Attr {
		if a.Name.Space != "xmlns" {
			continue
		}
		if a.Value == "" {
			return badXML("the prefix %s is bound to an empty namespace name", a.Name.Local)
		}
		decls[a.Name.Local] = a.Value
	}
	*s = append(*s, decls)
	if el.Name.Space == "xmlns" || (el.Name.Space == "" && el.Name.Local == "xmlns") {
		return badXML("xmlns is not an element name")
	}
	if _, err := s.resolve(el.Name); err != nil {
		return err
	}
	return s.checkAttributes(el.Attr)
}

func (s *namespaceScopes) pop() {
	if n := len(*s); n > 0 {
		*s = (*s)[:n-1]
	}
}

// checkAttributes refuses attributes with unknown prefixes and repeated
// expanded names.
func (s namespaceScopes) checkAttributes(attrs []xml.Attr) error {
	seen := make(map[xml.Name]bool, len(attrs))
	for _, a := range attrs {
		if a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		name := a.Name
		if name.Space != "xmlns" {
			var err error
			if name, err = s.resolve(a.Name); err != nil {
				return err
			}
		}
		if seen[name] {
			return badXML("attribute %s appears twice", a.Name.Local)
		}
		seen[name] = true
	}
	return nil
}

// resolve expands a prefixed name (unprefixed ones need no declaration).
func (s namespaceScopes) resolve(n xml.Name) (xml.Name, error) {
	if strings.Contains(n.Local, ":") {
		return n, badXML("%s is not a valid qualified name", n.Local)
	}
	switch n.Space {
	case "":
		return n, nil
	case "xml":
		return xml.Name{Space: xmlNamespace, Local: n.Local}, nil
	}
	for i := len(s) - 1; i >= 0; i-- {
		if ns, ok := s[i][n.Space]; ok {
			return xml.Name{Space: ns, Local: n.Local}, nil
		}
	}
	return n, badXML("the prefix %s is not declared", n.Space)
}

// xmlNamespace is the namespace the prefix xml is bound to.
const xmlNamespace = "http://www.w3.org/XML/1998/namespace"

// rootElement reads up to the document element and checks it is DAV:<local>.
func rootElement(dec *xml.Decoder, local string) (xml.StartElement, error) {
	for {
		tok, err := dec.Token()
		if err != nil {
			return xml.StartElement{}, badXML("%v", err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			if el.Name != (xml.Name{Space: nsDAV, Local: local}) {
				return xml.StartElement{}, badXML("root element must be DAV:%s, not %s:%s", local, el.Name.Space, el.Name.Local)
			}
			return el, nil
		}
	}
}

// eachChild calls fn for every child element of parent; fn must consume the
// child entirely (dec.Skip for unwanted ones).
func eachChild(dec *xml.Decoder, parent xml.StartElement, fn func(xml.StartElement) error) error {
	for {
		tok, err := dec.Token()
		if err != nil {
			return badXML("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return asBadXML(err)
			}
		case xml.EndElement:
			return nil
		}
	}
}

func asBadXML(err error) error {
	var de *davError
	if errors.As(err, &de) {
		return de
	}
	return badXML("%v", err)
}

// collectNames appends the names of the child elements of el.
func collectNames(dec *xml.Decoder, el xml.StartElement, names *[]xml.Name) error {
	return eachChild(dec, el, func(c xml.StartElement) error {
		if err := checkPropName(c.Name); err != nil {
			return err
		}
		*names = append(*names, c.Name)
		return dec.Skip()
	})
}

// checkPropName refuses property names the store could not key: bbolt
// refuses keys over 32 KiB, and no client needs names anywhere near that.
func checkPropName(n xml.Name) error {
	if len(n.Local) > maxPropNameBytes || len(n.Space) > maxPropNameBytes {
		return errorf(http.StatusBadRequest, "property names and namespaces must not be longer than %d bytes", maxPropNameBytes)
	}
	return nil
}

// innerXML re-encodes the content of el so that it stands alone: every
// element carries its namespace explicitly, whatever prefixes the client
// declared on outer elements, and an element in no namespace says so
// (xmlns=""), so that it stays there inside any namespaced element.
func innerXML(dec *xml.Decoder, el xml.StartElement) (string, error) {
	var buf bytes.Buffer
	enc := xml.NewEncoder(&buf)
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", badXML("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxValueDepth {
				return "", withReason(badXML("the value of %s nests elements more than %d deep", el.Name.Local, maxValueDepth), reasonXMLDepth)
			}
			t.Attr = withoutNamespaceDecls(t.Attr)
			if t.Name.Space == "" {
				// encoding/xml declares only non-empty namespaces.
				t.Attr = append(t.Attr, xml.Attr{Name: xml.Name{Local: "xmlns"}})
			}
			err = enc.EncodeToken(t)
		case xml.EndElement:
			if depth == 0 {
				if err := enc.Flush(); err != nil {
					return "", fmt.Errorf("encoding property %s: %w", el.Name.Local, err)
				}
				return buf.String(), nil
			}
			depth--
			err = enc.EncodeToken(t)
		case xml.CharData:
			err = enc.EncodeToken(t)
		}
		if err != nil {
			return "", badXML("property %s: %v", el.Name.Local, err)
		}
	}
}

// withoutNamespaceDecls drops xmlns attributes; the encoder declares the
// namespaces the re-encoded elements need.
func withoutNamespaceDecls(attrs []xml.Attr) []xml.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// lockInfo is a parsed LOCK body (RFC 4918 §14.11).
type lockInfo struct {
	scope storage.LockScope
	// owner is the content of d:owner, re-encoded to stand alone; empty
	// when the client sent none.
	owner string
}

// parseLockInfo parses a LOCK body that asks for a new lock: a lockinfo
// with a lockscope (exclusive or shared), a write locktype and optionally
// an owner.
func parseLockInfo(body []byte) (lockInfo, error) {
	dec, root, err := openDocument(body, "lockinfo")
	if err != nil {
		return lockInfo{}, err
	}
	var li lockInfo
	var hasType bool
	err = eachChild(dec, root, func(el xml.StartElement) error {
		if el.Name.Space != nsDAV {
			return dec.Skip()
		}
		var err error
		switch el.Name.Local {
		case "lockscope":
			li.scope, err = parseLockScope(dec, el)
		case "locktype":
			hasType, err = true, parseLockType(dec, el)
		case "owner":
			li.owner, err = innerXML(dec, el)
		default:
			err = dec.Skip()
		}
		return err
	})
	switch {
	case err != nil:
		return lockInfo{}, err
	case li.scope == 0:
		return lockInfo{}, badXML("lockinfo needs a lockscope")
	case !hasType:
		return lockInfo{}, badXML("lockinfo needs a locktype")
	}
	return li, nil
}

// parseLockScope reads a lockscope: exactly one of exclusive and shared.
func parseLockScope(dec *xml.Decoder, el xml.StartElement) (storage.LockScope, error) {
	var scope storage.LockScope
	err := eachChild(dec, el, func(c xml.StartElement) error {
		var s storage.LockScope
		switch c.Name {
		case xml.Name{Space: nsDAV, Local: "exclusive"}:
			s = storage.LockExclusive
		case xml.Name{Space: nsDAV, Local: "shared"}:
			s = storage.LockShared
		default:
			return badXML("unknown lockscope %s:%s", c.Name.Space, c.Name.Local)
		}
		if scope != 0 {
			return badXML("lockscope must hold exactly one of exclusive and shared")
		}
		scope = s
		return dec.Skip()
	})
	if err == nil && scope == 0 {
		err = badXML("lockscope must hold exactly one of exclusive and shared")
	}
	return scope, err
}

// parseLockType reads a locktype, which must be write, the only type
// RFC 4918 defines.
func parseLockType(dec *xml.Decoder, el xml.StartElement) error {
	var write bool
	err := eachChild(dec, el, func(c xml.StartElement) error {
		if c.Name != (xml.Name{Space: nsDAV, Local: "write"}) || write {
			return badXML("locktype must be write")
		}
		write = true
		return dec.Skip()
	})
	if err == nil && !write {
		err = badXML("locktype must be write")
	}
	return err
}
