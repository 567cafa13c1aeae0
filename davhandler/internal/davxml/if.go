package davxml

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The If header grammar (RFC 4918 §10.4), apart from lock bookkeeping and
// from the handler, as golang.org/x/net/webdav keeps it.
//
//	If = ( 1*No-tag-list | 1*Tagged-list )
//	No-tag-list = List
//	Tagged-list = Resource-Tag 1*List
//	List = "(" 1*Condition ")"
//	Condition = ["Not"] (State-token | "[" entity-tag "]")
//	State-token = Coded-URL ; "<" absolute-URI ">"
//	Resource-Tag = "<" Simple-ref ">" ; absolute-URI or absolute path
//
// with optional whitespace between any two of these tokens.

// IfHeader is a parsed If header: the request may proceed when any list
// holds.
type IfHeader struct {
	Lists []IfList
}

// IfList is one parenthesised list; all its conditions must hold. A tagged
// list applies to ResourceTag (an absolute URI or path); an untagged one to
// the request URI.
type IfList struct {
	ResourceTag string
	Conditions  []IfCondition
}

// IfCondition is a state token or an entity tag, possibly negated.
type IfCondition struct {
	Not   bool
	Token string // a state token (lock token), without the angle brackets
	ETag  string // an entity tag as written, quotes (and W/) included
}

// NoLockToken is the state token no resource ever has (RFC 4918 §10.4.8):
// "(Not <DAV:no-lock>)" makes a list always true.
const NoLockToken = "DAV:no-lock"

// ParseIf parses an If header value. Anything the grammar does not
// allow, including a mix of tagged and untagged lists, is an
// ErrMalformedIf.
func ParseIf(v string) (IfHeader, error) {
	s := ifScanner{rest: v}
	var ih IfHeader
	tagged, tag := false, ""
	for {
		s.skipSpace()
		if s.done() {
			break
		}
		switch s.peek() {
		case '<':
			if len(ih.Lists) > 0 && !tagged {
				return IfHeader{}, malformedIf("a resource tag after untagged lists")
			}
			var err error
			if tag, err = s.resourceTag(); err != nil {
				return IfHeader{}, err
			}
			tagged = true
			s.skipSpace()
			if s.peek() != '(' {
				return IfHeader{}, malformedIf("a resource tag without a list")
			}
		case '(':
			l, err := s.list()
			if err != nil {
				return IfHeader{}, err
			}
			l.ResourceTag = tag
			ih.Lists = append(ih.Lists, l)
		default:
			return IfHeader{}, malformedIf("want a list or a resource tag")
		}
	}
	if len(ih.Lists) == 0 {
		return IfHeader{}, malformedIf("no list")
	}
	return ih, nil
}

// ErrMalformedIf is the error of an If header the grammar refuses.
var ErrMalformedIf = errors.New("malformed If header")

func malformedIf(why string) error {
	return fmt.Errorf("%w: %s", ErrMalformedIf, why)
}

// ifScanner reads an If header from left to right.
type ifScanner struct {
	rest string
}

func (s *ifScanner) done() bool { return s.rest == "" }

// peek returns the next byte, 0 at the end.
func (s *ifScanner) peek() byte {
	if s.rest == "" {
		return 0
	}
	return s.rest[0]
}

// skipSpace skips linear whitespace (net/http has unfolded line breaks).
func (s *ifScanner) skipSpace() {
	s.rest = strings.TrimLeft(s.rest, " \t\r\n")
}

// angled reads "<", the text up to ">", and ">"; the text must not be
// empty or hold whitespace.
func (s *ifScanner) angled(what string) (string, error) {
	end := strings.IndexByte(s.rest, '>')
	if end < 0 {
		return "", malformedIf(what + " is not closed")
	}
	text := s.rest[1:end]
	if text == "" || strings.ContainsAny(text, " \t\r\n") {
		return "", malformedIf(what + " is empty or holds whitespace")
	}
	s.rest = s.rest[end+1:]
	return text, nil
}

// resourceTag reads "<" Simple-ref ">": an absolute URI or an absolute path.
func (s *ifScanner) resourceTag() (string, error) {
	tag, err := s.angled("a resource tag")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(tag)
	if err != nil || (u.Scheme == "" && !strings.HasPrefix(tag, "/")) {
		return "", malformedIf("a resource tag must be an absolute URI or path")
	}
	return tag, nil
}

// list reads "(" 1*Condition ")".
func (s *ifScanner) list() (IfList, error) {
	var l IfList
	s.rest = s.rest[1:] // the "("
	for {
		s.skipSpace()
		if s.peek() == ')' {
			s.rest = s.rest[1:]
			break
		}
		c, err := s.condition()
		if err != nil {
			return l, err
		}
		l.Conditions = append(l.Conditions, c)
	}
	if len(l.Conditions) == 0 {
		return l, malformedIf("an empty list")
	}
	return l, nil
}

// condition reads ["Not"] (State-token | "[" entity-tag "]"). ABNF string
// literals are case-insensitive, so "not" is "Not".
func (s *ifScanner) condition() (IfCondition, error) {
	var c IfCondition
	if len(s.rest) >= 3 && strings.EqualFold(s.rest[:3], "not") {
		c.Not = true
		s.rest = s.rest[3:]
		s.skipSpace()
	}
	var err error
	switch s.peek() {
	case '<':
		c.Token, err = s.stateToken()
	case '[':
		c.ETag, err = s.entityTag()
	default:
		err = malformedIf("want a state token or an entity tag in a list")
	}
	return c, err
}

// stateToken reads a Coded-URL: "<" absolute-URI ">".
func (s *ifScanner) stateToken() (string, error) {
	token, err := s.angled("a state token")
	if err != nil {
		return "", err
	}
	if u, err := url.Parse(token); err != nil || u.Scheme == "" {
		return "", malformedIf("a state token must be an absolute URI")
	}
	return token, nil
}

// entityTag reads "[" entity-tag "]". RFC 4918 takes entity-tag from RFC
// 2616, where the opaque part is a quoted-string: its own examples hold
// spaces, which RFC 9110 no longer allows. A "]" inside the quotes belongs
// to the tag.
func (s *ifScanner) entityTag() (string, error) {
	s.rest = s.rest[1:] // the "["
	s.skipSpace()
	n := quotedEntityTagLen(s.rest)
	if n == 0 {
		return "", malformedIf(`an entity tag must be "opaque" or W/"opaque"`)
	}
	etag := s.rest[:n]
	s.rest = s.rest[n:]
	s.skipSpace()
	if s.peek() != ']' {
		return "", malformedIf("an entity tag is not closed")
	}
	s.rest = s.rest[1:]
	return etag, nil
}

// quotedEntityTagLen returns the length of the [W/]"opaque" at the start of
// s, 0 when there is none; the opaque part holds no quote and no control
// character.
func quotedEntityTagLen(s string) int {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s) < start+2 || s[start] != '"' {
		return 0
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c < ' ' || c == 0x7f:
			return 0
		}
	}
	return 0
}

// Tokens returns every state token the header names, the tokens a client
// submits with it: RFC 4918 §10.4.1 counts the mere appearance of a token,
// in any list, negated or not, as its submission.
func (ih IfHeader) Tokens() []string {
	var out []string
	for _, l := range ih.Lists {
		for _, c := range l.Conditions {
			if c.Token != "" {
				out = append(out, c.Token)
			}
		}
	}
	return out
}
