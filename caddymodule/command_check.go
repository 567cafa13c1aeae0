package caddymodule

import (
	"errors"
	"fmt"
	"io"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/internal/progress"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func init() { addSubcommand(newCheckCommand) }

// newCheckCommand makes `caddy davspaces check`.
func newCheckCommand() *cobra.Command {
	cmd := newSubcommand("check [--deep] [--repair]", "Checks the store for damage, and repairs it", `
Checks the consistency of the store of a davspaces handler: every file's
content is there with its size (with --deep also its SHA1), no content is
left that nothing references, folder sizes add up, upload sessions, chunked
uploads, locks, trash items and versions point at live data, and the usage
counters agree with a recount.

Each problem is printed on a line of its own, as
"<kind> <space>:/<path>: <detail>", then a summary. With --repair the
problems that need no guessing are fixed (orphans removed, sizes and
counters recomputed, dangling records dropped) and marked "(repaired)";
a file whose content is missing is never removed.

The exit status is 0 when the store is sound (or was repaired), 1 when
problems remain.

A stopped embedded store is opened without its recovery and background
sweeps, so that the check sees it as it is. One that a running server
holds (its database is locked by that process) is checked by the server,
through the configuration's admin endpoint (POST /davspaces/check), while
it serves.`, runCheckCommand)
	cmd.Flags().Bool("deep", false, "Also read every content and compare its SHA1")
	cmd.Flags().Bool("repair", false, "Fix the problems that can be fixed without guessing")
	return cmd
}

func runCheckCommand(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 0); err != nil {
		return err
	}
	deep, _ := cmd.Flags().GetBool("deep")
	repair, _ := cmd.Flags().GetBool("repair")
	checker, closeStore, err := openCheckedStore(cmd)
	if err != nil {
		return err
	}
	defer closeStore()

	out := cmd.OutOrStdout()
	bar := progress.New(out, "check", 0, progress.Options{})
	remaining := 0
	sum, err := checker.Check(cmd.Context(), storage.CheckOptions{Deep: deep, Repair: repair, Progress: bar.Set}, func(p storage.Problem) {
		printProblem(out, p)
		if !p.Repaired {
			remaining++
		}
	})
	bar.Finish("%s", checkSummary(sum, err))
	if err != nil {
		return err
	}
	if remaining > 0 {
		return errProblems
	}
	return nil
}

// printProblem writes p on a line of its own, first clearing the line of
// a progress bar on a terminal, which redraws itself below.
func printProblem(out io.Writer, p storage.Problem) {
	if progress.IsTerminal(out) {
		fmt.Fprint(out, "\r\033[K")
	}
	fmt.Fprintln(out, p)
}

// checkSummary is the summary line of a check.
func checkSummary(sum storage.CheckSummary, err error) string {
	s := fmt.Sprintf("%d spaces, %d nodes, %d contents of %d bytes checked; %d problems, %d repaired",
		sum.Spaces, sum.Nodes, sum.Contents, sum.Bytes, sum.Problems, sum.Repaired)
	if err != nil {
		s += "; stopped: " + err.Error()
	}
	return s
}

// openCheckedStore opens the store the command line names for a check:
// the embedded one for inspection (boltstore.Options.Inspect: no recovery
// or sweep changes it before the check sees it), or, when a running
// server holds it, through that server's admin endpoint; any other store
// as the server opens it.
func openCheckedStore(cmd *cobra.Command) (storage.Checker, func() error, error) {
	h, err := loadConfiguredHandler(cmd)
	if err != nil {
		return nil, nil, err
	}
	var store Store
	if b, ok := h.Backend.(*BoltStore); ok {
		store, err = boltstore.Open(b.StoreKey(), boltstore.Options{
			StorageID: caddy.NewReplacer().ReplaceAll(h.Handlers[0].StorageID, ""),
			Logger:    h.ctx.Logger(),
			Inspect:   true,
		})
		if errors.Is(err, boltstore.ErrLocked) {
			defer h.Close()
			return runningServerChecker(h.Config, b.StoreKey())
		}
	} else {
		store, err = h.Open(cmd.Context())
	}
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	closeStore := h.closer(store)
	checker, ok := store.(storage.Checker)
	if !ok {
		closeStore()
		return nil, nil, fmt.Errorf("the store %s cannot check itself", h.Key())
	}
	return checker, closeStore, nil
}

// runningServerChecker checks the embedded store in root through the
// admin endpoint of the server that holds it.
func runningServerChecker(config []byte, root string) (storage.Checker, func() error, error) {
	addr, err := adminAddress(config)
	if err != nil {
		return nil, nil, fmt.Errorf("the store %s is open in a running server, and its configuration turns the admin endpoint off: stop the server, or turn the endpoint on to check the store while it serves", root)
	}
	return adminChecker{addr: addr, key: root}, func() error { return nil }, nil
}
