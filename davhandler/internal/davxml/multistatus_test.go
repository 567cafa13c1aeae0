package davxml

import (
	"regexp"
	"strings"
	"testing"
)

// TestEmptyResponseGetsPropstat: a response that found no property to
// give still carries a propstat (RFC 4918 §14.24).
func TestEmptyResponseGetsPropstat(t *testing.T) {
	var buf strings.Builder
	ms := &Multistatus{out: &buf, flushAt: 1 << 20}
	ms.BeginResponse("/a")
	ms.EndResponse()
	ms.flush()
	for _, r := range regexp.MustCompile(`(?s)<d:response>.*?</d:response>`).FindAllString(buf.String(), -1) {
		if !strings.Contains(r, "<d:propstat>") && !strings.Contains(r, "<d:status>") {
			t.Errorf("a response with neither propstat nor status: %s", r)
		}
	}
}
