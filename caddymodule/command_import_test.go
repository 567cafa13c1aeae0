package caddymodule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// treeCommandRun is what one `caddy davspaces import` or `export` did.
type treeCommandRun struct {
	stdout, stderr string
	err            error // the subcommand's own, before Caddy wraps it
}

// runTreeCommand runs `davspaces <args>` (import or export) on the
// embedded store in data.
func runTreeCommand(t *testing.T, data string, args ...string) treeCommandRun {
	t.Helper()
	config := filepath.Join(t.TempDir(), "Caddyfile")
	caddyfile := "{\n\tadmin off\n}\n:0 {\n\tdavspaces {\n\t\troot " + data + "\n\t}\n}\n"
	if err := os.WriteFile(config, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	root := &cobra.Command{Use: "davspaces", SilenceUsage: true, SilenceErrors: true}
	setUpCommand(root)
	var run treeCommandRun
	for _, sub := range root.Commands() {
		if sub.Name() == args[0] {
			// Caddy's exit error hides the subcommand's: keep that one.
			runSub := map[string]func(*cobra.Command, []string) error{"import": runImport, "export": runExport}[args[0]]
			sub.RunE = runCommand(func(cmd *cobra.Command, a []string) error {
				run.err = runSub(cmd, a)
				return run.err
			})
		}
	}
	var stdout, stderr strings.Builder
	root.SetArgs(append([]string{args[0], "--config", config}, args[1:]...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	if err := root.Execute(); err != nil && run.err == nil {
		run.err = err
	}
	run.stdout, run.stderr = stdout.String(), stderr.String()
	return run
}

// withBoltStore opens the embedded store in data, calls fn and closes it.
func withBoltStore(t *testing.T, data string, fn func(s *boltstore.Store)) {
	t.Helper()
	s, err := boltstore.Open(data, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fn(s)
}

func TestImportExportCommands(t *testing.T) {
	data, src := t.TempDir(), t.TempDir()
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, content := range map[string]string{"a.txt": "alpha", "sub/b.txt": "beta"} {
		p := filepath.Join(src, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
		must(t, os.Chtimes(p, time.Time{}, mtime))
	}
	// marie has a space already, with the display name her sign-in gave.
	withBoltStore(t, data, func(s *boltstore.Store) {
		_, err := s.PersonalSpace(context.Background(), storage.User{ID: "marie", DisplayName: "Marie Curie"})
		must(t, err)
	})

	run := runTreeCommand(t, data, "import", "--space", "user:marie", src, "/from/old server")
	if run.err != nil {
		t.Fatalf("import: %v\n%s", run.err, run.stderr)
	}
	if !strings.Contains(run.stdout, "import: 2 files (9 B) written, 3 folders created") {
		t.Errorf("import summary %q", run.stdout)
	}
	run = runTreeCommand(t, data, "import", "--space", "user:marie", src, "/from/old server")
	if run.err != nil || !strings.Contains(run.stdout, "0 files (0 B) written, 0 folders created, 2 files (9 B) unchanged") {
		t.Errorf("second import: %v, summary %q", run.err, run.stdout)
	}
	withBoltStore(t, data, func(s *boltstore.Store) {
		spaces, err := s.Spaces(context.Background())
		must(t, err)
		if len(spaces) != 1 || spaces[0].OwnerDisplayName != "Marie Curie" {
			t.Errorf("spaces %+v: want marie's alone, her display name kept", spaces)
		}
	})

	dest := filepath.Join(t.TempDir(), "out")
	run = runTreeCommand(t, data, "export", "--space", "user:marie", "--path", "from/old server", dest)
	if run.err != nil {
		t.Fatalf("export: %v\n%s", run.err, run.stderr)
	}
	got, err := os.ReadFile(filepath.Join(dest, "sub", "b.txt"))
	if err != nil || string(got) != "beta" {
		t.Errorf("exported sub/b.txt = %q (%v)", got, err)
	}
	if info, err := os.Stat(filepath.Join(dest, "a.txt")); err != nil || !info.ModTime().Equal(mtime) {
		t.Errorf("exported a.txt: %v, mtime %v, want %v", err, info.ModTime(), mtime)
	}

	if run := runTreeCommand(t, data, "export", "--space", "user:marie", dest); exitStatus(run.err) != 2 || !strings.Contains(run.err.Error(), "--force") {
		t.Errorf("export into a non-empty folder: %v, want a usage error naming --force", run.err)
	}
	if run := runTreeCommand(t, data, "export", "--space", "user:marie", "--force", dest); run.err != nil {
		t.Errorf("export --force: %v", run.err)
	}
}

func TestImportCommandListsWhatItLeavesOut(t *testing.T) {
	data, src := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "file"), []byte("x"), 0o644))
	must(t, os.Symlink("file", filepath.Join(src, "link")))
	run := runTreeCommand(t, data, "import", "--space", "user:einstein", src)
	if exitStatus(run.err) != 1 {
		t.Errorf("import with a link: %v, want exit status 1", run.err)
	}
	if !strings.Contains(run.stderr, "skipped link: not a regular file: a symbolic link") {
		t.Errorf("stderr %q does not list the link", run.stderr)
	}
	if !strings.Contains(run.stdout, "1 files (1 B) written") || !strings.Contains(run.stdout, "1 skipped") {
		t.Errorf("summary %q", run.stdout)
	}
}

func TestTreeCommandErrors(t *testing.T) {
	data, src := t.TempDir(), t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantMsg    string
	}{
		{name: "import without --space", args: []string{"import", src}, wantStatus: 2, wantMsg: "--space"},
		{name: "import without SRC", args: []string{"import", "--space", "user:einstein"}, wantStatus: 2, wantMsg: "SRC"},
		{name: "import into no space", args: []string{"import", "--space", "nope", src}, wantStatus: 2, wantMsg: "no space has that id"},
		{name: "import a missing folder", args: []string{"import", "--space", "user:einstein", filepath.Join(src, "missing")}, wantStatus: 2, wantMsg: "not a local folder"},
		{name: "export of a user without a space", args: []string{"export", "--space", "user:nobody", t.TempDir()}, wantStatus: 2, wantMsg: "no personal space"},
		{name: "export without DEST", args: []string{"export", "--space", "user:einstein"}, wantStatus: 2, wantMsg: "argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runTreeCommand(t, data, tt.args...)
			if exitStatus(run.err) != tt.wantStatus || !strings.Contains(run.err.Error(), tt.wantMsg) {
				t.Errorf("%v: exit status %d, want %d with %q", run.err, exitStatus(run.err), tt.wantStatus, tt.wantMsg)
			}
		})
	}
	withBoltStore(t, data, func(s *boltstore.Store) {
		spaces, err := s.Spaces(context.Background())
		must(t, err)
		if len(spaces) != 0 {
			t.Errorf("spaces %+v: a refused command made one", spaces)
		}
	})
}

func TestTreeCommandsOnAStoreInUse(t *testing.T) {
	data := t.TempDir()
	withBoltStore(t, data, func(*boltstore.Store) {
		run := runTreeCommand(t, data, "import", "--space", "user:einstein", t.TempDir())
		if run.err == nil || !strings.Contains(run.err.Error(), "stop the server") {
			t.Errorf("import while the store is open elsewhere: %v, want it to say to stop the server", run.err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
