package davhandler

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
)

const (
	tokA = "urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2"
	tokB = "urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092"
	tokO = "opaquelocktoken:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
)

func tok(t string) davxml.IfCondition    { return davxml.IfCondition{Token: t} }
func notTok(t string) davxml.IfCondition { return davxml.IfCondition{Not: true, Token: t} }
func etag(e string) davxml.IfCondition   { return davxml.IfCondition{ETag: e} }

func untagged(c ...davxml.IfCondition) davxml.IfList { return davxml.IfList{Conditions: c} }

func tagged(tag string, c ...davxml.IfCondition) davxml.IfList {
	return davxml.IfList{ResourceTag: tag, Conditions: c}
}

// ifHeaderForms are the If headers of RFC 4918 §7, §9 and §10.4 and those
// litmus's locks tests send (through neon), with what they parse to.
var ifHeaderForms = []struct {
	in   string
	want []davxml.IfList
}{
	// RFC 4918 §10.4.6 (No-tag production).
	{`(<` + tokA + `> ["I am an ETag"]) (["I am another ETag"])`,
		[]davxml.IfList{untagged(tok(tokA), etag(`"I am an ETag"`)), untagged(etag(`"I am another ETag"`))}},
	// §10.4.7 (Not in the No-tag production).
	{`(Not <` + tokA + `> <` + tokB + `>)`,
		[]davxml.IfList{untagged(notTok(tokA), tok(tokB))}},
	// §10.4.8 (always true).
	{`(<` + tokA + `>) (Not <DAV:no-lock>)`,
		[]davxml.IfList{untagged(tok(tokA)), untagged(notTok(davxml.NoLockToken))}},
	// §10.4.9 (tagged lists in COPY), weak tag included.
	{`</resource1> (<` + tokA + `> [W/"A weak ETag"]) (["strong ETag"])`,
		[]davxml.IfList{tagged("/resource1", tok(tokA), etag(`W/"A weak ETag"`)), tagged("/resource1", etag(`"strong ETag"`))}},
	// §10.4.10 (collection locks).
	{`<http://www.example.com/specs/> (<` + tokA + `>)`,
		[]davxml.IfList{tagged("http://www.example.com/specs/", tok(tokA))}},
	// §10.4.11 (unmapped URLs).
	{`(["4217"])`, []davxml.IfList{untagged(etag(`"4217"`))}},
	{`(Not ["4217"])`, []davxml.IfList{untagged(davxml.IfCondition{Not: true, ETag: `"4217"`})}},
	// §9.10.8 (refresh) and §7.6-style opaquelocktoken.
	{`(<` + tokO + `>)`, []davxml.IfList{untagged(tok(tokO))}},
	// §10.4.2: several tagged lists, each tag with one or more lists.
	{`<http://example.com/a> (<` + tokA + `>) (<` + tokB + `>) </b> (["x"])`,
		[]davxml.IfList{tagged("http://example.com/a", tok(tokA)), tagged("http://example.com/a", tok(tokB)), tagged("/b", etag(`"x"`))}},
	// litmus: cond_put, fail_cond_put, cond_put_with_not, cond_put_corrupt_token,
	// complex_cond_put, fail_cond_put_unlocked.
	{`(<` + tokO + `> ["1a2b"])`, []davxml.IfList{untagged(tok(tokO), etag(`"1a2b"`))}},
	{`(<DAV:no-lock> ["1a2b"])`, []davxml.IfList{untagged(tok(davxml.NoLockToken), etag(`"1a2b"`))}},
	{`(<` + tokO + `x>) (Not <DAV:no-lock>)`, []davxml.IfList{untagged(tok(tokO + "x")), untagged(notTok(davxml.NoLockToken))}},
	{`(<` + tokO + `> ["1a2b"]) (Not <DAV:no-lock> ["1a2b"])`,
		[]davxml.IfList{untagged(tok(tokO), etag(`"1a2b"`)), untagged(notTok(davxml.NoLockToken), etag(`"1a2b"`))}},
	{`(<DAV:no-lock>)`, []davxml.IfList{untagged(tok(davxml.NoLockToken))}},
	// neon's lock store tags its tokens with the lock root's URI.
	{`<http://127.0.0.1:8080/remote.php/webdav/litmus/lockcoll/> (<` + tokO + `>)`,
		[]davxml.IfList{tagged("http://127.0.0.1:8080/remote.php/webdav/litmus/lockcoll/", tok(tokO))}},
	// Whitespace is optional between tokens and may be tabs; "not" is
	// case-insensitive (an ABNF string literal); "]" may sit in a tag.
	{"(<" + tokA + ">[\"e\"])(Not<" + tokB + ">)", []davxml.IfList{untagged(tok(tokA), etag(`"e"`)), untagged(notTok(tokB))}},
	{"\t ( [ \"e\" ] not <" + tokA + "> ) ", []davxml.IfList{untagged(etag(`"e"`), notTok(tokA))}},
	{`(["a]b"])`, []davxml.IfList{untagged(etag(`"a]b"`))}},
	{`(NOT <` + tokA + `>)`, []davxml.IfList{untagged(notTok(tokA))}},
}

func TestParseIfHeader(t *testing.T) {
	for _, tc := range ifHeaderForms {
		t.Run(tc.in, func(t *testing.T) {
			ih, err := parseIfHeader(tc.in)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(ih.Lists, tc.want) {
				t.Fatalf("got %+v\nwant %+v", ih.Lists, tc.want)
			}
		})
	}
}

// malformedIfHeaders are refused with 400.
var malformedIfHeaders = []string{
	"",
	"   ",
	"()",
	"(",
	"(<" + tokA + ">",
	"<" + tokA + ">",                         // a tag without a list
	"</a>",                                   // a tag without a list
	"(<" + tokA + ">) </a> (<" + tokB + ">)", // untagged then tagged
	"(<not a uri>)",
	"(<relative>)",
	"(<>)",
	"(" + tokA + ")",  // a token without angle brackets
	"([e])",           // an unquoted entity tag
	"([\"e\")",        // an unclosed bracket
	"([\"e\" \"f\"])", // two tags in one bracket
	"([\"e\"]",        // an unclosed list
	"([w/\"e\"])",     // the weak prefix is case-sensitive
	"(Not)",           // Not with nothing to negate
	"(Not Not <" + tokA + ">)",
	"(Note <" + tokA + ">)",
	"<relative> (<" + tokA + ">)", // a tag is an absolute URI or path
	"(<" + tokA + ">) x",
	"([\"a\x01\"])", // a control character in a tag
}

func TestParseIfHeaderMalformed(t *testing.T) {
	for _, in := range malformedIfHeaders {
		t.Run(in, func(t *testing.T) {
			ih, err := parseIfHeader(in)
			if err == nil {
				t.Fatalf("parsed %+v, want an error", ih)
			}
			wantClientError(t, err)
		})
	}
}

func TestIfHeaderTokens(t *testing.T) {
	ih, err := parseIfHeader(`</a> (<` + tokA + `> ["e"]) (Not <` + tokB + `>) </b> (Not <DAV:no-lock>)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{tokA, tokB, davxml.NoLockToken}
	if got := ih.Tokens(); !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens %q, want %q", got, want)
	}
}

func TestIfHeaderOfJoinsLines(t *testing.T) {
	r, _ := http.NewRequest("PUT", "/webdav/x", nil)
	if _, present, err := ifHeaderOf(r); present || err != nil {
		t.Fatalf("no If header: present=%v err=%v", present, err)
	}
	r.Header.Add("If", "(<"+tokA+">)")
	r.Header.Add("If", "(Not <DAV:no-lock>)")
	ih, present, err := ifHeaderOf(r)
	if err != nil || !present || len(ih.Lists) != 2 {
		t.Fatalf("got %+v present=%v err=%v, want two lists", ih, present, err)
	}
}
