package caddymodule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/storage"
)

// runProbe runs `davspaces probe` with args against a Caddyfile, where
// probe opens the configured store and lists its spaces, and returns the
// store key it opened.
func runProbe(t *testing.T, caddyfile string, args ...string) (key string, err error) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(config, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	root := &cobra.Command{Use: "davspaces", SilenceUsage: true, SilenceErrors: true}
	setUpCommand(root)
	// Caddy's exit error hides the subcommand's: keep that one.
	var got error
	root.AddCommand(newSubcommand("probe", "opens the store", "", func(cmd *cobra.Command, args []string) error {
		got = probe(cmd, args, &key)
		return got
	}))
	root.SetArgs(append([]string{"probe", "--config", config}, args...))
	root.SetOut(new(strings.Builder))
	root.SetErr(new(strings.Builder))
	if err := root.Execute(); err != nil && got == nil {
		return "", err
	}
	return key, got
}

// probe opens the configured store and lists its spaces.
func probe(cmd *cobra.Command, args []string, key *string) error {
	if err := exactArgs(cmd, args, 0); err != nil {
		return err
	}
	store, backend, closeStore, err := openConfiguredStore(cmd)
	if err != nil {
		return err
	}
	defer closeStore()
	if _, err := store.(storage.SpaceLister).Spaces(cmd.Context()); err != nil {
		return err
	}
	*key = backend.StoreKey()
	return nil
}

func TestCommandOpensTheOnlyStore(t *testing.T) {
	data := t.TempDir()
	key, err := runProbe(t, `{
	admin off
}
:0 {
	route /a/* {
		handle {
			davspaces {
				store bolt {
					root `+data+`
				}
			}
		}
	}
	davspaces {
		root `+data+`
	}
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if key != data {
		t.Fatalf("opened %s, want %s", key, data)
	}
	if _, err := os.Stat(filepath.Join(data, "meta.db")); err != nil {
		t.Fatalf("the store was not opened: %v", err)
	}
}

func TestCommandChoosesAmongStores(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	config := `{
	admin off
}
:0 {
	handle /a/* {
		davspaces {
			root ` + a + `
		}
	}
	handle /b/* {
		davspaces {
			root ` + b + `
		}
	}
}
`
	_, err := runProbe(t, config)
	if exitStatus(err) != 2 {
		t.Fatalf("no --handler with two stores: %v, want a usage error", err)
	}
	for _, want := range []string{"1: " + a, "2: " + b} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not list %q", err, want)
		}
	}
	if key, err := runProbe(t, config, "--handler", "2"); err != nil || key != b {
		t.Fatalf("--handler 2 opened %q (%v), want %s", key, err, b)
	}
	if key, err := runProbe(t, config, "--handler", a); err != nil || key != a {
		t.Fatalf("--handler %s opened %q (%v)", a, key, err)
	}
	if _, err := runProbe(t, config, "--handler", "3"); exitStatus(err) != 2 {
		t.Fatalf("--handler 3: %v, want a usage error", err)
	}
}

func TestCommandUsageErrors(t *testing.T) {
	data := t.TempDir()
	config := ":0 {\n\tdavspaces {\n\t\troot " + data + "\n\t}\n}\n"
	if _, err := runProbe(t, config, "extra"); exitStatus(err) != 2 {
		t.Fatalf("an extra argument: %v, want a usage error", err)
	}
	if _, err := runProbe(t, ":0 {\n\trespond ok\n}\n"); exitStatus(err) != 2 {
		t.Fatalf("no davspaces handler: %v, want a usage error", err)
	}
	if exitStatus(errProblems) != 1 || exitStatus(nil) != 0 {
		t.Fatal("exit statuses of problems and success")
	}
}

func TestCommandUnknownSubcommand(t *testing.T) {
	root := &cobra.Command{Use: "davspaces", SilenceUsage: true, SilenceErrors: true}
	setUpCommand(root)
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"bogus"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `unknown command "bogus"`) {
		t.Fatalf("an unknown subcommand: %v", err)
	}
	root.SetArgs([]string{})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands") {
		t.Fatalf("no subcommand: %v, printed %q", err, out.String())
	}
}
