package localtree

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// sampleTree has files kept inline and in content files, an empty file,
// an empty folder, nested folders and names that need no escaping in a
// store but might in a URL.
func sampleTree() map[string]localFile {
	return map[string]localFile{
		"README":                     {content: "read me\n", mtime: base},
		"empty":                      {content: "", mtime: base.Add(time.Hour)},
		"docs/big.bin":               {content: strings.Repeat("0123456789abcdef", 40<<10), mtime: base.Add(2 * time.Hour)},
		"docs/naïve café #1 %20.txt": {content: "unicode", mtime: base.Add(3 * time.Hour)},
		"docs/deep/er/leaf":          {content: "leaf", mtime: base.Add(-time.Hour)},
		"nothing here/":              {},
	}
}

func TestImportThenExportRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		destPath string
		// folders created for destPath and the tree
		wantFolders int64
	}{
		{name: "into the root", destPath: "", wantFolders: 4},
		{name: "into new folders", destPath: "/migrated/from nginx/", wantFolders: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			sp := personalSpace(t, s)
			src := t.TempDir()
			tree := sampleTree()
			writeTree(t, src, tree)

			var rec recorder
			sum, err := Import(ctx, s, sp.ID, src, tt.destPath, ImportOptions{Observer: rec.observer()})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			want := Summary{Files: 5, Bytes: int64(len("read me\n") + 16*40<<10 + len("unicode") + len("leaf")), Folders: tt.wantFolders}
			if sum != want {
				t.Errorf("summary %+v, want %+v", sum, want)
			}
			if len(rec.skips) != 0 {
				t.Errorf("skipped %v", rec.skips)
			}
			if rec.last.Files != 5 || rec.last.TotalFiles != 5 || rec.last.Bytes != want.Bytes || rec.last.TotalBytes != want.Bytes {
				t.Errorf("last progress %+v, want all %d files and %d bytes done", rec.last, 5, want.Bytes)
			}

			nodes := spaceTree(t, s, sp.ID, tt.destPath)
			for p, f := range tree {
				n, ok := nodes[p]
				switch {
				case !ok:
					t.Errorf("%s not imported", p)
				case strings.HasSuffix(p, "/"):
				case n.Size != int64(len(f.content)) || n.Checksums.SHA1 != sha1Hex(f.content):
					t.Errorf("%s: %d bytes with SHA1 %s, want %d bytes with %s", p, n.Size, n.Checksums.SHA1, len(f.content), sha1Hex(f.content))
				case !n.ModTime.Equal(f.mtime):
					t.Errorf("%s: mtime %v, want %v", p, n.ModTime, f.mtime)
				}
			}

			dest := filepath.Join(t.TempDir(), "export")
			var exRec recorder
			exSum, err := Export(ctx, s, sp.ID, tt.destPath, dest, ExportOptions{Observer: exRec.observer()})
			if err != nil {
				t.Fatalf("Export: %v", err)
			}
			if exSum.Files != 5 || exSum.Bytes != want.Bytes || exSum.Folders != 4 || exSum.Skipped != 0 {
				t.Errorf("export summary %+v", exSum)
			}
			if exRec.last.Files != 5 || exRec.last.Bytes != want.Bytes || exRec.last.TotalBytes != want.Bytes {
				t.Errorf("last export progress %+v", exRec.last)
			}
			assertSameFiles(t, readLocalTree(t, dest), tree)
			assertFolderTimes(t, dest, nodes)
		})
	}
}

// assertSameFiles checks that got has the files and folders of want, with
// their contents and (files only) modification times.
func assertSameFiles(t *testing.T, got, want map[string]localFile) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s missing", p)
		case g.content != w.content:
			t.Errorf("%s: %d bytes differ from the %d expected", p, len(g.content), len(w.content))
		case !strings.HasSuffix(p, "/") && !g.mtime.Equal(w.mtime):
			t.Errorf("%s: mtime %v, want %v", p, g.mtime, w.mtime)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok && !strings.HasSuffix(p, "/") {
			t.Errorf("%s should not be there", p)
		}
	}
}

// assertFolderTimes checks that every exported folder has the
// modification time of its folder in the space.
func assertFolderTimes(t *testing.T, dest string, nodes map[string]storage.Node) {
	t.Helper()
	for p, n := range nodes {
		if !n.IsFolder() {
			continue
		}
		info, err := os.Stat(filepath.Join(dest, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !info.ModTime().Equal(n.ModTime) {
			t.Errorf("folder %s: mtime %v, want the space's %v", p, info.ModTime(), n.ModTime)
		}
	}
}

func TestImportRerun(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	src := t.TempDir()
	writeTree(t, src, sampleTree())
	if _, err := Import(ctx, s, sp.ID, src, "in", ImportOptions{}); err != nil {
		t.Fatalf("first Import: %v", err)
	}
	before := spaceTree(t, s, sp.ID, "in")

	tests := []struct {
		name   string
		change map[string]localFile
		want   Summary
	}{
		{name: "nothing changed", want: Summary{Unchanged: 5, UnchangedBytes: 655379}},
		{
			name: "same size, other content; another size; a new file",
			change: map[string]localFile{
				"README":   {content: "READ ME\n", mtime: base.Add(time.Minute)},
				"empty":    {content: "no longer", mtime: base},
				"new/file": {content: "new", mtime: base},
			},
			want: Summary{Files: 3, Bytes: 8 + 9 + 3, Folders: 1, Unchanged: 3, UnchangedBytes: 655379 - 8},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := tt.change
			writeTree(t, src, changed)
			sum, err := Import(ctx, s, sp.ID, src, "in", ImportOptions{})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if sum != tt.want {
				t.Errorf("summary %+v, want %+v", sum, tt.want)
			}
			after := spaceTree(t, s, sp.ID, "in")
			for p, n := range before {
				if _, ok := tt.change[p]; ok || n.IsFolder() {
					continue
				}
				if after[p].ETag != n.ETag {
					t.Errorf("%s was written again", p)
				}
			}
			for p, f := range changed {
				if got := readSpaceFile(t, s, sp.ID, "in/"+p); got != f.content {
					t.Errorf("%s = %q, want %q", p, got, f.content)
				}
				if !after[p].ModTime.Equal(f.mtime) {
					t.Errorf("%s: mtime %v, want %v", p, after[p].ModTime, f.mtime)
				}
			}
		})
	}
}

func TestImportLeavesOut(t *testing.T) {
	tests := []struct {
		name string
		// prepare makes the local tree below src and the space as the
		// case needs.
		prepare func(t *testing.T, s storage.Backend, sp storage.Space, src string)
		want    map[string]Reason
		// imported are files that must be in the space afterwards.
		imported []string
	}{
		{
			name: "symbolic link, named pipe and socket",
			prepare: func(t *testing.T, s storage.Backend, sp storage.Space, src string) {
				writeTree(t, src, map[string]localFile{"a/file": {content: "x", mtime: base}})
				mustOK(t, os.Symlink("file", filepath.Join(src, "a", "link")))
				mustOK(t, os.Symlink("a", filepath.Join(src, "dirlink")))
				mustOK(t, syscall.Mkfifo(filepath.Join(src, "a", "fifo"), 0o644))
			},
			want:     map[string]Reason{"a/link": ReasonSpecial, "dirlink": ReasonSpecial, "a/fifo": ReasonSpecial},
			imported: []string{"a/file"},
		},
		{
			name: "a folder where a file goes, a file where a folder goes",
			prepare: func(t *testing.T, s storage.Backend, sp storage.Space, src string) {
				writeTree(t, src, map[string]localFile{"x": {content: "x", mtime: base}, "y/inside": {content: "y", mtime: base}, "z": {content: "z", mtime: base}})
				_, _, err := makeFolders(ctx, s, sp.ID, "x")
				mustOK(t, err)
				put(t, s, sp.ID, "y", "a file", base)
			},
			want:     map[string]Reason{"x": ReasonConflict, "y": ReasonConflict},
			imported: []string{"z"},
		},
		{
			name: "over quota",
			prepare: func(t *testing.T, s storage.Backend, sp storage.Space, src string) {
				writeTree(t, src, map[string]localFile{"big": {content: strings.Repeat("b", 200), mtime: base}, "small": {content: "s", mtime: base}})
			},
			want:     map[string]Reason{"big": ReasonQuota},
			imported: []string{"small"},
		},
		{
			name: "locked",
			prepare: func(t *testing.T, s storage.Backend, sp storage.Space, src string) {
				writeTree(t, src, map[string]localFile{"locked": {content: "new", mtime: base}, "free": {content: "f", mtime: base}})
				n := put(t, s, sp.ID, "locked", "old", base)
				_, err := s.CreateLock(ctx, storage.Lock{SpaceID: sp.ID, NodeID: n.ID, Root: "/locked", Scope: storage.LockExclusive, User: "einstein"}, storage.LockLimits{})
				mustOK(t, err)
			},
			want:     map[string]Reason{"locked": ReasonLocked},
			imported: []string{"free"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			sp, err := s.PutSpace(ctx, storage.Space{ID: "project", Type: storage.SpaceProject, Name: "Project", Quota: 100,
				Members: map[string]storage.Role{"einstein": storage.RoleEditor}})
			mustOK(t, err)
			src := t.TempDir()
			tt.prepare(t, s, sp, src)
			var rec recorder
			sum, err := Import(ctx, s, sp.ID, src, "", ImportOptions{Observer: rec.observer()})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if got := rec.reasons(); !maps.Equal(got, tt.want) {
				t.Errorf("left out %v, want %v", rec.skips, tt.want)
			}
			if sum.Skipped != int64(len(tt.want)) {
				t.Errorf("summary says %d skipped, want %d", sum.Skipped, len(tt.want))
			}
			nodes := spaceTree(t, s, sp.ID, "")
			for _, p := range tt.imported {
				if _, ok := nodes[p]; !ok {
					t.Errorf("%s not imported", p)
				}
			}
			if rec.last.Files != rec.last.TotalFiles || rec.last.Bytes != rec.last.TotalBytes {
				t.Errorf("last progress %+v: not all done", rec.last)
			}
		})
	}
}

func TestImportUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	s := openStore(t)
	sp := personalSpace(t, s)
	src := t.TempDir()
	writeTree(t, src, map[string]localFile{"secret/x": {content: "x", mtime: base}, "closed": {content: "c", mtime: base}, "open": {content: "o", mtime: base}})
	mustOK(t, os.Chmod(filepath.Join(src, "closed"), 0))
	mustOK(t, os.Chmod(filepath.Join(src, "secret"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "secret"), 0o755) })
	var rec recorder
	if _, err := Import(ctx, s, sp.ID, src, "", ImportOptions{Observer: rec.observer()}); err != nil {
		t.Fatalf("Import: %v", err)
	}
	want := map[string]Reason{"closed": ReasonUnreadable, "secret": ReasonUnreadable}
	if got := rec.reasons(); !maps.Equal(got, want) {
		t.Errorf("left out %v, want %v", rec.skips, want)
	}
}

func TestImportRefusesBadArguments(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	file := filepath.Join(t.TempDir(), "file")
	mustOK(t, os.WriteFile(file, []byte("x"), 0o644))
	put(t, s, sp.ID, "taken", "a file", base)
	tests := []struct {
		name             string
		space, src, dest string
		want             error
	}{
		{name: "source missing", space: sp.ID, src: filepath.Join(t.TempDir(), "missing"), want: os.ErrNotExist},
		{name: "source is a file", space: sp.ID, src: file, want: storage.ErrInvalid},
		{name: "no such space", space: "nope", src: t.TempDir(), want: storage.ErrNotFound},
		{name: "destination is a file", space: sp.ID, src: t.TempDir(), dest: "taken/below", want: storage.ErrConflict},
		{name: "destination climbs out", space: sp.ID, src: t.TempDir(), dest: "a/../..", want: storage.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(ctx, s, tt.space, tt.src, tt.dest, ImportOptions{})
			if !errors.Is(err, tt.want) {
				t.Errorf("Import = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestImportStopsWithContext(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	src := t.TempDir()
	writeTree(t, src, sampleTree())
	cctx, cancel := context.WithCancel(ctx)
	obs := Observer{Progress: func(p Progress) {
		if p.Files == 2 {
			cancel()
		}
	}}
	sum, err := Import(cctx, s, sp.ID, src, "", ImportOptions{Workers: 1, Observer: obs})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import = %v, want context.Canceled", err)
	}
	if sum.Files != 2 {
		t.Errorf("summary %+v, want the 2 files imported before the end", sum)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportManyFilesAtOnce(t *testing.T) {
	s := openStore(t)
	sp := personalSpace(t, s)
	src := t.TempDir()
	tree := map[string]localFile{}
	for i := range 300 {
		p := fmt.Sprintf("d%02d/f%03d", i%15, i)
		tree[p] = localFile{content: strings.Repeat("x", i*97), mtime: base.Add(time.Duration(i) * time.Second)}
	}
	writeTree(t, src, tree)
	var rec recorder
	sum, err := Import(ctx, s, sp.ID, src, "", ImportOptions{Workers: 32, Observer: rec.observer()})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if sum.Files != 300 || sum.Folders != 15 || rec.last.Files != 300 || rec.last.Bytes != rec.last.TotalBytes {
		t.Errorf("summary %+v, last progress %+v", sum, rec.last)
	}
	nodes := spaceTree(t, s, sp.ID, "")
	for p, f := range tree {
		if n := nodes[p]; n.Checksums.SHA1 != sha1Hex(f.content) || !n.ModTime.Equal(f.mtime) {
			t.Errorf("%s: %+v", p, n)
		}
	}
}
