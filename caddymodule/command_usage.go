package caddymodule

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/davspaces/davspaces/internal/progress"
	"github.com/davspaces/davspaces/storage"
)

func init() {
	addSubcommand(newUsageCommand)
}

func newUsageCommand() *cobra.Command {
	cmd := newSubcommand("usage", "Lists each space's use of the store",
		`
Lists every space of the store, one line each: its id, name, type, number
of members, number of files, the bytes of its files, of its trash and of
its versions, and its quota ("none" without one). Sizes are in bytes, or
in KiB, MiB, … with --human. It reads the store while the server is stopped
(the embedded store) or running (PostgreSQL).`,
		runUsage)
	cmd.Flags().BoolP("human", "H", false, "Sizes in KiB, MiB, … rather than bytes")
	return cmd
}

// spaceUsage is one line of the usage listing.
type spaceUsage struct {
	Space storage.Space
	Files int64 // how many files, not in the trash
	Usage storage.Usage
}

func runUsage(cmd *cobra.Command, args []string) error {
	if err := exactArgs(cmd, args, 0); err != nil {
		return err
	}
	human, _ := cmd.Flags().GetBool("human")
	store, _, closeStore, err := openConfiguredStore(cmd)
	if err != nil {
		return err
	}
	defer closeStore()
	ctx := cmd.Context()
	spaces, err := store.Spaces(ctx)
	if err != nil {
		return err
	}
	bar := progress.New(cmd.ErrOrStderr(), "usage", int64(len(spaces)), progress.Options{})
	lines := make([]spaceUsage, 0, len(spaces))
	var total spaceUsage
	for _, sp := range spaces {
		line, err := readSpaceUsage(ctx, store, sp)
		if err != nil {
			return err
		}
		lines = append(lines, line)
		total.Files += line.Files
		total.Usage.Files += line.Usage.Files
		bar.Add(1)
	}
	if err := writeUsage(cmd.OutOrStdout(), lines, human); err != nil {
		return err
	}
	bar.Finish("%d spaces, %d files, %s", len(lines), total.Files, humanize.IBytes(uint64(max(total.Usage.Files, 0))))
	return nil
}

// readSpaceUsage reads what a space holds: its counters, and its files
// counted by walking its tree.
func readSpaceUsage(ctx context.Context, store Store, sp storage.Space) (spaceUsage, error) {
	usage, err := store.Usage(ctx, sp.ID)
	if err != nil {
		return spaceUsage{}, fmt.Errorf("usage of space %s: %w", sp.ID, err)
	}
	files, err := countFiles(ctx, store, sp.ID, sp.ID)
	if err != nil {
		return spaceUsage{}, fmt.Errorf("counting the files of space %s: %w", sp.ID, err)
	}
	return spaceUsage{Space: sp, Files: files, Usage: usage}, nil
}

// readDirPage is how many children countFiles reads at a time.
const readDirPage = 1000

// countFiles counts the files under a folder, a page of children at a
// time, so that memory stays flat however wide the folders are.
func countFiles(ctx context.Context, store storage.Store, spaceID, folderID string) (int64, error) {
	var n int64
	after := ""
	for {
		page, err := store.ReadDir(ctx, spaceID, folderID, after, readDirPage)
		if err != nil {
			return 0, err
		}
		for _, child := range page {
			if !child.IsFolder() {
				n++
				continue
			}
			below, err := countFiles(ctx, store, spaceID, child.ID)
			if err != nil {
				return 0, err
			}
			n += below
		}
		if len(page) < readDirPage {
			return n, nil
		}
		after = page[len(page)-1].Name
	}
}

// writeUsage writes the listing as aligned columns under a header.
func writeUsage(out io.Writer, lines []spaceUsage, human bool) error {
	size := func(n int64) string {
		if human {
			return humanize.IBytes(uint64(max(n, 0)))
		}
		return strconv.FormatInt(n, 10)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SPACE\tNAME\tTYPE\tMEMBERS\tFILES\tBYTES\tTRASH\tVERSIONS\tQUOTA")
	for _, l := range lines {
		quota := "none"
		if l.Space.Quota != storage.NoQuota && l.Space.Quota > 0 {
			quota = size(l.Space.Quota)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n",
			l.Space.ID, l.Space.Name, l.Space.Type, members(l.Space), l.Files,
			size(l.Usage.Files), size(l.Usage.Trash), size(l.Usage.Versions), quota)
	}
	return w.Flush()
}

// members counts who has a role in the space: its members, and the owner
// of a personal space.
func members(sp storage.Space) int {
	n := len(sp.Members)
	if sp.Type == storage.SpacePersonal {
		if _, listed := sp.Members[sp.Owner]; !listed {
			n++
		}
	}
	return n
}
