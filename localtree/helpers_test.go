package localtree

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

var ctx = context.Background()

// base is a modification time with nanoseconds, which the embedded store
// keeps.
var base = time.Date(2019, 3, 4, 5, 6, 7, 123456789, time.UTC)

// openStore opens an embedded store in a fresh directory, with the
// default inline limit so that small files are kept inline and larger
// ones in content files.
func openStore(t testing.TB) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatalf("boltstore.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// personalSpace returns the personal space of einstein.
func personalSpace(t testing.TB, s storage.Store) storage.Space {
	t.Helper()
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	return sp
}

// localFile is a file of a local test tree: its content and modification
// time.
type localFile struct {
	content string
	mtime   time.Time
}

// writeTree creates the files of tree below dir (slash-separated paths;
// a path ending in "/" is an empty folder) with their modification times.
func writeTree(t testing.TB, dir string, tree map[string]localFile) {
	t.Helper()
	for p, f := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, time.Time{}, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// readLocalTree returns the regular files below dir by slash-separated
// path, and the folders with an empty content.
func readLocalTree(t testing.TB, dir string) map[string]localFile {
	t.Helper()
	tree := map[string]localFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel += "/"
			tree[rel] = localFile{mtime: info.ModTime()}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tree[rel] = localFile{content: string(b), mtime: info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", dir, err)
	}
	return tree
}

// spaceTree returns the nodes below the folder at dir in the space by
// slash-separated path, folders ending in "/".
func spaceTree(t testing.TB, s storage.Store, spaceID, dir string) map[string]storage.Node {
	t.Helper()
	root, err := lookupPath(ctx, s, spaceID, dir)
	if err != nil {
		t.Fatalf("lookup %s: %v", dir, err)
	}
	tree := map[string]storage.Node{}
	var walk func(id, rel string)
	walk = func(id, rel string) {
		children, err := s.ReadDir(ctx, spaceID, id, "", 1<<20)
		if err != nil {
			t.Fatalf("ReadDir %s: %v", rel, err)
		}
		for _, c := range children {
			p := path.Join(rel, c.Name)
			if c.IsFolder() {
				tree[p+"/"] = c
				walk(c.ID, p)
				continue
			}
			tree[p] = c
		}
	}
	walk(root.ID, "")
	return tree
}

// put commits content as the file at slash-separated path p of the space,
// creating its folders.
func put(t testing.TB, s storage.Store, spaceID, p, content string, mtime time.Time) storage.Node {
	t.Helper()
	dir, name := path.Split(p)
	parent, _, err := makeFolders(ctx, s, spaceID, dir)
	if err != nil {
		t.Fatalf("folders of %s: %v", p, err)
	}
	up, err := s.NewUpload(ctx, spaceID)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Discard()
	if _, err := io.WriteString(up, content); err != nil {
		t.Fatal(err)
	}
	c := storage.Commit{ParentID: parent.ID, Name: name, ModTime: mtime}
	if existing, err := s.Child(ctx, spaceID, parent.ID, name); err == nil {
		c = storage.Commit{NodeID: existing.ID, ModTime: mtime}
	}
	n, _, err := up.Commit(ctx, c)
	if err != nil {
		t.Fatalf("commit %s: %v", p, err)
	}
	return n
}

// readSpaceFile returns the content of the file at p.
func readSpaceFile(t testing.TB, s storage.Store, spaceID, p string) string {
	t.Helper()
	n, err := lookupPath(ctx, s, spaceID, p)
	if err != nil {
		t.Fatalf("lookup %s: %v", p, err)
	}
	_, c, err := s.Open(ctx, spaceID, n.ID)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer c.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// recorder collects what a transfer reports.
type recorder struct {
	skips []Skip
	last  Progress
	calls int
}

func (r *recorder) observer() Observer {
	return Observer{
		Progress: func(p Progress) { r.last = p; r.calls++ },
		Report:   func(s Skip) { r.skips = append(r.skips, s) },
	}
}

// reasons returns the reason of every skip by path.
func (r *recorder) reasons() map[string]Reason {
	m := map[string]Reason{}
	for _, s := range r.skips {
		m[s.Path] = s.Reason
	}
	return m
}
