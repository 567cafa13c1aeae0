package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/internal/progress"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func init() {
	addSubcommand(newBackupCommand)
	addSubcommand(newRestoreCommand)
}

func newBackupCommand() *cobra.Command {
	return newSubcommand("backup DEST", "Backs the embedded store up, while it serves",
		`
Copies the embedded store the configuration names into the directory DEST,
while the server serves or not: a consistent copy of its database, and the
content files that copy references, hard-linked when DEST is on the same
file system (they never change), copied otherwise. A backup into the
directory of an earlier one adds only the content files it lacks and
drops those no longer referenced. Unfinished uploads are not kept.

When the server runs, it makes the database copy: the command asks the
configuration's admin endpoint for it (GET /davspaces/snapshot), so the
admin endpoint must be on. The PostgreSQL store is backed up with
pg_dump and the bucket's own replication or versioning: see docs/operations.md.`,
		runBackup)
}

func runBackup(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 1); err != nil {
		return err
	}
	h, root, err := loadEmbeddedStore(cmd, "backup")
	if err != nil {
		return err
	}
	defer h.Close()
	dest, err := filepath.Abs(args[0])
	if err != nil {
		return usageError("backup destination %q: %v", args[0], err)
	}
	if within(dest, root) || within(root, dest) {
		return usageError("the backup destination %s and the store %s must not hold one another", dest, root)
	}
	snapshot, from, closeSource, err := snapshotSource(h, root)
	if err != nil {
		return err
	}
	defer closeSource()
	bar := progress.New(cmd.OutOrStdout(), "backup", 0, progress.Options{})
	stats, err := boltstore.Backup(cmd.Context(), root, dest, boltstore.BackupOptions{Snapshot: snapshot, Progress: bar.Set})
	if err != nil {
		return err
	}
	bar.Finish("database %s from %s in %d snapshot(s); content files: %d linked (%s), %d copied (%s), %d already there (%s), %d dropped",
		size(stats.DatabaseBytes), from, stats.Snapshots,
		stats.Linked, size(stats.LinkedBytes), stats.Copied, size(stats.CopiedBytes),
		stats.Skipped, size(stats.SkippedBytes), stats.Removed)
	return nil
}

func size(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// snapshotSource returns where the database copies come from: the
// database itself, opened read-only, when no server holds it, else the
// running server's admin endpoint. from names it for the summary.
func snapshotSource(h *configuredHandler, root string) (snapshot func(io.Writer) (int64, error), from string, closeSource func() error, err error) {
	src, err := boltstore.OpenSnapshotSource(root)
	if err == nil {
		return src.SnapshotTo, "the stopped store", src.Close, nil
	}
	if !errors.Is(err, boltstore.ErrLocked) {
		return nil, "", nil, err
	}
	addr, err := adminAddress(h.Config)
	if err != nil {
		return nil, "", nil, err
	}
	return adminSnapshot(addr, root), "the running server", func() error { return nil }, nil
}

// adminAddress is the admin endpoint of the configuration.
func adminAddress(config []byte) (string, error) {
	var c struct {
		Admin *caddy.AdminConfig `json:"admin"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return "", fmt.Errorf("reading the configuration's admin endpoint: %w", err)
	}
	if c.Admin != nil && c.Admin.Disabled {
		return "", errors.New("a server holds the store, and the configuration turns the admin endpoint off: the backup needs it to take the database copy while the server runs (or stop the server)")
	}
	if c.Admin != nil && c.Admin.Listen != "" {
		return c.Admin.Listen, nil
	}
	return caddy.DefaultAdminListen, nil
}

// adminSnapshot takes database copies from the running server at addr.
func adminSnapshot(addr, root string) func(io.Writer) (int64, error) {
	return func(w io.Writer) (int64, error) {
		resp, err := caddycmd.AdminAPIRequest(addr, http.MethodGet, snapshotPath+"?store="+url.QueryEscape(root), nil, nil)
		if err != nil {
			return 0, fmt.Errorf("asking the running server at %s for the database copy: %w", addr, err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(w, resp.Body) // a short body is an error: Content-Length
		if err != nil {
			return n, fmt.Errorf("receiving the database copy from %s: %w", addr, err)
		}
		return n, nil
	}
}

func newRestoreCommand() *cobra.Command {
	cmd := newSubcommand("restore SRC", "Restores a backup into the embedded store (server stopped)",
		`
Restores the backup in the directory SRC (made by 'caddy davspaces backup')
into the embedded store the configuration names, with the server stopped:
the database is copied, the content files hard-linked when SRC is on the
same file system (or copied). A store that holds spaces or content is
refused unless --force, which replaces it. The restored store is then
opened, and checked when the store can check itself.`,
		runRestore)
	cmd.Flags().Bool("force", false, "Replace the store the configuration names, if it holds anything")
	return cmd
}

func runRestore(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 1); err != nil {
		return err
	}
	force, _ := cmd.Flags().GetBool("force")
	h, root, err := loadEmbeddedStore(cmd, "restore")
	if err != nil {
		return err
	}
	defer h.Close()
	bar := progress.New(cmd.OutOrStdout(), "restore", 0, progress.Options{})
	stats, err := boltstore.Restore(cmd.Context(), args[0], root, boltstore.RestoreOptions{Replace: force, Progress: bar.Set})
	switch {
	case errors.Is(err, boltstore.ErrNotEmpty):
		return fmt.Errorf("the store in %s holds spaces or content: --force replaces it", root)
	case errors.Is(err, boltstore.ErrLocked):
		return fmt.Errorf("the store in %s is open in a running server: stop it first", root)
	case err != nil:
		return err
	}
	checked, err := verifyRestored(cmd.Context(), h)
	if err != nil {
		return err
	}
	bar.Finish("database %s; content files: %d linked (%s), %d copied (%s); the store in %s opens%s",
		size(stats.DatabaseBytes), stats.Linked, size(stats.LinkedBytes), stats.Copied, size(stats.CopiedBytes), root, checked)
	return nil
}

// verifyRestored opens the restored store as the server would, and checks
// it when it can check itself. It returns what to add to the summary.
func verifyRestored(ctx context.Context, h *configuredHandler) (string, error) {
	store, err := h.Open(ctx)
	if err != nil {
		return "", fmt.Errorf("the restored store does not open: %w", err)
	}
	defer store.Close()
	checker, ok := store.(storage.Checker)
	if !ok {
		return "", nil
	}
	var problems []storage.Problem
	summary, err := checker.Check(ctx, storage.CheckOptions{}, func(p storage.Problem) { problems = append(problems, p) })
	if err != nil {
		return "", fmt.Errorf("checking the restored store: %w", err)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			commandLogger().Error(p.String())
		}
		return "", fmt.Errorf("the restored store has %d problem(s): %w", len(problems), errProblems)
	}
	return fmt.Sprintf(" and checks out (%d nodes, %d content files)", summary.Nodes, summary.Contents), nil
}

// loadEmbeddedStore loads the configured handler for command, which works
// on the embedded store only, and returns that store's folder; the caller
// closes h.
func loadEmbeddedStore(cmd *cobra.Command, command string) (h *configuredHandler, root string, err error) {
	h, err = loadConfiguredHandler(cmd)
	if err != nil {
		return nil, "", err
	}
	bolt, err := h.Bolt(command)
	if err != nil {
		h.Close()
		return nil, "", err
	}
	return h, bolt.StoreKey(), nil
}
