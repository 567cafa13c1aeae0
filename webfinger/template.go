package webfinger

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// errNoValue reports a template that rendered a nil value.
var errNoValue = errors.New("references a claim without value")

// expand returns the rule's href for one lookup, checked to be a usable
// instance URL.
func (r *rule) expand(d *hrefData) (string, error) {
	href, err := r.render(d)
	if err != nil {
		return "", err
	}
	if err := checkURL(href); err != nil {
		return "", err
	}
	return href, nil
}

func (r *rule) render(d *hrefData) (string, error) {
	if r.simple != nil {
		if href, ok, err := r.simple.render(d); ok {
			return href, err
		}
	}
	var b strings.Builder
	if err := r.href.Execute(&b, d.asMap()); err != nil {
		return "", err
	}
	href := b.String()
	// A nested claim that is JSON null renders as "<no value>" even with
	// missingkey=error; such a link would be worse than none.
	if strings.Contains(href, "<no value>") {
		return "", errNoValue
	}
	return href, nil
}

// hrefData is what the href templates of one lookup see: the claims, minus
// null ones (so that missingkey=error catches them), plus the platform URL.
// The map text/template needs is a copy (the verifier's identity is shared
// and must not change), built only when a template is not simple.
type hrefData struct {
	claims   map[string]any
	platform string
	m        map[string]any
}

// lookup returns the value of a top-level name; null claims are missing.
func (d *hrefData) lookup(name string) (any, bool) {
	if name == varPlatformURL || name == varOCISURL {
		return d.platform, true
	}
	v := d.claims[name]
	return v, v != nil
}

func (d *hrefData) asMap() map[string]any {
	if d.m != nil {
		return d.m
	}
	d.m = make(map[string]any, len(d.claims)+2)
	for k, v := range d.claims {
		switch f := v.(type) {
		case nil:
			continue
		case float64:
			// JSON numbers decode as float64, which templates print as
			// 1.2345678e+07; whole ones print as integers instead, as
			// the rules match them.
			if isWhole(f) {
				v = int64(f)
			}
		}
		d.m[k] = v
	}
	d.m[varPlatformURL] = d.platform
	d.m[varOCISURL] = d.platform
	return d.m
}

// isWhole reports whether f is an integer that float64 holds exactly.
func isWhole(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) < 1<<53
}

// simpleHref is an href template made of text and {{.name}} actions only,
// which covers nearly every real rule. It renders by concatenation, without
// the reflection of text/template or a copy of the claims, and gives the
// same result.
type simpleHref struct {
	parts []hrefPart
	size  int // bytes of text
}

// hrefPart is literal text, or the value of field when field is set.
type hrefPart struct {
	text, field string
}

// newSimpleHref returns t as a simpleHref, or nil when t does more.
func newSimpleHref(t *template.Template) *simpleHref {
	if len(t.Templates()) != 1 || t.Tree == nil {
		return nil
	}
	s := &simpleHref{}
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			s.parts = append(s.parts, hrefPart{text: string(n.Text)})
			s.size += len(n.Text)
		case *parse.ActionNode:
			field, ok := singleField(n.Pipe)
			if !ok {
				return nil
			}
			s.parts = append(s.parts, hrefPart{field: field})
		default:
			return nil
		}
	}
	return s
}

// singleField returns name for the pipeline ".name".
func singleField(p *parse.PipeNode) (string, bool) {
	if len(p.Decl) != 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return "", false
	}
	f, ok := p.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok || len(f.Ident) != 1 {
		return "", false
	}
	return f.Ident[0], true
}

// render expands s. ok is false when a value is of a kind only
// text/template prints faithfully; the caller then executes the template.
func (s *simpleHref) render(d *hrefData) (href string, ok bool, err error) {
	var b strings.Builder
	b.Grow(s.size + 32)
	for _, p := range s.parts {
		if p.field == "" {
			b.WriteString(p.text)
			continue
		}
		v, found := d.lookup(p.field)
		if !found {
			// What missingkey=error makes of it.
			return "", true, fmt.Errorf("claim %q is missing or null", p.field)
		}
		switch v := v.(type) {
		case string:
			b.WriteString(v)
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case float64:
			if !isWhole(v) {
				return "", false, nil
			}
			b.WriteString(strconv.FormatInt(int64(v), 10))
		default:
			return "", false, nil
		}
	}
	return b.String(), true, nil
}

// templateFields returns the top-level data fields t references: "sub" for
// {{.sub}}, {{.sub.x}} or {{$.sub}}. Fields read inside with and range,
// where dot is no longer the data, are skipped unless written $.field.
func templateFields(t *template.Template) []string {
	var fields []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			fields = append(fields, name)
		}
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkFields(tt.Tree.Root, true, add)
		}
	}
	return fields
}

// walkFields calls add for each field of the data referenced under n;
// atRoot tells whether dot is the data itself there.
func walkFields(n parse.Node, atRoot bool, add func(string)) {
	switch n := n.(type) {
	case nil:
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkFields(c, atRoot, add)
		}
	case *parse.ActionNode:
		walkFields(n.Pipe, atRoot, add)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkFields(c, atRoot, add)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkFields(a, atRoot, add)
		}
	case *parse.ChainNode:
		walkFields(n.Node, atRoot, add)
	case *parse.TemplateNode:
		walkFields(n.Pipe, atRoot, add)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, atRoot, atRoot, add)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, false, atRoot, add)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, false, atRoot, add)
	case *parse.FieldNode:
		if atRoot && len(n.Ident) > 0 {
			add(n.Ident[0])
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			add(n.Ident[1])
		}
	}
}

// walkBranch walks an if, with or range: the pipeline and else branch see
// the enclosing dot, the body sees bodyAtRoot.
func walkBranch(b *parse.BranchNode, bodyAtRoot, atRoot bool, add func(string)) {
	walkFields(b.Pipe, atRoot, add)
	walkFields(b.List, bodyAtRoot, add)
	walkFields(b.ElseList, atRoot, add)
}
