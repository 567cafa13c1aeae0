package integration

import (
	"bytes"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testDesktopClients syncs a folder with the real ownCloud (owncloudcmd) and
// Nextcloud (nextcloudcmd) command-line clients, over HTTPS with Caddy's
// local CA and the Basic demo user einstein, through the steps a person
// takes: a tree goes up (big files included, which the clients upload in
// pieces), local changes, renames and deletions go up, a change made on the
// server comes down, and a second, empty folder gets the same tree. After
// every step the server holds exactly the local tree, and neither side has
// conflict files, chunk pieces, upload folders or temporary names; at the
// end, another pass over either folder finds nothing to do. It runs on
// every deployment.
func testDesktopClients(t *testing.T) {
	t.Parallel()
	onEachDesktopClient(t, desktopScenario)
}

// onEachDesktopClient runs scenario with each desktop client, on a fresh
// server of each deployment over HTTPS, all of them in parallel (each
// client and server keeps its state apart).
func onEachDesktopClient(t *testing.T, scenario func(*testing.T, *desktopSession)) {
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			for _, dc := range desktopClients {
				t.Run(dc.program, func(t *testing.T) {
					t.Parallel()
					binary := requirePeer(t, dc.program)
					s := d.start(t, serverOptions{tls: true})
					scenario(t, newDesktopSession(t, s, dc, binary))
				})
			}
		})
	}
}

// desktopScenario runs the steps of TestDesktopClients with one client.
func desktopScenario(t *testing.T, d *desktopSession) {
	tree := desktopTree()
	first := filepath.Join(t.TempDir(), "first")
	writeDesktopTree(t, first, tree)

	// 1. The whole tree goes up, the big files in pieces.
	d.syncAndCheck("upload", first, "blobs/blob-12MB.bin", "blob-50MB.bin")

	// 2. Local changes go up: a small file and a big one change (the big
	// one keeps its size, so only its modification time tells), a file and
	// a folder are renamed, a file and a folder are deleted.
	changeLocalFile(t, first, "level1/top.txt", []byte("changed on the desktop, and longer than before\n"))
	big := bytes.Clone(tree["blobs/blob-12MB.bin"])
	copy(big, "changed on the desktop")
	changeLocalFile(t, first, "blobs/blob-12MB.bin", big)
	renameLocal(t, first, "rename-me.txt", "renamed ✓.txt")
	renameLocal(t, first, "rename folder", "renamed folder")
	removeLocal(t, first, "delete-me.txt")
	removeLocal(t, first, "to delete")
	d.syncAndCheck("local changes", first, "blobs/blob-12MB.bin")

	// 3. A file three levels deep changes on the server, written with a
	// plain PUT as curl would, and comes down.
	const deep = "level1/level2/level3/deep.txt"
	serverText := []byte("changed on the server with a plain PUT\n")
	d.dav.expectOneOf("PUT", d.davPath(deep), serverText, http.StatusOK, http.StatusNoContent, http.StatusCreated)
	d.syncAndCheck("server change", first)
	if got, err := os.ReadFile(filepath.Join(first, filepath.FromSlash(deep))); err != nil || !bytes.Equal(got, serverText) {
		d.fail("server change: local %s is %q (%v), want the server's %q", deep, got, err, serverText)
		d.stopIfBroken("server change")
	}

	// 4. A second, empty folder gets the same tree, byte for byte.
	second := filepath.Join(t.TempDir(), "second")
	if err := os.Mkdir(second, 0o755); err != nil {
		t.Fatal(err)
	}
	d.syncAndCheck("second folder", second)
	for _, diff := range diffTrees(readLocalTree(t, first), readLocalTree(t, second), "first folder", "second folder") {
		d.fail("second folder: %s", diff)
	}
	d.stopIfBroken("second folder")

	// 5. Both folders have settled: one more pass finds nothing to do.
	d.syncExpectingNothing("settled first", first)
	d.syncExpectingNothing("settled second", second)
}

// desktopTree is the local tree the clients sync: slash-separated relative
// path to content; a path ending in "/" is an empty folder. The 12 MB and
// 50 MB files are larger than the clients' upload chunk size.
func desktopTree() map[string][]byte {
	rnd := rand.New(rand.NewSource(20261123))
	random := func(n int) []byte {
		b := make([]byte, n)
		rnd.Read(b)
		return b
	}
	return map[string][]byte{
		"Ünïcødé – ✓.txt":                []byte("unicode name\n"),
		"日本語/ファイル.txt":                   []byte("日本語のテキスト\n"),
		"with space/a b.txt":             []byte("a file in a folder with a space\n"),
		"level1/top.txt":                 []byte("one level deep\n"),
		"level1/level2/notes.md":         []byte("# two levels deep\n"),
		"level1/level2/level3/deep.txt":  []byte("three levels deep\n"),
		"level1/level2/level3/empty.txt": {},
		"empty folder/":                  nil,
		"rename-me.txt":                  []byte("renamed on the desktop\n"),
		"rename folder/inside.txt":       []byte("in a folder renamed on the desktop\n"),
		"delete-me.txt":                  []byte("deleted on the desktop\n"),
		"to delete/inside.txt":           []byte("in a folder deleted on the desktop\n"),
		"blobs/blob-12MB.bin":            random(12 << 20),
		"blob-50MB.bin":                  random(50 << 20),
	}
}

// desktopTreeTime is the modification time of every file of the first
// tree: far enough in the past that a change made by the test is seen by
// its modification time alone.
var desktopTreeTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func writeDesktopTree(t *testing.T, dir string, tree map[string][]byte) {
	t.Helper()
	for name, data := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if data == nil {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, desktopTreeTime, desktopTreeTime); err != nil {
			t.Fatal(err)
		}
	}
}

// changeLocalFile rewrites a file of the synced folder as an editor would,
// with the current time as its modification time.
func changeLocalFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		t.Fatal(err)
	}
}

func renameLocal(t *testing.T, dir, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(from)), filepath.Join(dir, filepath.FromSlash(to))); err != nil {
		t.Fatal(err)
	}
}

func removeLocal(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}
