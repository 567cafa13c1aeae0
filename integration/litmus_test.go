package integration

import (
	"regexp"
	"testing"
	"time"
)

// TestLitmus runs the litmus WebDAV compliance suites against the server.
func TestLitmus(t *testing.T) {
	litmus := requirePeer(t, "litmus")
	s := startServer(t, serverOptions{})
	for _, suite := range []string{"basic", "copymove", "props", "http"} {
		t.Run(suite, func(t *testing.T) {
			out, err := runPeer(t, 5*time.Minute, "", "env", "TESTS="+suite, litmus, s.URL+"/webdav/", "einstein", users["einstein"])
			summary := regexp.MustCompile(`(?m)^<- summary for .*$`).FindAllString(out, -1)
			t.Logf("%s", summary)
			if err != nil || !regexp.MustCompile(`of \d+ tests run: \d+ passed, 0 failed`).MatchString(out) {
				t.Fatalf("litmus %s failed (%v):\n%s", suite, err, out)
			}
		})
	}
}
