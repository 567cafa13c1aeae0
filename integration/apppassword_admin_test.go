package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestAppPasswordsAdminRevoke: the administrator lists a user's app
// passwords with `caddy davspaces apppasswords list` while the server
// holds the embedded store, and revokes them all with `revoke`, as when
// the user is removed at the provider: the running server refuses them
// at the next request, without a restart. Nothing of a password but its
// public id is printed.
func TestAppPasswordsAdminRevoke(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	dir := t.TempDir()
	port := freePort(t)
	opts := serverOptions{admin: adminSocket(t), issuer: idp.Issuer}
	run := caddyRun{dir: dir, config: exampleCaddyfile(t, port, filepath.Join(dir, "data"), opts),
		url: fmt.Sprintf("http://127.0.0.1:%d", port), env: []string{"OIDC_ISSUER=" + idp.Issuer}}
	s := run.start(t)
	config := filepath.Join(dir, "Caddyfile")
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}

	var passwords []string
	for _, query := range []string{"label=rclone", "label=camera&readonly=true"} {
		_, body := alice.expect(http.StatusOK, "POST", "/auth-app/tokens?"+query, "")
		var made struct{ Token string }
		if err := json.Unmarshal([]byte(body), &made); err != nil || made.Token == "" {
			t.Fatalf("POST /auth-app/tokens?%s answered %s", query, body)
		}
		passwords = append(passwords, made.Token)
		basicClient(t, s.URL, made.Token).expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	}

	out, code := runCaddyDavspaces(t, run, "apppasswords", "list", "alice", "--config", config)
	if code != 0 || !strings.Contains(out, passwords[0][:16]) || !strings.Contains(out, `"camera"`) || !strings.Contains(out, "all read-only") {
		t.Fatalf("apppasswords list: exit %d\n%s", code, out)
	}
	for _, pw := range passwords {
		if strings.Contains(out, pw[16:]) {
			t.Fatal("apppasswords list printed a secret")
		}
	}
	if out, code := runCaddyDavspaces(t, run, "apppasswords", "revoke", "alice", "not-an-id", "--config", config); code != 2 {
		t.Fatalf("apppasswords revoke of a malformed id: exit %d\n%s", code, out)
	}
	out, code = runCaddyDavspaces(t, run, "apppasswords", "revoke", "alice", "--config", config)
	if code != 0 || !strings.Contains(out, "revoked 2 app password(s) of alice") {
		t.Fatalf("apppasswords revoke: exit %d\n%s", code, out)
	}
	for _, pw := range passwords {
		basicClient(t, s.URL, pw).expect(http.StatusUnauthorized, "PROPFIND", "/webdav/", "", "Depth", "0")
	}
	if out, code := runCaddyDavspaces(t, run, "apppasswords", "list", "alice", "--config", config); code != 0 || !strings.Contains(out, "SCOPE") || strings.Contains(out, passwords[0][:16]) {
		t.Fatalf("apppasswords list after the revocation: exit %d\n%s", code, out)
	}
}
