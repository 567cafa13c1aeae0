package davhandler

import "github.com/davspaces/davspaces/storage"

// The href of a d:response, kept in two parts so that a listing escapes
// its folder's path once.

// responseHref is the href of a response, escaped, in the parts it is
// written from: a listing writes each child's without building it.
type responseHref struct {
	// base is the href of the resource, or of a child's folder.
	base string
	// segment is a child's escaped name, written after a slash; "" for
	// the resource itself.
	segment string
	// slash ends the href of a child folder.
	slash bool
}

// String is the href as one string.
func (h responseHref) String() string {
	s := h.base
	if h.segment != "" {
		s += "/" + h.segment
	}
	if h.slash {
		s += "/"
	}
	return s
}

// childHref is the href of a child of the folder at parentHref, which is
// escaped already.
func childHref(parentHref string, n storage.Node) responseHref {
	return responseHref{base: parentHref, segment: escapeSegment(n.Name), slash: n.IsFolder()}
}

// escapeSegment escapes one path segment for an href.
func escapeSegment(name string) string {
	if isPlainSegment(name) {
		// Most names escape to themselves: nothing to build.
		return name
	}
	return escapePath("/" + name)[1:]
}

// isPlainSegment reports whether escaping leaves name as it is: it holds
// only the unreserved characters of RFC 3986, which no URL escaping
// touches.
func isPlainSegment(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
		default:
			return false
		}
	}
	return true
}
