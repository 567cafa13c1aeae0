package davhandler

// The If header grammar (RFC 4918 §10.4), apart from lock bookkeeping and
// from the handler, as golang.org/x/net/webdav keeps it.

// ifHeader is a parsed If header: the request may proceed when any list
// holds.
type ifHeader struct {
	lists []ifList
}

// ifList is one parenthesised list; all its conditions must hold. A tagged
// list applies to resourceTag (an absolute URI or path); an untagged one to
// the request URI.
type ifList struct {
	resourceTag string
	conditions  []ifCondition
}

// ifCondition is a state token or an entity tag, possibly negated.
type ifCondition struct {
	not   bool
	token string // a state token (lock token), without the angle brackets
	etag  string // an entity tag as written, quotes (and W/) included
}

// parseIfHeader parses an If header value.
func parseIfHeader(v string) (ifHeader, error) {
	return ifHeader{}, errorf(400, "the If header is not supported yet") // replaced by the grammar
}

// tokens returns every state token the header names, the tokens a client
// submits with it.
func (ih ifHeader) tokens() []string {
	var out []string
	for _, l := range ih.lists {
		for _, c := range l.conditions {
			if c.token != "" {
				out = append(out, c.token)
			}
		}
	}
	return out
}
