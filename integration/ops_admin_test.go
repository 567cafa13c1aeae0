package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// adminSocket is the address of an admin endpoint on a unix socket only
// its owner may use, as Caddyfile.example has it.
func adminSocket(t *testing.T) string {
	t.Helper()
	return "unix/" + filepath.Join(t.TempDir(), "admin.sock") + "|0600"
}

// adminGet sends GET path to the admin endpoint at addr (host:port or
// unix/path|mode) and returns the status and body.
func adminGet(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	client, base := http.DefaultClient, "http://"+addr
	if socket, ok := strings.CutPrefix(addr, "unix/"); ok {
		socket, _, _ = strings.Cut(socket, "|")
		client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return new(net.Dialer).DialContext(ctx, "unix", socket)
		}}}
		base = "http://127.0.0.1"
	}
	resp, err := client.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s from the admin endpoint: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestOpsAdminEndpointsKeepToTheSocket: on Caddy's TCP admin listener,
// which every local user reaches, the snapshot endpoint refuses the
// database (403) and `caddy davspaces backup` says why; on the unix
// socket the backup works, and a store not open there is 404; no answer
// names the data directory. admin_over_tcp opens TCP again.
func TestOpsAdminEndpointsKeepToTheSocket(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	for _, tt := range []struct {
		name      string
		admin     string
		davspaces []string
		status    int
	}{
		{"TCP", fmt.Sprintf("127.0.0.1:%d", freePort(t)), nil, http.StatusForbidden},
		{"unix socket", adminSocket(t), nil, http.StatusOK},
		{"TCP with admin_over_tcp", fmt.Sprintf("127.0.0.1:%d", freePort(t)), []string{"admin_over_tcp"}, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := serverOptions{admin: tt.admin, davspaces: tt.davspaces}
			s := startServer(t, opts)
			config := opsConfig(t, serverPort(t, s), s.Root, opts)
			newClient(t, s.URL, "einstein").expect(http.StatusCreated, "PUT", "/webdav/small.txt", "small")

			status, body := adminGet(t, tt.admin, "/davspaces/snapshot?store="+url.QueryEscape(s.Root))
			if status != tt.status {
				t.Fatalf("snapshot: %d, want %d\n%.300s", status, tt.status, body)
			}
			wrong := filepath.Join(filepath.Dir(s.Root), "elsewhere")
			status, body = adminGet(t, tt.admin, "/davspaces/snapshot?store="+url.QueryEscape(wrong))
			if status != http.StatusNotFound && status != http.StatusForbidden {
				t.Fatalf("snapshot of a store not open: %d\n%s", status, body)
			}
			if strings.Contains(body, filepath.Dir(s.Root)) {
				t.Fatalf("the answer for a store not open names the data directory: %s", body)
			}

			out, errOut, code := davspacesCommand(t, "backup", "--config", config, "--adapter", "caddyfile", filepath.Join(t.TempDir(), "backup"))
			switch {
			case tt.status == http.StatusOK && code != 0:
				t.Fatalf("backup: exit %d\n%s\n%s", code, out, tail(errOut, 4000))
			case tt.status != http.StatusOK && (code != 1 || !strings.Contains(errOut, "unix socket")):
				t.Fatalf("backup through a TCP admin endpoint: exit %d, want 1 saying why\n%s\n%s", code, out, tail(errOut, 4000))
			}
		})
	}
}
