package caddymodule

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// runSubcommand runs `davspaces args…` as `caddy davspaces` would and
// returns what it wrote on standard output and standard error.
func runSubcommand(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := &cobra.Command{Use: "davspaces", SilenceUsage: true, SilenceErrors: true}
	setUpCommand(root)
	var out, errOut strings.Builder
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// writeConfig writes a Caddyfile and returns its path.
func writeConfig(t *testing.T, caddyfile string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// putFile stores content at name in the space's root.
func putFile(t *testing.T, s storage.Store, spaceID, name, content string) storage.Node {
	t.Helper()
	u, err := s.NewUpload(t.Context(), spaceID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Discard()
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	n, _, err := u.Commit(t.Context(), storage.Commit{ParentID: spaceID, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestUsageListsEverySpace(t *testing.T) {
	data := t.TempDir()
	s, err := boltstore.Open(data, boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := s.PersonalSpace(t.Context(), storage.User{ID: "alice", DisplayName: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, s, alice.ID, "a.txt", "hello")
	dir, err := s.Mkdir(t.Context(), alice.ID, alice.ID, "sub")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := s.NewUpload(t.Context(), alice.ID)
	io.Copy(u, strings.NewReader("world!"))
	if _, _, err := u.Commit(t.Context(), storage.Commit{ParentID: dir.ID, Name: "b.txt"}); err != nil {
		t.Fatal(err)
	}
	u.Discard()
	gone := putFile(t, s, alice.ID, "gone.txt", "1234567")
	if err := s.Remove(t.Context(), alice.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	config := writeConfig(t, `{
	admin off
}
:0 {
	davspaces {
		root `+data+`
		personal_quota 1MB
		space Physics {
			id physics
			quota 5000
			manager alice
			viewer bob
		}
	}
}
`)
	out, _, err := runSubcommand(t, "usage", "--config", config)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "SPACE") {
		t.Fatalf("usage printed:\n%s", out)
	}
	// The project space is declared by the server when it starts; this
	// store has never served, so only Alice's space is there.
	want := regexp.MustCompile(`^` + alice.ID + `\s+Alice\s+personal\s+1\s+2\s+11\s+7\s+0\s+1000000$`)
	if !want.MatchString(lines[1]) {
		t.Fatalf("usage line %q does not match %s", lines[1], want)
	}
}

// usage reads the PostgreSQL store as well, here from a JSON
// configuration.
func TestUsageOfThePostgresStore(t *testing.T) {
	raw := postgresStoreJSON(testpeer.PostgreSQL(t), testpeer.S3Bucket(t))
	dav := &DAVSpaces{StoreRaw: raw, Spaces: []ProjectSpace{{Name: "Physics", Managers: []string{"einstein"}, Editors: []string{"marie"}}}}
	mustProvision(t, dav)
	einstein, err := dav.store.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dav.store, einstein.ID, "a.txt", "hello")
	config := filepath.Join(t.TempDir(), "caddy.json")
	body := `{"admin":{"disabled":true},"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:0"],"routes":[{"handle":[{"handler":"davspaces","store":` + string(raw) + `}]}]}}}}}`
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runSubcommand(t, "usage", "--config", config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^` + einstein.ID + `\s+einstein\s+personal\s+1\s+1\s+5\s+0\s+0\s+none$`,
		`(?m)\s+Physics\s+project\s+2\s+0\s+0\s+0\s+0\s+none$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("usage has no line matching %s:\n%s", want, out)
		}
	}
}
