package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

// basicClientFiles is how many files each client moves: a handful shows
// the app password working for every request a client makes without
// making the test long.
const basicClientFiles = 5

// TestOIDCUsersConnectBasicClients: people who have only an account at
// the OpenID Connect provider connect the clients that speak only Basic.
// Each makes an app password with a token (POST /auth-app/tokens, as the
// browser page does) and gives it to one client: davfs2 mounts alice's
// space and copies a folder in and out, owncloudcmd syncs bob's space and
// nextcloudcmd a folder of carol's, up and down. One server over HTTPS,
// the three side by side.
func TestOIDCUsersConnectBasicClients(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, tls: true})

	t.Run("davfs2", func(t *testing.T) {
		t.Parallel()
		mountDavfs := requirePeer(t, "mount.davfs")
		requireRootAndFUSE(t)
		alice := newAppPasswordUser(t, s, idp, "alice", "davfs2")
		davfs2WithAppPassword(t, mountDavfs, s, alice)
	})
	for _, c := range []struct{ program, user, folder string }{
		{"owncloudcmd", "bob", ""},
		{"nextcloudcmd", "carol", "Sync"},
	} {
		t.Run(c.program, func(t *testing.T) {
			t.Parallel()
			binary := requirePeer(t, c.program)
			user := newAppPasswordUser(t, s, idp, c.user, c.program)
			syncWithAppPassword(t, binary, s, user, c.folder)
		})
	}
}

// appPasswordUser is an OpenID Connect user with an app password, seen
// through Basic user:app-password over HTTPS.
type appPasswordUser struct {
	name, password string
	dav            *client
}

// newAppPasswordUser signs name in at the provider and makes an app
// password labelled label with the token.
func newAppPasswordUser(t *testing.T, s *server, idp *testidp.IdP, name, label string) *appPasswordUser {
	t.Helper()
	https := caddyCAClient(t, s)
	signedIn := &client{t: t, base: s.URL, token: idp.Token(t, name), http: https}
	_, body := signedIn.expect(http.StatusOK, http.MethodPost, "/auth-app/tokens?expiry=1h&label="+url.QueryEscape(label), "")
	var made struct{ Token string }
	if err := json.Unmarshal([]byte(body), &made); err != nil || made.Token == "" {
		t.Fatalf("POST /auth-app/tokens answered %s", body)
	}
	return &appPasswordUser{name: name, password: made.Token, dav: &client{t: t, base: s.URL, http: https}}
}

// expect sends a request (path escaped) with the app password.
func (u *appPasswordUser) expect(status int, method, path, body string) string {
	u.dav.t.Helper()
	_, answer := u.dav.expect(status, method, path, body, "Authorization", clientBasic(u.name, u.password))
	return answer
}

// checkFiles checks that the server holds want (name to content) in the
// folder dir of the user's personal space.
func (u *appPasswordUser) checkFiles(dir string, want map[string][]byte) {
	u.dav.t.Helper()
	for name, content := range want {
		p := (&url.URL{Path: path.Join("/remote.php/webdav", dir, name)}).EscapedPath()
		if got := u.expect(http.StatusOK, http.MethodGet, p, ""); got != string(content) {
			u.dav.t.Fatalf("GET %s: %d bytes, want the %d sent", p, len(got), len(content))
		}
	}
}

// davfs2WithAppPassword mounts the user's space with davfs2, copies a
// folder in, unmounts (which uploads), checks the server, then mounts with
// a fresh cache and copies the folder out.
func davfs2WithAppPassword(t *testing.T, mountDavfs string, s *server, u *appPasswordUser) {
	work := davfs2WorkDir(t)
	caCert := filepath.Join(work, "caddy-root.crt")
	pem, err := os.ReadFile(s.CACert)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caCert, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	login := davfs2Login{user: u.name, password: u.password, caCert: caCert}
	src := filepath.Join(work, "src", "folder")
	want := writeSmallFiles(t, src, basicClientFiles)

	mnt := mountDavfs2As(t, mountDavfs, s.URL+"/remote.php/webdav/", work, "in", login)
	runTool(t, time.Minute, "cp", "-r", src, mnt+"/")
	unmountDavfs2(t, mnt)
	u.checkFiles("folder", want)

	mnt = mountDavfs2As(t, mountDavfs, s.URL+"/remote.php/webdav/", work, "out", login)
	copyOutAndCompare(t, mnt, filepath.Join(work, "out"), want)
}

// syncWithAppPassword syncs a local folder with folder of the user's
// space ("" for all of it) with a desktop command-line client: files go
// up, then a file written on the server comes down.
func syncWithAppPassword(t *testing.T, binary string, s *server, u *appPasswordUser, folder string) {
	home := t.TempDir()
	exclude := filepath.Join(home, "sync-exclude.lst")
	// owncloudcmd stops without an exclude list.
	writeFile(t, exclude, ".DS_Store\n")
	if folder != "" {
		u.expect(http.StatusCreated, "MKCOL", "/remote.php/webdav/"+folder, "")
	}
	local := filepath.Join(t.TempDir(), "local")
	want := writeSmallFiles(t, local, basicClientFiles)

	run := func(step string) {
		t.Helper()
		args := []string{"--non-interactive", "--trust", "--max-sync-retries", "2", "--exclude", exclude,
			"--user", u.name, "--password", u.password}
		if folder != "" {
			args = append(args, "--path", "/"+folder)
		}
		ctx, cancel := context.WithTimeout(context.Background(), desktopSyncTimeout)
		defer cancel()
		cmd := testpeer.CommandContext(ctx, binary, append(args, local, s.URL+"/")...)
		cmd.Env = desktopEnvironment(home)
		cmd.Dir = home
		cmd.WaitDelay = 5 * time.Second
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %s failed after %v: %v\n%s", step, filepath.Base(binary), time.Since(start).Round(time.Millisecond), err, tail(string(out), 4000))
		}
		t.Logf("%s: synced in %v", step, time.Since(start).Round(time.Millisecond))
	}

	run("up")
	u.checkFiles(folder, want)

	fromServer := "written on the server with the app password\n"
	u.expect(http.StatusCreated, http.MethodPut, (&url.URL{Path: path.Join("/remote.php/webdav", folder, "from the server.txt")}).EscapedPath(), fromServer)
	run("down")
	if got, err := os.ReadFile(filepath.Join(local, "from the server.txt")); err != nil || string(got) != fromServer {
		t.Fatalf("the server's file came down as %q (%v)", got, err)
	}
}
