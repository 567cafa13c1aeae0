package davhandler

import (
	"net/http"
	"strings"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// changeConditions lets req change what changed names at t, or refuses
// it: the locks it must submit (lockcheck.go) and t's preconditions. The
// conditions returned carry both, for the store to check again atomically
// with the change.
func (h *Handler) changeConditions(r *http.Request, req *request, t *target, changed ...lockTarget) (storage.Conditions, error) {
	if err := h.checkLocks(r, req, t, changed...); err != nil {
		return storage.Conditions{}, err
	}
	cond, err := checkPreconditions(r, t)
	if err != nil {
		return cond, err
	}
	cond.Locks = h.heldTokens(r, req)
	return cond, nil
}

// checkPreconditions evaluates If-Match, If-None-Match and
// If-Unmodified-Since (RFC 9110 §13) for a state-changing method against the
// target's current state. The returned conditions let the store repeat the
// check atomically with the change.
func checkPreconditions(r *http.Request, t *target) (storage.Conditions, error) {
	c, err := checkMatch(r, t)
	if err != nil {
		return c, err
	}
	inm, present, err := etagListHeader(r, "If-None-Match")
	if err != nil || !present {
		return c, err
	}
	// If-None-Match uses the weak comparison (RFC 9110 §13.1.2).
	if t.exists && inm.matches(t.node.ETag, false) {
		return c, errPrecondition
	}
	c.IfNoneMatch = inm.any
	return c, nil
}

var errPrecondition = errorf(http.StatusPreconditionFailed, "The resource has changed: precondition failed")

// checkMatch evaluates If-Match and If-Unmodified-Since, the conditions that
// answer 412 for reads too (GET's If-None-Match answers 304 instead).
func checkMatch(r *http.Request, t *target) (storage.Conditions, error) {
	var c storage.Conditions
	im, present, err := etagListHeader(r, "If-Match")
	if err != nil {
		return c, err
	}
	if present {
		// If-Match uses the strong comparison (RFC 9110 §13.1.1): a weak
		// tag never matches.
		if !t.exists || !im.matches(t.node.ETag, true) {
			return c, errPrecondition
		}
		c.IfMatch = t.node.ETag
		return c, nil
	}
	if ius := r.Header.Get("If-Unmodified-Since"); ius != "" && t.exists {
		if since, err := http.ParseTime(ius); err == nil && t.node.ModTime.Truncate(time.Second).After(since) {
			return c, errPrecondition
		}
	}
	return c, nil
}

// etagList is a parsed If-Match or If-None-Match value.
type etagList struct {
	any  bool // "*"
	tags []entityTag
}

// entityTag is one tag of a list, without its quotes.
type entityTag struct {
	opaque string
	weak   bool
}

// matches reports whether the list names etag (unquoted, always strong on
// this server); strong comparison ignores weak tags.
func (l etagList) matches(etag string, strong bool) bool {
	if l.any {
		return true
	}
	for _, t := range l.tags {
		if t.opaque == etag && !(strong && t.weak) {
			return true
		}
	}
	return false
}

// etagListHeader parses all lines of an entity-tag list header.
func etagListHeader(r *http.Request, name string) (etagList, bool, error) {
	lines := r.Header.Values(name)
	if len(lines) == 0 {
		return etagList{}, false, nil
	}
	l, err := parseETagList(strings.Join(lines, ","))
	if err != nil {
		return l, true, errorf(http.StatusBadRequest, "%s: %v", name, err)
	}
	return l, true, nil
}

// errMalformedETags answers a header that is neither "*" nor a list of
// quoted entity tags.
var errMalformedETags = errorf(http.StatusBadRequest, `want "*" or a comma-separated list of quoted entity tags`)

// parseETagList parses "*" or a list of entity tags (RFC 9110 §8.8.3 and
// §13.1.1): [W/]"opaque", separated by commas, where a comma inside the
// quotes belongs to the tag and empty list elements are allowed.
func parseETagList(v string) (etagList, error) {
	var l etagList
	if strings.TrimSpace(v) == "*" {
		l.any = true
		return l, nil
	}
	for rest := v; ; {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		tag, after, ok := scanEntityTag(rest)
		if !ok {
			return etagList{}, errMalformedETags
		}
		l.tags = append(l.tags, tag)
		rest = strings.TrimLeft(after, " \t")
		if rest != "" && rest[0] != ',' {
			return etagList{}, errMalformedETags
		}
	}
	if len(l.tags) == 0 {
		return etagList{}, errMalformedETags
	}
	return l, nil
}

// scanEntityTag reads one entity tag from the start of s and returns the
// rest of s.
func scanEntityTag(s string) (entityTag, string, bool) {
	var t entityTag
	s, t.weak = strings.CutPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return t, "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return t, "", false
	}
	t.opaque = s[1 : 1+end]
	for i := 0; i < len(t.opaque); i++ {
		// etagc is %x21 / %x23-7E / obs-text; the quote ended the tag.
		if c := t.opaque[i]; c <= ' ' || c == 0x7f {
			return t, "", false
		}
	}
	return t, s[end+2:], true
}
