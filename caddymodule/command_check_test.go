package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// runDavspaces runs `davspaces args...` as the caddy binary would and
// returns its standard output and error.
func runDavspaces(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "davspaces", SilenceUsage: true, SilenceErrors: true}
	setUpCommand(root)
	var out strings.Builder
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(new(strings.Builder))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestCheckCommandReportsAndRepairs(t *testing.T) {
	data := t.TempDir()
	s, err := boltstore.Open(data, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PersonalSpace(context.Background(), storage.User{ID: "einstein"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(data, "blobs", "ab", "ab"+strings.Repeat("0", 30))
	if err := os.MkdirAll(filepath.Dir(orphan), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("nobody's"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(config, []byte("{\n\tadmin off\n}\n:0 {\n\tdavspaces {\n\t\troot "+data+"\n\t}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := runDavspaces(t, "check", "--config", config)
	if err == nil || !strings.Contains(out, "orphan-content: ") || !strings.Contains(out, "1 problems, 0 repaired") {
		t.Fatalf("check of a store with an orphan: %v\n%s", err, out)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("a check without --repair changed the store: %v", err)
	}
	out, err = runDavspaces(t, "check", "--config", config, "--repair")
	if err != nil || !strings.Contains(out, "(repaired)") || !strings.Contains(out, "1 problems, 1 repaired") {
		t.Fatalf("check --repair: %v\n%s", err, out)
	}
	out, err = runDavspaces(t, "check", "--config", config, "--deep")
	if err != nil || !strings.Contains(out, "0 problems") {
		t.Fatalf("check --deep after the repair: %v\n%s", err, out)
	}
	if _, err := runDavspaces(t, "check", "--config", config, "extra"); err == nil {
		t.Fatal("check with an argument did not fail")
	}
}

func TestCheckAdminRefusals(t *testing.T) {
	for _, tt := range []struct {
		method, store string
		status        int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, filepath.Join(t.TempDir(), "not-open"), http.StatusNotFound},
	} {
		req := adminRequest(tt.method, checkAdminPath+"?store="+url.QueryEscape(tt.store), "unix")
		err := serveCheck(httptest.NewRecorder(), req)
		var apiErr caddy.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatus != tt.status {
			t.Errorf("%s %s: %v, want status %d", tt.method, tt.store, err, tt.status)
		}
	}
}
