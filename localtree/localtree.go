// Package localtree moves file trees between a local directory and a space
// of a store: Import brings an existing directory in (the migration path
// from another file server), Export writes a space's live tree out as plain
// files and folders (the way out, without this software). Both go through
// the store's public interface, the one the WebDAV handler uses, so they
// may run while the store serves: Import commits every file as a PUT does.
package localtree

import (
	"errors"
	"fmt"

	"github.com/dustin/go-humanize"
)

// Progress is how far an import or export has come.
type Progress struct {
	// Files and Bytes are done: written, found already there, or left out.
	Files, Bytes int64
	// TotalFiles and TotalBytes are what there is to do; 0 while unknown.
	TotalFiles, TotalBytes int64
}

// Reason says why a file or folder was left out.
type Reason string

// The reasons a transfer leaves something out and goes on.
const (
	// ReasonSpecial: a symbolic link, device, socket or named pipe; only
	// regular files and folders are imported.
	ReasonSpecial Reason = "not a regular file"
	// ReasonName: the store refuses the name (storage.ValidName).
	ReasonName Reason = "name refused"
	// ReasonQuota: the space's quota cannot hold the file.
	ReasonQuota Reason = "over quota"
	// ReasonLocked: a WebDAV lock someone holds covers the target.
	ReasonLocked Reason = "locked"
	// ReasonConflict: something else is in the way (a folder where a file
	// goes, or the reverse), or the target changed while it was written.
	ReasonConflict Reason = "conflict"
	// ReasonChanged: the local file changed while it was read.
	ReasonChanged Reason = "changed while read"
	// ReasonUnreadable: the local file or folder cannot be read.
	ReasonUnreadable Reason = "unreadable"
	// ReasonGone: the node was removed from the space while it was
	// exported.
	ReasonGone Reason = "removed meanwhile"
	// ReasonChecksum: the content read from the store is not the one its
	// node records (export); it is not written.
	ReasonChecksum Reason = "checksum mismatch"
)

// Skip is one file or folder a transfer left out, and why.
type Skip struct {
	// Path is slash-separated, relative to the root of the tree being
	// transferred.
	Path   string
	Reason Reason
	// Err is what was found, when there is more to say; may be nil.
	Err error
}

func (s Skip) String() string {
	if s.Err == nil {
		return fmt.Sprintf("skipped %s: %s", s.Path, s.Reason)
	}
	return fmt.Sprintf("skipped %s: %s: %v", s.Path, s.Reason, s.Err)
}

// Summary is what a transfer did.
type Summary struct {
	// Files and Bytes were written.
	Files, Bytes int64
	// Unchanged files were already there with the same size and SHA1
	// (import only), holding UnchangedBytes.
	Unchanged, UnchangedBytes int64
	// Folders were created.
	Folders int64
	// Skipped is how many files and folders were left out and reported.
	Skipped int64
}

// String says what the transfer did in one line; files found unchanged
// only when there were any.
func (s Summary) String() string {
	unchanged := ""
	if s.Unchanged > 0 {
		unchanged = fmt.Sprintf(", %d files (%s) unchanged", s.Unchanged, humanize.IBytes(uint64(s.UnchangedBytes)))
	}
	return fmt.Sprintf("%d files (%s) written, %d folders created%s, %d skipped",
		s.Files, humanize.IBytes(uint64(s.Bytes)), s.Folders, unchanged, s.Skipped)
}

// Observer is told of a transfer's progress and of what it leaves out.
// Either function may be nil. They are called one call at a time, though
// not always from the same goroutine, and must not block for long.
type Observer struct {
	// Progress is called after every file and now and then within a
	// large one.
	Progress func(Progress)
	// Report is called for every file or folder left out.
	Report func(Skip)
}

func (o Observer) progress(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

func (o Observer) report(s Skip) {
	if o.Report != nil {
		o.Report(s)
	}
}

// ErrDestNotEmpty: an export's destination holds something already and
// the export was not asked to overwrite it.
var ErrDestNotEmpty = errors.New("destination is not empty")

// progressStep is how many bytes of a file are read between two calls of
// Observer.Progress.
const progressStep = 4 << 20
