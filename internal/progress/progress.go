// Package progress reports how far a long administrator's command has
// come: a progress bar when the output is a terminal, and nothing but one
// summary line at the end otherwise, so that logs and cron mails stay
// readable.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Reporter shows the progress of one task. Its methods are safe for
// concurrent use; a nil *Reporter reports nothing.
type Reporter struct {
	out  io.Writer
	what string

	mu  sync.Mutex
	bar *progressbar.ProgressBar // nil when out is no terminal
}

// Options say how a Reporter counts.
type Options struct {
	// Bytes shows the counts as sizes (KiB, MiB) and a rate.
	Bytes bool
	// Terminal forces the bar on (true) or off (false); nil decides by
	// whether out is a terminal.
	Terminal *bool
}

// New returns a Reporter of the task what, writing to out. total is how
// many units the task has, or 0 when not known yet (SetTotal, Set).
func New(out io.Writer, what string, total int64, opts Options) *Reporter {
	r := &Reporter{out: out, what: what}
	if isTerminal(out, opts.Terminal) {
		r.bar = newBar(out, what, total, opts.Bytes)
	}
	return r
}

// IsTerminal reports whether out is a terminal, where a bar can redraw
// itself.
func IsTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func isTerminal(out io.Writer, forced *bool) bool {
	if forced != nil {
		return *forced
	}
	return IsTerminal(out)
}

func newBar(out io.Writer, what string, total int64, bytes bool) *progressbar.ProgressBar {
	if total <= 0 {
		total = -1 // a spinner until the total is known
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(bytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
}

// Add counts n more units done.
func (r *Reporter) Add(n int64) {
	if r == nil || r.bar == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.bar.Add64(n) // drawing errors are not the task's
}

// Set says how many units are done of how many (total 0: not known, kept
// as it was). Its signature is that of storage.CheckOptions.Progress.
func (r *Reporter) Set(done, total int64) {
	if r == nil || r.bar == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if total > 0 && total != r.bar.GetMax64() {
		r.bar.ChangeMax64(total)
	}
	_ = r.bar.Set64(done)
}

// SetTotal says how many units the task has, once it is known.
func (r *Reporter) SetTotal(total int64) {
	if r == nil || r.bar == nil || total <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bar.ChangeMax64(total)
}

// Finish ends the bar, if any, and writes the one summary line:
// "<what>: <summary>".
func (r *Reporter) Finish(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar != nil {
		_ = r.bar.Finish()
		_ = r.bar.Clear()
	}
	fmt.Fprintf(r.out, "%s: %s\n", r.what, fmt.Sprintf(format, args...))
}
