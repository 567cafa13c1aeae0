package davhandler

import (
	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// The href of a d:response: a child's in parts (davxml.Href), and the
// escaping of a path segment.

// childHref is the href of a child of the folder at parentHref, which is
// escaped already.
func childHref(parentHref string, n storage.Node) davxml.Href {
	return davxml.Href{Base: parentHref, Segment: escapeSegment(n.Name), Slash: n.IsFolder()}
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
