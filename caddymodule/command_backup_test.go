package caddymodule

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// storeWithFiles makes a stopped embedded store in a new directory with
// a personal space holding the given files, and returns its directory and
// the space.
func storeWithFiles(t *testing.T, files map[string]string) (string, storage.Space) {
	t.Helper()
	data := t.TempDir()
	s, err := boltstore.Open(data, boltstore.Options{NoSync: true, InlineLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, err := s.PersonalSpace(t.Context(), storage.User{ID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		putFile(t, s, sp.ID, name, content)
	}
	return data, sp
}

func boltConfig(t *testing.T, root string) string {
	return writeConfig(t, "{\n\tadmin off\n}\n:0 {\n\tdavspaces {\n\t\troot "+root+"\n\t}\n}\n")
}

func TestBackupAndRestoreCommands(t *testing.T) {
	data, sp := storeWithFiles(t, map[string]string{"a.txt": "aaa", "b.txt": "bbbb"})
	config := boltConfig(t, data)
	dest := filepath.Join(t.TempDir(), "backup")
	out, _, err := runSubcommand(t, "backup", "--config", config, dest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "backup: database") || !strings.Contains(out, "2 linked (7 B)") || !strings.Contains(out, "the stopped store") {
		t.Fatalf("backup printed %q", out)
	}
	out, _, err = runSubcommand(t, "backup", "--config", config, dest)
	if err != nil || !strings.Contains(out, "0 linked") || !strings.Contains(out, "2 already there (7 B)") {
		t.Fatalf("incremental backup printed %q, %v", out, err)
	}

	fresh := filepath.Join(t.TempDir(), "restored")
	restoreConfig := boltConfig(t, fresh)
	out, _, err = runSubcommand(t, "restore", "--config", restoreConfig, dest)
	if err != nil || !strings.Contains(out, "the store in "+fresh+" opens") {
		t.Fatalf("restore printed %q, %v", out, err)
	}
	out, _, err = runSubcommand(t, "usage", "--config", restoreConfig)
	if err != nil || !strings.Contains(out, sp.ID) {
		t.Fatalf("usage of the restored store printed %q, %v", out, err)
	}
	if _, _, err := runSubcommand(t, "restore", "--config", restoreConfig, dest); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore into a store without --force: %v", err)
	}
	if _, _, err := runSubcommand(t, "restore", "--config", restoreConfig, "--force", dest); err != nil {
		t.Fatalf("restore --force: %v", err)
	}
}

func TestBackupRefusesADestinationInTheStore(t *testing.T) {
	data, _ := storeWithFiles(t, nil)
	_, _, err := runSubcommand(t, "backup", "--config", boltConfig(t, data), filepath.Join(data, "backup"))
	if err == nil || !strings.Contains(err.Error(), "must not hold one another") {
		t.Fatalf("backup into the store: %v", err)
	}
}

// The admin endpoint sends the database of a store the server has open.
func TestSnapshotAdminSendsTheOpenDatabase(t *testing.T) {
	data, _ := storeWithFiles(t, map[string]string{"a.txt": "aaa"})
	dav := &DAVSpaces{Root: data}
	if err := provision(t, dav); err != nil {
		t.Fatal(err)
	}
	defer dav.Cleanup()

	rec := httptest.NewRecorder()
	req := adminRequest(http.MethodGet, snapshotPath+"?store="+url.QueryEscape(data), "unix")
	if err := serveSnapshot(rec, req); err != nil {
		t.Fatal(err)
	}
	copyDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(copyDir, "meta.db"), rec.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	blobs, err := boltstore.ReferencedContent(filepath.Join(copyDir, "meta.db"))
	if err != nil || len(blobs) != 1 {
		t.Fatalf("the copy references %v, %v; want a.txt's content", blobs, err)
	}
	if entries, _ := os.ReadDir(data); len(entries) == 0 {
		t.Fatal("no store")
	} else {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".snapshot-") {
				t.Fatalf("the spooled copy %s was left behind", e.Name())
			}
		}
	}

	err = serveSnapshot(httptest.NewRecorder(), adminRequest(http.MethodGet, snapshotPath+"?store=/nowhere", "unix"))
	var apiErr caddy.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusNotFound {
		t.Fatalf("a store not open here: %v", err)
	}
}

// The PostgreSQL store has backups of its own: the commands say so and
// touch nothing.
func TestBackupAndRestoreRefuseThePostgresStore(t *testing.T) {
	config := writeConfig(t, `{
	admin off
}
:0 {
	davspaces {
		store postgres {
			dsn "postgres://davspaces@127.0.0.1:1/davspaces"
			s3 {
				endpoint 127.0.0.1:1
				bucket davspaces
				access_key key
				secret_key secret
			}
		}
	}
}
`)
	for _, command := range []string{"backup", "restore"} {
		_, _, err := runSubcommand(t, command, "--config", config, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "embedded (bolt) store only") || !strings.Contains(err.Error(), "docs/operations.md") {
			t.Errorf("%s of a PostgreSQL store: %v", command, err)
		}
	}
}
