package webui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// scriptTestTimeout bounds one file's node --test run; the tests are pure
// functions and take well under a second each.
const scriptTestTimeout = 2 * time.Minute

// TestScripts runs the unit tests of the page's pure modules
// (testdata/*.test.js) with node --test, one file per subtest. Without
// node the test is skipped, or fails under CI=true, so that CI cannot go
// green without them.
func TestScripts(t *testing.T) {
	node := requireNode(t)
	files, err := filepath.Glob(filepath.Join("testdata", "*.test.js"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.test.js: the scripts' unit tests are gone")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), scriptTestTimeout)
			defer cancel()
			out, err := testpeer.CommandContext(ctx, node, "--test", "--test-reporter=spec", file).CombinedOutput()
			if err != nil {
				t.Fatalf("node --test %s: %v\n%s", file, err, out)
			}
		})
	}
}

// requireNode returns the path of node, or ends t: a skip unless CI must
// run the test.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		return node
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("node is not installed: the test command must install it")
	}
	t.Skip("node is not installed; the page's script tests need it")
	return ""
}
