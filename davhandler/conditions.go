package davhandler

import (
	"net/http"
	"strings"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// checkPreconditions evaluates If-Match, If-None-Match and
// If-Unmodified-Since (RFC 9110 §13) for a state-changing method against the
// target's current state. The returned conditions let the store repeat the
// check atomically with the change.
func checkPreconditions(r *http.Request, t *target) (storage.Conditions, error) {
	c, err := checkMatch(r, t)
	if err != nil {
		return c, err
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if t.exists && etagListMatches(inm, t.node.ETag) {
			return c, errPrecondition
		}
		c.IfNoneMatch = strings.TrimSpace(inm) == "*"
	}
	return c, nil
}

var errPrecondition = errorf(http.StatusPreconditionFailed, "The resource has changed: precondition failed")

// checkMatch evaluates If-Match and If-Unmodified-Since, the conditions that
// answer 412 for reads too (GET's If-None-Match answers 304 instead).
func checkMatch(r *http.Request, t *target) (storage.Conditions, error) {
	var c storage.Conditions
	if im := r.Header.Get("If-Match"); im != "" {
		if !t.exists || !etagListMatches(im, t.node.ETag) {
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

// etagListMatches reports whether a header's entity-tag list ("*" or
// comma-separated, possibly weak tags) names etag.
func etagListMatches(list, etag string) bool {
	if strings.TrimSpace(list) == "*" {
		return true
	}
	for _, tag := range strings.Split(list, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if strings.Trim(tag, `"`) == etag {
			return true
		}
	}
	return false
}
