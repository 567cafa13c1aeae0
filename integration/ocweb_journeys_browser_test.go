package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// webBundleEnv names the folder of ownCloud Web's built bundle: dist/ of
// owncloud/web v12.5.0 after `pnpm install && pnpm build`, or its release
// tarball unpacked. Without it TestOwnCloudWebJourneys is skipped (failed
// when CI=true).
const webBundleEnv = "OWNCLOUD_WEB_BUNDLE"

// webUnavailableEnv is set by the test command (scripts/lib/ocweb.sh) to
// why it could not build the bundle: a machine with no route to its source.
const webUnavailableEnv = "OWNCLOUD_WEB_UNAVAILABLE"

// requireWebBundle is the folder webBundleEnv names, once it holds Web's
// page and runtime.
func requireWebBundle(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(webBundleEnv)
	if why := os.Getenv(webUnavailableEnv); dir == "" && why != "" {
		// The test command could not fetch Web's source here; the run
		// says so rather than failing on the network.
		t.Skipf("ownCloud Web's bundle could not be built: %s", why)
	}
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: the test command must give ownCloud Web's bundle", webBundleEnv)
		}
		t.Skipf("%s is not set; build owncloud/web v12.5.0 (pnpm build) and name its dist/", webBundleEnv)
	}
	for _, name := range []string{"index.html", "oidc-callback.html", "js"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s=%s is not Web's bundle: %v", webBundleEnv, dir, err)
		}
	}
	return dir
}

// webSite is a folder holding Web's bundle (linked, not copied) and a
// config.json of ours, as docs/browser.md asks: the bundle's folder served by
// file_server with config.json beside index.html.
func webSite(t *testing.T, bundle string, config any) string {
	t.Helper()
	site := filepath.Join(t.TempDir(), "web")
	if err := os.Mkdir(site, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(bundle)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "config.json" {
			continue
		}
		if err := os.Symlink(filepath.Join(bundle, e.Name()), filepath.Join(site, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return site
}

// webJourneyOptions are the options of testdata/webui/ocweb_journeys.mjs.
type webJourneyOptions struct {
	browserSession
	Downloads string `json:"downloads"`
	Issuer    string `json:"issuer"`
	// Recipient signs in after the user to open what was shared.
	Recipient         string `json:"recipient"`
	RecipientPassword string `json:"recipientPassword"`
	RecipientName     string `json:"recipientName"`
	Project           string `json:"project"`
	Folder            string `json:"folder"`
	Versioned         string `json:"versioned"`
	Upload            string `json:"upload"`
}

// testOwnCloudWebJourneys drives ownCloud Web v12 (the bundle webBundleEnv
// names) in chromium against docs/browser.md's site, signed in through the
// test provider: the 16 journeys of a person in Web, each one's end state
// shot and checked through WebDAV where it changes something.
func testOwnCloudWebJourneys(t *testing.T) {
	t.Parallel()
	chromium, scripts := requireBrowser(t)
	bundle := requireWebBundle(t)
	port := freePort(t)
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID:                     "web",
		RedirectURIs:           []string{origin + "/oidc-callback.html", origin + "/oidc-silent-redirect.html"},
		PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	site := webSite(t, bundle, map[string]any{
		"server":  origin,
		"theme":   origin + "/themes/owncloud/theme.json",
		"options": map[string]any{},
		"openIdConnect": map[string]string{
			"authority":     idp.Issuer,
			"metadata_url":  idp.Issuer + "/.well-known/openid-configuration",
			"client_id":     "web",
			"response_type": "code",
			"scope":         "openid profile email",
		},
		"apps": []string{"files", "search", "preview", "text-editor"},
	})
	dir := t.TempDir()
	// docs/browser.md's site, with a project space as its has one.
	config := strings.Replace(fmt.Sprintf(webBesideCaddyfile, port, filepath.Join(dir, "data"), site),
		"\t\t\tweb off\n", "\t\t\tweb off\n\t\t\tspace Physics {\n\t\t\t\tmanager alice\n\t\t\t\tviewer group:developers\n\t\t\t}\n", 1)
	s := caddyRun{dir: dir, config: config, url: origin, env: []string{"OIDC_ISSUER=" + idp.Issuer}}.start(t)

	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	personal := listDrives(t, alice, "personal")
	if len(personal) != 1 {
		t.Fatalf("alice's personal drives: %+v", personal)
	}
	home := "/dav/spaces/" + url.PathEscape(personal[0].ID) + "/"
	alice.expect(http.StatusCreated, "MKCOL", home+"Reports/", "")
	alice.expect(http.StatusCreated, http.MethodPut, home+"Reports/summary.txt", "a summary\n")
	// Two versions of a file: the versions panel lists the first.
	alice.expect(http.StatusCreated, http.MethodPut, home+"notes.txt", "first words\n")
	alice.expect(http.StatusNoContent, http.MethodPut, home+"notes.txt", "second words\n")

	// The recipient has signed in once: davspaces knows users who have.
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	webCall(t, bob, http.StatusOK, http.MethodGet, "/graph/v1.0/me", "", nil)

	uploads := t.TempDir()
	const uploaded = "uploaded from Web\n"
	if err := os.WriteFile(filepath.Join(uploads, "upload.txt"), []byte(uploaded), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := webJourneyOptions{
		browserSession:    newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		Downloads:         t.TempDir(),
		Issuer:            idp.Issuer,
		Recipient:         "bob",
		RecipientPassword: "bob-password",
		RecipientName:     "Bob Baker",
		Project:           "Physics",
		Folder:            "Reports",
		Versioned:         "notes.txt",
		Upload:            filepath.Join(uploads, "upload.txt"),
	}
	events := runDrive(t, scripts, "ocweb_journeys.mjs", opts)
	var done, failed []string
	for _, ev := range events {
		t.Logf("%v", ev)
		if ev["event"] != "journey" {
			continue
		}
		name, _ := ev["name"].(string)
		if ev["ok"] == true {
			done = append(done, name)
		} else {
			failed = append(failed, fmt.Sprintf("%s: %v", name, ev["error"]))
		}
	}
	t.Logf("%d journeys completed: %s", len(done), strings.Join(done, ", "))
	for _, f := range failed {
		t.Errorf("journey %s", f)
	}

	// What the journeys changed, as WebDAV sees it.
	alice.expect(http.StatusMultiStatus, "PROPFIND", home+"Made%20in%20Web/", "", "Depth", "0")
	alice.expect(http.StatusNotFound, http.MethodGet, home+"upload.txt", "")
	for file, want := range map[string]string{
		home + "renamed.txt": uploaded,
		home + "notes.txt":   "first words\n", // the version restored
	} {
		if _, got := alice.expect(http.StatusOK, http.MethodGet, file, ""); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(opts.Downloads, "upload.txt")); err != nil || string(got) != uploaded {
		t.Errorf("Web's download: %q, %v", got, err)
	}
}
