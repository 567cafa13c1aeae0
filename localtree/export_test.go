package localtree

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

func TestExportLiveTreeOnly(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	put(t, s, sp.ID, "kept/file", "first", base)
	put(t, s, sp.ID, "kept/file", "second", base.Add(time.Minute)) // the first is a version now
	gone := put(t, s, sp.ID, "kept/deleted", "in the trash", base)
	mustOK(t, s.Remove(ctx, sp.ID, gone.ID, storage.Conditions{}))
	if items, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(items) != 1 {
		t.Fatalf("trash holds %d items (%v), want the deleted file", len(items), err)
	}

	dest := t.TempDir()
	sum, err := Export(ctx, s, sp.ID, "", dest, ExportOptions{})
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	if sum.Files != 1 || sum.Bytes != int64(len("second")) || sum.Folders != 1 {
		t.Errorf("summary %+v, want the one live file", sum)
	}
	assertSameFiles(t, readLocalTree(t, dest), map[string]localFile{
		"kept/":     {},
		"kept/file": {content: "second", mtime: base.Add(time.Minute)},
	})
}

func TestExportDestination(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	put(t, s, sp.ID, "a/file", "new content", base)
	put(t, s, sp.ID, "a/b/c", "deep", base)

	tests := []struct {
		name    string
		src     string
		prepare func(t *testing.T, dest string) // nil: dest does not exist
		opts    ExportOptions
		wantErr error
		want    map[string]localFile
	}{
		{
			name: "missing: created",
			src:  "a",
			want: map[string]localFile{"file": {content: "new content", mtime: base}, "b/": {}, "b/c": {content: "deep", mtime: base}},
		},
		{
			name:    "empty folder",
			src:     "/a/b/",
			prepare: func(t *testing.T, dest string) { mustOK(t, os.Mkdir(dest, 0o755)) },
			want:    map[string]localFile{"c": {content: "deep", mtime: base}},
		},
		{
			name: "not empty: refused",
			src:  "a",
			prepare: func(t *testing.T, dest string) {
				writeTree(t, dest, map[string]localFile{"file": {content: "old", mtime: base}})
			},
			wantErr: ErrDestNotEmpty,
			want:    map[string]localFile{"file": {content: "old", mtime: base}},
		},
		{
			name: "not empty, overwrite: files replaced, others kept",
			src:  "a",
			prepare: func(t *testing.T, dest string) {
				writeTree(t, dest, map[string]localFile{"file": {content: "old", mtime: base}, "mine": {content: "mine", mtime: base}})
			},
			opts: ExportOptions{Overwrite: true},
			want: map[string]localFile{"file": {content: "new content", mtime: base}, "mine": {content: "mine", mtime: base},
				"b/": {}, "b/c": {content: "deep", mtime: base}},
		},
		{
			name: "overwrite replaces a link, never follows it",
			src:  "a",
			prepare: func(t *testing.T, dest string) {
				mustOK(t, os.Mkdir(dest, 0o755))
				mustOK(t, os.Symlink(filepath.Join(dest, "mine"), filepath.Join(dest, "file")))
				writeTree(t, dest, map[string]localFile{"mine": {content: "mine", mtime: base}})
			},
			opts: ExportOptions{Overwrite: true},
			want: map[string]localFile{"file": {content: "new content", mtime: base}, "mine": {content: "mine", mtime: base},
				"b/": {}, "b/c": {content: "deep", mtime: base}},
		},
		{
			name: "a file",
			src:  "a/b/c",
			want: map[string]localFile{"c": {content: "deep", mtime: base}},
		},
		{name: "no such node", src: "a/nope", wantErr: storage.ErrNotFound, want: map[string]localFile{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			if tt.prepare != nil {
				tt.prepare(t, dest)
			}
			_, err := Export(ctx, s, sp.ID, tt.src, dest, tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Export = %v, want %v", err, tt.wantErr)
			}
			got := map[string]localFile{}
			if _, err := os.Stat(dest); err == nil {
				got = readLocalTree(t, dest)
			}
			assertSameFiles(t, got, tt.want)
		})
	}
}

func TestExportReportsRemovedMeanwhile(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	put(t, s, sp.ID, "a", "a", base)
	doomed := put(t, s, sp.ID, "b", "b", base)
	put(t, s, sp.ID, "c", "c", base)
	var rec recorder
	obs := rec.observer()
	progress := obs.Progress
	obs.Progress = func(p Progress) {
		progress(p)
		if p.Files == 1 {
			// b is listed already, and goes before it is read.
			mustOK(t, s.Remove(ctx, sp.ID, doomed.ID, storage.Conditions{}))
		}
	}
	dest := t.TempDir()
	sum, err := Export(ctx, s, sp.ID, "", dest, ExportOptions{Observer: obs})
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	if sum.Files != 2 || sum.Skipped != 1 || len(rec.skips) != 1 || rec.skips[0].Path != "b" || rec.skips[0].Reason != ReasonGone {
		t.Errorf("summary %+v, skips %v: want b reported as removed", sum, rec.skips)
	}
}

// What an export creates is for the user who runs it alone, whatever the
// umask lets through: files 0600, folders 0700, the destination included.
// A destination that is there keeps its mode.
func TestExportIsPrivate(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	put(t, s, sp.ID, "a/file", "content", base)
	put(t, s, sp.ID, "a/b/c", "deep", base)
	put(t, s, sp.ID, "top", "top", base)

	for _, tt := range []struct {
		name     string
		existing bool
	}{{"created destination", false}, {"existing destination", true}} {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "export")
			if tt.existing {
				mustOK(t, os.Mkdir(dest, 0o755))
				mustOK(t, os.Chmod(dest, 0o755)) // whatever the umask
			}
			if _, err := Export(ctx, s, sp.ID, "", dest, ExportOptions{}); err != nil {
				t.Fatalf("Export: %v", err)
			}
			want := map[string]os.FileMode{"a": 0o700, "a/file": 0o600, "a/b": 0o700, "a/b/c": 0o600, "top": 0o600}
			if tt.existing {
				want["."] = 0o755
			} else {
				want["."] = 0o700
			}
			for rel, mode := range want {
				info, err := os.Stat(filepath.Join(dest, rel))
				if err != nil {
					t.Fatal(err)
				}
				if got := info.Mode().Perm(); got != mode {
					t.Errorf("%s: mode %#o, want %#o", rel, got, mode)
				}
			}
		})
	}
}
