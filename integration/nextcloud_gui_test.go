package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

// nextcloudWizard is the title of the Nextcloud desktop client's account
// wizard (nextcloud/desktop src/gui/wizard/owncloudwizard.cpp).
const nextcloudWizard = "Add Nextcloud account"

// untrustedCertificate is the title of its dialog about a certificate it
// cannot verify (src/gui/sslerrordialog.ui).
const untrustedCertificate = "Untrusted Certificate"

// The wizard's pages the test waits for (WizardCommon::Pages,
// src/gui/wizard/owncloudwizardcommon.h).
const (
	welcomePage       = 0
	serverAddressPage = 1
	// passwordPage is where the client asks for a user name and password:
	// it went there instead of Login Flow v2.
	passwordPage = 2
)

// wizardPage is the line the client logs when its wizard shows page
// (OwncloudWizard::slotCurrentPageChanged).
func wizardPage(page int) string {
	return fmt.Sprintf("Current Wizard page changed to  %d\n", page)
}

// guiLoginOptions are the options of testdata/webui/loginflow_gui.mjs.
type guiLoginOptions struct {
	browserSession
	LoginURL string `json:"loginURL"`
}

// TestNextcloudDesktopGUI drives the real Nextcloud desktop client
// (Debian's nextcloud-desktop 3.7) through its account wizard under Xvfb,
// with keystrokes, for a user who has only an OpenID Connect account, on
// HTTPS with Caddy's local CA. It follows the client's own steps
// (nextcloud/desktop 3.7 src/gui/owncloudsetupwizard.cpp,
// src/libsync/networkjobs.cpp DetermineAuthTypeJob,
// src/gui/creds/flow2auth.cpp, src/gui/wizard/owncloudadvancedsetuppage.cpp):
// "Log in", the server's URL typed on the address page, the certificate
// trusted; the client chooses Login Flow v2 from status.php, POSTs
// login/v2 and opens the browser on the login URL; chromium signs in at
// the test provider and grants; the client's poll gets the app password
// (and an https server, which it insists on after an https start), the
// folder page appears with the default ~/Nextcloud (--overridelocaldir
// would skip the page), Enter presses "Connect", and the client syncs: a
// file of the server arrives, a file written in the folder reaches the
// server. Its app password, named after it, revoked, the client is signed
// out at its next sync and its file stays local. Screenshots of each step
// go to the artifacts folder.
func TestNextcloudDesktopGUI(t *testing.T) {
	gui := requireNextcloudGUI(t)
	chromium, dir := requireBrowser(t)
	t.Parallel()
	started := time.Now()
	port := freePort(t)
	origin := fmt.Sprintf("https://localhost:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{origin + "/"}, PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	s := startServer(t, serverOptions{issuer: idp.Issuer, port: port, tls: true, env: []string{"OIDC_WEB_CLIENT_ID=" + webClientID}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: caddyCAClient(t, s)}
	const fromServer = "Written on the server before the client came\n"
	alice.expect(http.StatusCreated, http.MethodPut, "/remote.php/webdav/from-server.txt", fromServer)

	artifacts := webUIArtifacts(t)
	display := startXvfb(t, gui.xvfb, filepath.Join(artifacts, "nextcloud-gui"))
	client := startNextcloudGUI(t, gui, display)

	// The welcome page: Enter presses "Log in". The server address page:
	// its field has the focus, the URL is typed, Enter presses "Next".
	client.waitLog(t, wizardPage(welcomePage), 30*time.Second)
	display.waitWindow(t, nextcloudWizard, 10*time.Second)
	display.screenshot(t, "welcome")
	display.keys(t, nextcloudWizard, "key", "Return")
	client.waitLog(t, wizardPage(serverAddressPage), 10*time.Second)
	display.keys(t, nextcloudWizard, "type", "--delay", "20", s.URL)
	display.screenshot(t, "server-address")
	display.keys(t, nextcloudWizard, "key", "Return")

	// Caddy's local CA is in no trust store the client reads (it does not
	// read SSL_CERT_FILE), so it asks, as it asks anyone whose server has a
	// certificate of their own (src/gui/sslerrordialog.ui): "Trust this
	// certificate anyway", then OK.
	dialog := display.waitWindow(t, untrustedCertificate, 30*time.Second)
	display.screenshot(t, "untrusted-certificate")
	display.clickAboveBottom(t, dialog, 18, 55)
	display.keys(t, untrustedCertificate, "key", "Return")

	loginURL := client.waitBrowser(t, 60*time.Second)
	display.screenshot(t, "switch-to-browser")
	if !strings.HasPrefix(loginURL, s.URL+"/") {
		t.Fatalf("the client opened %q, not a page of %s", loginURL, s.URL)
	}
	events := runDrive(t, dir, "loginflow_gui.mjs", guiLoginOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		LoginURL:       loginURL,
	})
	for _, ev := range events {
		t.Logf("%v", ev)
	}

	// The client polls every remotePollInterval (5 s here), then asks for
	// the user and lists the root before it shows the folder page.
	client.waitLog(t, "OCC::OwncloudAdvancedSetupPage", 30*time.Second)
	display.screenshot(t, "folder-page")
	display.keys(t, nextcloudWizard, "key", "Return")

	synced := filepath.Join(client.folder, "from-server.txt")
	pollUntil(t, 60*time.Second, "the server's file in the client's folder", func() bool {
		b, err := os.ReadFile(synced)
		return err == nil && string(b) == fromServer
	})
	display.screenshot(t, "synced")
	cfg := client.config(t)
	for _, want := range []string{`0\authType=webflow`, `0\dav_user=alice`, `0\Folders\`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("nextcloud.cfg has no %q:\n%s", want, cfg)
		}
	}

	const fromClient = "Written in the client's folder\n"
	writeFile(t, filepath.Join(client.folder, "from-client.txt"), fromClient)
	pollUntil(t, 60*time.Second, "the client's file on the server", func() bool {
		resp, body := alice.do(http.MethodGet, "/remote.php/webdav/from-client.txt", "")
		return resp.StatusCode == http.StatusOK && body == fromClient
	})
	display.screenshot(t, "uploaded")
	t.Logf("the wizard, the sign-in and both syncs took %s", time.Since(started).Round(100*time.Millisecond))

	// The client signs in with an app password of its own, named after
	// the name it gave when it started the flow.
	_, body := alice.expect(http.StatusOK, http.MethodGet, "/auth-app/tokens", "")
	var passwords []struct{ Token, Label string }
	if err := json.Unmarshal([]byte(body), &passwords); err != nil || len(passwords) != 1 || !strings.Contains(passwords[0].Label, "(Desktop Client - Linux)") {
		t.Fatalf("alice's app passwords: %s", body)
	}

	// Revoked, it is refused when the client next syncs, here a file
	// written in the folder: the client shows its user signed out
	// (AccountState) and the file stays on this side.
	alice.expect(http.StatusOK, http.MethodDelete, "/auth-app/tokens?token="+passwords[0].Token, "")
	revoked := time.Now()
	writeFile(t, filepath.Join(client.folder, "after-revocation.txt"), "not for the server\n")
	client.waitLog(t, `AccountState state change:  "Connected" -> "Signed out"`, 20*time.Second)
	display.screenshot(t, "revoked")
	t.Logf("the client was signed out %s after the revocation", time.Since(revoked).Round(100*time.Millisecond))
	if resp, _ := alice.do(http.MethodGet, "/remote.php/webdav/after-revocation.txt", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the file written after the revocation: %d on the server, want 404", resp.StatusCode)
	}
}

// nextcloudGUI is what the GUI test needs installed.
type nextcloudGUI struct {
	nextcloud, xvfb string
}

// requireNextcloudGUI finds the Nextcloud desktop client, Xvfb and
// xdotool, which the test command installs: without them the test skips,
// or fails under CI=true.
func requireNextcloudGUI(t *testing.T) nextcloudGUI {
	t.Helper()
	paths := map[string]string{}
	for _, name := range []string{"nextcloud", "Xvfb", "xdotool"} {
		paths[name] = requirePeer(t, name)
	}
	return nextcloudGUI{nextcloud: paths["nextcloud"], xvfb: paths["Xvfb"]}
}

// guiClient is a running Nextcloud desktop client with a fresh
// configuration folder, its log, its sync folder, and the file where its
// "browser" writes the URLs it was asked to open.
type guiClient struct {
	conf, log, folder, opened string
}

// startNextcloudGUI starts the client on the display with its own home,
// configuration and runtime folders, so that it starts the account wizard
// and no other instance answers for it. It polls Login Flow v2 every 5 s
// (remotePollInterval, the shortest the client allows, is read from the
// [Nextcloud] group: src/libsync/configfile.cpp). The browser is a script
// first on PATH as xdg-open, which Qt's QDesktopServices::openUrl runs
// when there is no desktop environment.
func startNextcloudGUI(t *testing.T, gui nextcloudGUI, display *xDisplay) *guiClient {
	t.Helper()
	dir := t.TempDir()
	c := &guiClient{
		conf:   filepath.Join(dir, "conf"),
		log:    filepath.Join(dir, "nextcloud.log"),
		folder: filepath.Join(dir, "home", "Nextcloud"),
		opened: filepath.Join(dir, "opened-urls"),
	}
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{c.conf, bin, filepath.Join(dir, "home"), filepath.Join(dir, "run"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(c.conf, "nextcloud.cfg"), "[Nextcloud]\nremotePollInterval=5000\n")
	browser := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + c.opened + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(browser), 0o700); err != nil {
		t.Fatal(err)
	}

	cmd := testpeer.Command(gui.nextcloud, "--confdir", c.conf, "--logfile", c.log)
	cmd.Env = append(os.Environ(),
		"DISPLAY="+display.name,
		"QT_QPA_PLATFORM=xcb",
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "home", ".config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "home", ".local", "share"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"TMPDIR="+filepath.Join(dir, "tmp"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	out, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the Nextcloud desktop client: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			display.screenshot(t, "failed")
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		out.Close()
		// The whole log goes beside the screenshots.
		if err := os.WriteFile(filepath.Join(display.artifacts, "nextcloud.log"), []byte(fileText(c.log)), 0o644); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("the client's log ends:\n%s", tail(fileText(c.log), 6000))
			t.Logf("its stderr ends:\n%s", tail(fileText(out.Name()), 2000))
		}
	})
	return c
}

// waitBrowser waits for the client to open a URL in the browser, and
// fails at once if it asks for a password instead.
func (c *guiClient) waitBrowser(t *testing.T, timeout time.Duration) string {
	t.Helper()
	var url string
	pollUntil(t, timeout, "the client to open the browser", func() bool {
		if strings.Contains(fileText(c.log), wizardPage(passwordPage)) {
			t.Fatal("the client asks for a user name and password, not for a sign-in in the browser")
		}
		url, _, _ = strings.Cut(fileText(c.opened), "\n")
		return url != ""
	})
	return url
}

// waitLog waits for the client to log a line containing s.
func (c *guiClient) waitLog(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	pollUntil(t, timeout, "the client to log "+s, func() bool {
		return strings.Contains(fileText(c.log), s)
	})
}

func (c *guiClient) config(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.conf, "nextcloud.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pollUntil polls done every 200 ms until it holds, and fails the test
// when it does not within timeout.
func pollUntil(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited %s for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// fileText is a file's text, empty when it cannot be read (not yet
// written).
func fileText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
