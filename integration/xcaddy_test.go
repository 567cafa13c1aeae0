package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// xcaddyBinaryEnv names the Caddy that scripts/test built with xcaddy, the
// way the README tells users to build it.
const xcaddyBinaryEnv = "DAVSPACES_XCADDY_CADDY"

// davspacesModules are the modules an xcaddy build with davspaces must
// hold: the three handlers and both stores.
var davspacesModules = []string{
	"http.handlers.davspaces",
	"http.handlers.oidc_auth",
	"http.handlers.webfinger",
	"davspaces.stores.bolt",
	"davspaces.stores.postgres",
}

// TestXcaddyBuildServesTheExample takes the Caddy built with xcaddy from
// this clone (scripts/test builds it; without it, the test builds one
// itself when xcaddy is installed), wants the davspaces modules in its
// list-modules, and runs Caddyfile.example on it as it is.
func TestXcaddyBuildServesTheExample(t *testing.T) {
	t.Parallel()
	version := caddyVersion(t)
	checkDocumentedVersion(t, version)
	binary := os.Getenv(xcaddyBinaryEnv)
	if binary == "" {
		binary = buildWithXcaddy(t, version)
	}

	out, err := testpeer.Command(binary, "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("caddy list-modules: %v\n%s", err, out)
	}
	listed := strings.Fields(string(out))
	for _, id := range davspacesModules {
		if !slices.Contains(listed, id) {
			t.Errorf("xcaddy's Caddy has no module %s", id)
		}
	}
	if out, err := testpeer.Command(binary, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), version) {
		t.Errorf("xcaddy's Caddy is version %q (%v), want %s", out, err, version)
	}

	c, _ := startExample(t, binary)
	c.user = ""
	resp, body := c.expect(http.StatusOK, "GET", "/status.php", "")
	var status struct {
		Installed bool `json:"installed"`
	}
	if err := json.Unmarshal([]byte(body), &status); err != nil || !status.Installed {
		t.Fatalf("status.php of xcaddy's Caddy: %s %s (%v)", resp.Header.Get("Content-Type"), body, err)
	}
	c.user = "einstein"
	c.expect(http.StatusCreated, "PUT", "/remote.php/webdav/built-with-xcaddy.txt", "hello")
	if _, got := c.expect(http.StatusOK, "GET", "/remote.php/webdav/built-with-xcaddy.txt", ""); got != "hello" {
		t.Fatalf("GET of the file just put: %q", got)
	}
}

// caddyVersion is the version of Caddy the module requires (go.mod), the
// one its xcaddy build names.
func caddyVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/caddyserver/caddy/v2 (v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod does not require github.com/caddyserver/caddy/v2")
	}
	return string(m[1])
}

// checkDocumentedVersion wants the README's xcaddy build lines and the
// build manifest (xcaddy.json) to name the Caddy version of go.mod.
func checkDocumentedVersion(t *testing.T, version string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`xcaddy build (v\S+)`).FindAllSubmatch(readme, -1) {
		if string(m[1]) != version {
			t.Errorf("the README says xcaddy build %s; go.mod requires Caddy %s", m[1], version)
		}
	}
	b, err := os.ReadFile("../xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		CaddyVersion string `json:"caddy_version"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatalf("xcaddy.json: %v", err)
	}
	if manifest.CaddyVersion != version {
		t.Errorf("xcaddy.json names Caddy %s; go.mod requires %s", manifest.CaddyVersion, version)
	}
}

// buildWithXcaddy runs the README's build from a clone:
//
//	xcaddy build <version> --with github.com/davspaces/davspaces@v0.0.0=.
func buildWithXcaddy(t *testing.T, version string) string {
	t.Helper()
	xcaddy := requirePeer(t, "xcaddy")
	binary := filepath.Join(t.TempDir(), "caddy")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, xcaddy, "build", version, "--output", binary,
		"--with", "github.com/davspaces/davspaces@v0.0.0=.")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xcaddy build: %v\n%s", err, tail(string(out), 4000))
	}
	return binary
}
