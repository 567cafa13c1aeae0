package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/internal/progress"
	"github.com/davspaces/davspaces/localtree"
	"github.com/davspaces/davspaces/storage"
)

// `caddy davspaces import` and `export`: the migration path into a space
// and out of it (package localtree does the moving).

func init() {
	addSubcommand(newImportCommand)
	addSubcommand(newExportCommand)
}

// personalPrefix marks a --space that names a user's personal space.
const personalPrefix = "user:"

func newImportCommand() *cobra.Command {
	cmd := newSubcommand("import --space <id | user:NAME> [--workers N] SRC [DEST-PATH]",
		"Brings a local folder's tree into a space",
		`
Brings the files and folders below the local folder SRC into a space, below
DEST-PATH (default: the space's root; missing folders are created), with
their modification times. Every file is committed as a WebDAV PUT is, its
checksums computed while it streams, within the space's quota.

A file the space has already with the same size and SHA1 is left as it is,
so an interrupted import can simply be run again; one that differs is
replaced, its old content kept as a version. A folder's modification time
is always the time of the latest change below it. Symbolic links, devices,
sockets and named pipes are left out, and so are names the store refuses,
files the quota cannot hold and files someone holds a WebDAV lock on: each
is listed on standard error, the import goes on, and the command exits
with status 1 at the end.

--space names the space by its id, or a user's personal space as
user:NAME (created when the user has none yet).

The embedded (bolt) store opens in one process at a time: stop the server,
import, start it again. With 'store postgres' the import runs while the
servers serve.`,
		runImport)
	cmd.Flags().String("space", "", "The space: its id, or user:NAME for a user's personal space")
	cmd.Flags().Int("workers", localtree.DefaultWorkers, "How many files to import at once")
	return cmd
}

func newExportCommand() *cobra.Command {
	cmd := newSubcommand("export --space <id | user:NAME> [--path PATH] [--force] DEST",
		"Writes a space's files and folders into a local folder",
		`
Writes the live tree of a space (not its trash, not its versions), or of
the folder --path in it, into the local folder DEST as plain files and
folders with their modification times, byte for byte as stored: each
file's SHA1 is checked as it is written. What it creates is readable by
the user who runs it only (files 0600, folders 0700): hand it on with
chmod or chown. DEST is created when missing; one that holds anything is
refused unless --force, which replaces the files of the same names and
leaves the rest.

The embedded (bolt) store opens in one process at a time: stop the server
first. With 'store postgres' the export runs while the servers serve.`,
		runExport)
	cmd.Flags().String("space", "", "The space: its id, or user:NAME for a user's personal space")
	cmd.Flags().String("path", "", "The folder or file of the space to export (default: the whole space)")
	cmd.Flags().Bool("force", false, "Write into a DEST that is not empty, replacing files of the same names")
	return cmd
}

func runImport(cmd *cobra.Command, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usageError("%s takes SRC and an optional DEST-PATH: %s", cmd.CommandPath(), cmd.UseLine())
	}
	src, destPath := args[0], ""
	if len(args) == 2 {
		destPath = args[1]
	}
	spaceArg, err := spaceFlag(cmd)
	if err != nil {
		return err
	}
	workers, _ := cmd.Flags().GetInt("workers")
	if workers < 1 {
		return usageError("--workers %d: at least 1", workers)
	}
	// Checked before --space can create a personal space for nothing.
	if info, err := os.Stat(src); err != nil || !info.IsDir() {
		return usageError("%s is not a local folder", src)
	}
	return withTreeStore(cmd, "import", func(ctx context.Context, store Store) error {
		space, err := findSpace(ctx, store, spaceArg, true)
		if err != nil {
			return err
		}
		bar := progress.New(cmd.OutOrStdout(), "import", 0, progress.Options{Bytes: true})
		obs := treeObserver(bar, cmd.ErrOrStderr())
		sum, err := localtree.Import(ctx, store, space.ID, src, destPath, localtree.ImportOptions{Workers: workers, Observer: obs})
		bar.Finish("%s into space %s", sum, space.ID)
		return leftOut(sum, err)
	})
}

func runExport(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 1); err != nil {
		return err
	}
	spaceArg, err := spaceFlag(cmd)
	if err != nil {
		return err
	}
	srcPath, _ := cmd.Flags().GetString("path")
	force, _ := cmd.Flags().GetBool("force")
	return withTreeStore(cmd, "export", func(ctx context.Context, store Store) error {
		space, err := findSpace(ctx, store, spaceArg, false)
		if err != nil {
			return err
		}
		bar := progress.New(cmd.OutOrStdout(), "export", 0, progress.Options{Bytes: true})
		opts := localtree.ExportOptions{Overwrite: force, Observer: treeObserver(bar, cmd.ErrOrStderr())}
		sum, err := localtree.Export(ctx, store, space.ID, srcPath, args[0], opts)
		bar.Finish("%s from space %s", sum, space.ID)
		if errors.Is(err, localtree.ErrDestNotEmpty) {
			return usageError("%v: give --force to write into it", err)
		}
		return leftOut(sum, err)
	})
}

// spaceFlag returns the --space a command must have.
func spaceFlag(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("space")
	if s == "" || s == personalPrefix {
		return "", usageError("%s needs --space <id | user:NAME>", cmd.CommandPath())
	}
	return s, nil
}

// withTreeStore opens the configured store for an import or export (what
// says which), runs run on it and closes it. An embedded store that a
// server holds cannot be opened: the error says to stop the server.
func withTreeStore(cmd *cobra.Command, what string, run func(context.Context, Store) error) error {
	h, err := loadConfiguredHandler(cmd)
	if err != nil {
		return err
	}
	defer h.Close()
	store, err := h.Open(cmd.Context())
	if err != nil {
		if _, embedded := h.Backend.(*BoltStore); embedded {
			return fmt.Errorf("%w (the embedded store opens in one process at a time: stop the server that serves %s, %s, then start it again)", err, h.Key(), what)
		}
		return err
	}
	defer store.Close()
	return run(cmd.Context(), store)
}

// findSpace returns the space --space names: a space id, or user:NAME for
// the personal space of user NAME, which create makes when the user has
// none yet, as the user's first request would.
func findSpace(ctx context.Context, store Store, arg string, create bool) (storage.Space, error) {
	user, personal := strings.CutPrefix(arg, personalPrefix)
	if !personal {
		sp, err := store.Space(ctx, arg)
		if errors.Is(err, storage.ErrNotFound) {
			return sp, usageError("--space %s: no space has that id (a user's personal space is user:NAME)", arg)
		}
		return sp, err
	}
	// Looked up first: PersonalSpace would also set the owner's display
	// name, which only the user's sign-in knows.
	spaces, err := store.Spaces(ctx)
	if err != nil {
		return storage.Space{}, err
	}
	for _, sp := range spaces {
		if sp.Type == storage.SpacePersonal && sp.Owner == user {
			return sp, nil
		}
	}
	if !create {
		return storage.Space{}, usageError("--space %s: user %q has no personal space yet", arg, user)
	}
	sp, err := store.PersonalSpace(ctx, storage.User{ID: user})
	if errors.Is(err, storage.ErrInvalid) {
		return sp, usageError("--space %s: %v", arg, err)
	}
	return sp, err
}

// treeObserver shows a transfer's bytes on bar and lists what it leaves
// out on out, one line each.
func treeObserver(bar *progress.Reporter, out io.Writer) localtree.Observer {
	return localtree.Observer{
		Progress: func(p localtree.Progress) { bar.Set(p.Bytes, p.TotalBytes) },
		Report:   func(s localtree.Skip) { fmt.Fprintln(out, s) },
	}
}

// leftOut is the outcome of a transfer that ended with err: a transfer
// that left something out ran to the end but did not bring everything
// over (exit status 1).
func leftOut(sum localtree.Summary, err error) error {
	if err != nil {
		return err
	}
	if sum.Skipped > 0 {
		return fmt.Errorf("%d files or folders left out, listed above: %w", sum.Skipped, errProblems)
	}
	return nil
}
