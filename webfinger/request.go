package webfinger

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseResource returns the one resource parameter if it is an absolute URI
// (RFC 7033 §4.2): acct:alice@example.org, https://cloud.example.org,
// mailto:x@y. It is echoed as the subject exactly as given.
func parseResource(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	s := values[0]
	if s == "" || !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "", false
	}
	// A bare scheme ("acct:") names nothing.
	if u.Opaque == "" && u.Host == "" && u.Path == "" {
		return "", false
	}
	return s, true
}

// bearerToken returns the credentials of a Bearer Authorization header
// (scheme case-insensitive, RFC 9110 §11.1); ok is false for any other
// scheme or no header.
func bearerToken(header string) (token string, ok bool) {
	scheme, rest, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.Trim(rest, " \t"), true
}

// isToken68 reports whether s has the syntax of RFC 9110 §11.2 token68,
// which RFC 6750 §2.1 requires of a bearer token.
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
