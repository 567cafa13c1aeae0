package integration

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// treeEntry is a file or folder of a synced tree, compared by content.
type treeEntry struct {
	dir  bool
	size int
	sum  [sha256.Size]byte
}

// syncedTree is slash-separated relative path to entry.
type syncedTree map[string]treeEntry

// desktopJournal matches the clients' own files in a synced folder, which
// stay local by design.
var desktopJournal = []string{"._sync_*.db*", ".sync_*.db*", ".owncloudsync.log", ".nextcloudsync.log"}

func isDesktopJournal(name string) bool {
	for _, pattern := range desktopJournal {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// desktopLeftovers are parts of names that no converged sync leaves behind,
// on the server or on the desktop: conflict copies (ownCloud, Nextcloud),
// ownCloud v1 chunk pieces, the clients' temporary download and upload
// names, and their journals in the user's space.
var desktopLeftovers = []struct{ part, what string }{
	{"(conflicted copy", "conflict file"},
	{"_conflict-", "conflict file"},
	{"-chunking-", "v1 chunk piece"},
	{".~", "temporary name"},
	{".part", "temporary name"},
	{".sync_", "client journal"},
}

// leftovers lists the entries of tree that are clients' journals or whose
// names hold a desktopLeftovers part.
func leftovers(tree syncedTree) []string {
	var found []string
	for name := range tree {
		if isDesktopJournal(path.Base(name)) {
			found = append(found, fmt.Sprintf("client journal %q", name))
			continue
		}
		for _, l := range desktopLeftovers {
			if strings.Contains(path.Base(name), l.part) {
				found = append(found, fmt.Sprintf("%s %q", l.what, name))
			}
		}
	}
	sort.Strings(found)
	return found
}

// readLocalTree reads a synced folder, leaving out the clients' journals.
func readLocalTree(t *testing.T, root string) syncedTree {
	t.Helper()
	tree := syncedTree{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case isDesktopJournal(e.Name()):
			return nil
		case e.IsDir():
			tree[name] = treeEntry{dir: true}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tree[name] = treeEntry{size: len(data), sum: sha256.Sum256(data)}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the synced folder %s: %v", root, err)
	}
	return tree
}

// readServerTree reads the whole personal space of the session's user,
// folder by folder (PROPFIND Depth 1 works whether or not the server allows
// Depth infinity), with every file's content.
func (d *desktopSession) readServerTree() syncedTree {
	d.t.Helper()
	const base = "/remote.php/webdav/"
	tree := syncedTree{}
	folders := []string{""}
	for len(folders) > 0 {
		folder := folders[0]
		folders = folders[1:]
		for _, r := range d.dav.propfind(escapePath(path.Join(base, folder)+"/"), "1", propfindTypeBody) {
			name := d.hrefName(r.href, base)
			if name == folder {
				continue
			}
			if _, seen := tree[name]; seen {
				d.t.Fatalf("PROPFIND %s%s lists %q twice", base, folder, name)
			}
			if strings.Contains(r.props["DAV: resourcetype"], "collection") {
				tree[name] = treeEntry{dir: true}
				folders = append(folders, name)
				continue
			}
			resp, data := d.dav.send(http.MethodGet, escapePath(base+name), nil, nil)
			if resp.StatusCode != http.StatusOK {
				d.t.Fatalf("GET %s%s: %d", base, name, resp.StatusCode)
			}
			tree[name] = treeEntry{size: len(data), sum: sha256.Sum256(data)}
		}
	}
	return tree
}

const propfindTypeBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>`

// hrefName is the path of an href below base, without a trailing slash
// ("" for base itself).
func (d *desktopSession) hrefName(href, base string) string {
	d.t.Helper()
	p, err := url.PathUnescape(href)
	if err != nil {
		d.t.Fatalf("href %q: %v", href, err)
	}
	name, ok := strings.CutPrefix(p, base)
	if !ok && p+"/" != base {
		d.t.Fatalf("href %q is not below %s", href, base)
	}
	return strings.TrimSuffix(name, "/")
}

func escapePath(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}

// subtree is the part of tree below folder ("" for all of it), with
// names relative to folder.
func subtree(tree syncedTree, folder string) syncedTree {
	if folder == "" {
		return tree
	}
	sub := syncedTree{}
	for name, e := range tree {
		if rest, ok := strings.CutPrefix(name, folder+"/"); ok {
			sub[rest] = e
		}
	}
	return sub
}

// diffTrees describes how b differs from a, the first 20 differences.
func diffTrees(a, b syncedTree, aName, bName string) []string {
	var diffs []string
	for name, ea := range a {
		eb, ok := b[name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%q is only in the %s", name, aName))
		case ea.dir != eb.dir:
			diffs = append(diffs, fmt.Sprintf("%q is a folder in only one of the %s and the %s", name, aName, bName))
		case ea != eb:
			diffs = append(diffs, fmt.Sprintf("%q differs: %d bytes in the %s, %d in the %s", name, ea.size, aName, eb.size, bName))
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q is only in the %s", name, bName))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 20 {
		diffs = append(diffs[:20], fmt.Sprintf("and %d more differences", len(diffs)-20))
	}
	return diffs
}

// checkConverged checks that after a sync pass of local the server holds
// exactly the local tree in the synced folder and nothing besides it, that
// neither side holds leftovers, and that no upload folder is left.
func (d *desktopSession) checkConverged(step, local string) {
	d.t.Helper()
	space := d.readServerTree()
	if d.client.folder != "" {
		for name := range space {
			if name != d.client.folder && !strings.HasPrefix(name, d.client.folder+"/") {
				d.fail("%s: %q is in the space outside the synced folder %q", step, name, d.client.folder)
			}
		}
	}
	localTree := readLocalTree(d.t, local)
	for _, diff := range diffTrees(localTree, subtree(space, d.client.folder), "local folder", "server") {
		d.fail("%s: %s", step, diff)
	}
	for _, l := range leftovers(space) {
		d.fail("%s: %s in the user's space", step, l)
	}
	for _, l := range leftovers(localTree) {
		d.fail("%s: %s in the local folder", step, l)
	}
	d.checkNoUploadFolders(step)
}

// checkNoUploadFolders checks that no chunked upload of the user is left
// once a sync has finished: the clients assemble or abandon every one
// they start.
func (d *desktopSession) checkNoUploadFolders(step string) {
	d.t.Helper()
	home := "/remote.php/dav/uploads/" + desktopUser + "/"
	resp, body := d.dav.send("PROPFIND", home, map[string]string{"Depth": "1"}, []byte(propfindTypeBody))
	if resp.StatusCode != http.StatusMultiStatus {
		return // nothing there that can be listed
	}
	responses, err := parseMultistatus(body)
	if err != nil {
		d.fail("%s: PROPFIND %s: %v", step, home, err)
		return
	}
	for _, r := range responses {
		if name := d.hrefName(r.href, home); name != "" {
			d.fail("%s: upload folder %q left in %s", step, name, home)
		}
	}
}

// TestDesktopNames pins which names the desktop client test takes for the
// clients' journals (left out locally) and for leftovers (failures).
func TestDesktopNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		journal  bool
		leftover string
	}{
		{"._sync_1a2b3c.db", true, "client journal"},
		{".sync_7a17c19e5b59.db-wal", true, "client journal"},
		{".sync_journal.db", true, "client journal"},
		{".owncloudsync.log", true, "client journal"},
		{".sync_conflict.tmp", false, "client journal"},
		{"blob-12MB.bin-chunking-2053171614-2-0", false, "v1 chunk piece"},
		{".blob-50MB.bin.~5f3a", false, "temporary name"},
		{"notes.txt.part", false, "temporary name"},
		{"notes (conflicted copy 2026-11-23 071000).txt", false, "conflict file"},
		{"notes_conflict-20261123-071000.txt", false, "conflict file"},
		{"Ünïcødé – ✓.txt", false, ""},
		{"blob-12MB.bin", false, ""},
	} {
		if got := isDesktopJournal(tc.name); got != tc.journal {
			t.Errorf("isDesktopJournal(%q) = %v, want %v", tc.name, got, tc.journal)
		}
		found := leftovers(syncedTree{"folder/" + tc.name: {}})
		switch {
		case tc.leftover == "" && len(found) != 0:
			t.Errorf("%q is taken for a leftover: %v", tc.name, found)
		case tc.leftover != "" && (len(found) != 1 || !strings.HasPrefix(found[0], tc.leftover)):
			t.Errorf("%q: leftovers %v, want one %s", tc.name, found, tc.leftover)
		}
	}
}
