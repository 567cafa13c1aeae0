package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// testRclone drives rclone's webdav backend (vendor owncloud) against the
// server: upload of a tree with nested folders, unicode and odd names, empty
// and multi-MB files; hash-verified checks; listings with sizes, hashes and
// modification times; server-side copies and moves; download; delete and
// purge. It runs once per WebDAV base path that rclone may be configured with,
// then on the project space Physics with each member role, and checks that
// strangers and wrong passwords are refused; all of it on every deployment.
func testRclone(t *testing.T) {
	t.Parallel()
	rclone := requirePeer(t, "rclone")
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) { rcloneSessions(t, rclone, d) })
	}
}

func rcloneSessions(t *testing.T, rclone string, d deployment) {
	for _, base := range []struct {
		name string
		path func(spaceID string) string
	}{
		// The spec's default base: the space addressed by its resource id.
		{"spaces", func(id string) string { return "/remote.php/dav/spaces/" + id + "/" }},
		// The legacy base of ownCloud 10 clients.
		{"webdav", func(string) string { return "/remote.php/webdav/" }},
		// The new-style files endpoint.
		{"files", func(string) string { return "/remote.php/dav/files/einstein/" }},
	} {
		t.Run(base.name, func(t *testing.T) {
			s := d.start(t, serverOptions{})
			spaceID := personalSpaceRef(t, s, "einstein")
			r := newRcloneRunner(t, rclone, s.URL+base.path(spaceID), "einstein")
			rcloneScenario(t, s, r)
		})
	}
	t.Run("project", func(t *testing.T) { rcloneProject(t, rclone, d.start(t, serverOptions{})) })
	t.Run("access", func(t *testing.T) { rcloneAccess(t, rclone, d.start(t, serverOptions{})) })
}

// rcloneProject uses the project space Physics of Caddyfile.example through
// its spaces URL with each member role: marie (editor) uploads, richard
// (viewer) can read but not change anything, einstein (manager) purges.
func rcloneProject(t *testing.T, rclone string, s *server) {
	spaceID := projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics")
	davURL := s.URL + "/remote.php/dav/spaces/" + spaceID + "/"
	resp := sendAs(t, s, "richard", "PROPFIND", "/dav/spaces/"+spaceID+"/", map[string]string{"Depth": "0"},
		[]byte(`<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/></d:prop></d:propfind>`))
	if resp.code != http.StatusMultiStatus || !bytes.Contains(resp.body, []byte("<d:displayname>Physics</d:displayname>")) {
		t.Fatalf("project space Physics is not at %s (has the id derivation changed?): %d\n%s", davURL, resp.code, resp.body)
	}
	editor := newRcloneRunner(t, rclone, davURL, "marie")
	viewer := newRcloneRunner(t, rclone, davURL, "richard")
	manager := newRcloneRunner(t, rclone, davURL, "einstein")

	tree := rcloneTree()
	local := filepath.Join(t.TempDir(), "local")
	rcloneWriteTree(t, local, tree)
	out := editor.mustRun(t, "copy", local, "dav:shared")
	if got := strings.Count(out, ": Copied (new)"); got != len(tree) {
		t.Errorf("rclone copy (editor) reported %d new files, want %d:\n%s", got, len(tree), out)
	}
	// Every member sees the same content.
	for _, r := range []*rcloneRunner{editor, viewer, manager} {
		out := r.mustRun(t, "check", local, "dav:shared", "--checksum")
		rcloneAssertCheck(t, out, len(tree))
	}
	rcloneCompareListing(t, viewer, "dav:shared", tree)

	// The viewer can download ...
	down := filepath.Join(t.TempDir(), "down")
	viewer.mustRun(t, "copy", "dav:shared", down)
	for name, f := range tree {
		got, err := os.ReadFile(filepath.Join(down, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, f.data) {
			t.Errorf("viewer download of %q: %v, %d bytes, want %d", name, err, len(got), len(f.data))
		}
	}
	// ... but not upload, rename, delete or purge.
	extra := filepath.Join(t.TempDir(), "viewer.txt")
	if err := os.WriteFile(extra, []byte("viewer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"copyto", extra, "dav:shared/viewer.txt"},
		{"moveto", "dav:shared/level1/three-mib.bin", "dav:shared/level1/renamed.bin"},
		{"delete", "dav:shared/with space"},
		{"purge", "dav:shared"},
		{"mkdir", "dav:shared/viewer-dir"},
	} {
		out, _ := viewer.run(t, append(args, rcloneFlags...)...)
		// rclone exits 0 from some failed commands (copyto): look at
		// the output.
		if !strings.Contains(out, "403 Forbidden") {
			t.Errorf("viewer: rclone %s was not refused with 403:\n%s", strings.Join(args, " "), out)
		}
	}
	rcloneCompareListing(t, editor, "dav:shared", tree)

	manager.mustRun(t, "purge", "dav:shared")
	if top := rcloneLsjson(t, editor, "dav:"); len(top) != 0 {
		t.Errorf("the project space still lists %v after the manager's purge", top)
	}
}

// rcloneAccess checks that rclone cannot reach a space with a wrong password
// or as a user who is not a member.
func rcloneAccess(t *testing.T, rclone string, s *server) {
	davURL := s.URL + "/remote.php/dav/spaces/" + personalSpaceRef(t, s, "einstein") + "/"
	owner := newRcloneRunner(t, rclone, davURL, "einstein")
	owner.mustRun(t, "mkdir", "dav:private")

	stranger := newRcloneRunner(t, rclone, davURL, "marie")
	out, err := stranger.run(t, "lsjson", "dav:")
	if err == nil || !strings.Contains(out, "directory not found") {
		t.Errorf("marie listed einstein's personal space (err %v):\n%s", err, out)
	}
	out, _ = stranger.run(t, append([]string{"mkdir", "dav:intruder"}, rcloneFlags...)...)
	if !strings.Contains(out, "404 Not Found") {
		t.Errorf("marie's mkdir in einstein's personal space was not refused with 404:\n%s", out)
	}

	wrong := newRcloneRunner(t, rclone, davURL, "einstein")
	for i, kv := range wrong.env {
		if strings.HasPrefix(kv, "RCLONE_CONFIG_DAV_PASS=") {
			obscured, err := wrong.run(t, "obscure", "not-the-password")
			if err != nil {
				t.Fatal(err)
			}
			wrong.env[i] = "RCLONE_CONFIG_DAV_PASS=" + strings.TrimSpace(obscured)
		}
	}
	out, err = wrong.run(t, "lsjson", "dav:")
	if err == nil || !strings.Contains(out, "401 Unauthorized") {
		t.Errorf("a wrong password was not refused with 401 (err %v):\n%s", err, out)
	}

	top := rcloneLsjson(t, owner, "dav:")
	if len(top) != 1 || !top["private"].IsDir {
		t.Errorf("einstein's personal space lists %v, want only private/", top)
	}
}

// rcloneFile is one file of the test tree.
type rcloneFile struct {
	data  []byte
	mtime time.Time
}

// rcloneTree is the local test tree: slash-separated relative path to file.
// Folders are implied by the paths.
func rcloneTree() map[string]rcloneFile {
	rnd := rand.New(rand.NewSource(20240601))
	random := func(n int) []byte {
		b := make([]byte, n)
		rnd.Read(b)
		return b
	}
	files := map[string][]byte{
		"Ünïcødé – ✓.txt":                  []byte("unicode name\n"),
		"日本語/ファイル.txt":                     []byte("日本語のテキスト\n"),
		"with space/a b.txt":               []byte("a file in a folder with a space\n"),
		"odd +&=;,@'()[]{} #%~.txt":        []byte("odd characters\n"),
		"level1/level2/level3/deep.txt":    []byte("three levels deep\n"),
		"level1/level2/level3/empty.txt":   {},
		"level1/level2/nine-mib.bin":       random(9 << 20),
		"level1/three-mib.bin":             random(3 << 20),
		"level1/level2/level3/small.bin":   random(4097),
		"level1/level2/sibling/other file": []byte("sibling\n"),
	}
	// Distinct, past modification times with a sub-second part, so that
	// preservation is tested rather than coincidentally satisfied.
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	tree := map[string]rcloneFile{}
	base := time.Date(2021, 3, 4, 5, 6, 7, 500_000_000, time.UTC)
	for i, name := range names {
		tree[name] = rcloneFile{data: files[name], mtime: base.Add(time.Duration(i) * 97 * time.Minute)}
	}
	return tree
}

// rcloneWriteTree writes tree under dir with its modification times.
func rcloneWriteTree(t *testing.T, dir string, tree map[string]rcloneFile) {
	t.Helper()
	for name, f := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// rcloneDirs are the folders implied by the paths of tree.
func rcloneDirs(tree map[string]rcloneFile) map[string]bool {
	dirs := map[string]bool{}
	for name := range tree {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

func rcloneScenario(t *testing.T, s *server, r *rcloneRunner) {
	tree := rcloneTree()
	local := filepath.Join(t.TempDir(), "local")
	rcloneWriteTree(t, local, tree)

	// 1. Upload.
	out := r.mustRun(t, "copy", local, "dav:tree")
	if got := strings.Count(out, ": Copied (new)"); got != len(tree) {
		t.Errorf("rclone copy reported %d new files, want %d:\n%s", got, len(tree), out)
	}
	// The copy preserved modification times: a second copy has nothing to
	// transfer (rclone compares size and modification time).
	out = r.mustRun(t, "copy", local, "dav:tree")
	if !strings.Contains(out, "There was nothing to transfer") || strings.Contains(out, "Copied") {
		t.Errorf("a second rclone copy transferred files again:\n%s", out)
	}

	// 2. Check with hashes.
	rcloneMustCheck(t, r, local, len(tree))
	for _, hash := range []string{"sha1", "md5"} {
		out := r.mustRun(t, "hashsum", hash, "dav:tree")
		got := rcloneParseHashsum(t, out)
		for name, f := range tree {
			if want := rcloneHash(hash, f.data); got[name] != want {
				t.Errorf("rclone hashsum %s: %q = %q, want %q", hash, name, got[name], want)
			}
		}
		if len(got) != len(tree) {
			t.Errorf("rclone hashsum %s listed %d files, want %d:\n%s", hash, len(got), len(tree), out)
		}
	}

	// 3. Listing: names, sizes, hashes and modification times.
	rcloneCompareListing(t, r, "dav:tree", tree)

	// The same bytes are visible over the plain personal-space URL.
	for _, name := range []string{"level1/level2/nine-mib.bin", "odd +&=;,@'()[]{} #%~.txt", "日本語/ファイル.txt"} {
		if got := mustGet(t, s, "/webdav/tree/"+name); !bytes.Equal(got, tree[name].data) {
			t.Errorf("GET /webdav/tree/%s: %d bytes differ from the %d uploaded", name, len(got), len(tree[name].data))
		}
	}

	// A file changed behind rclone's back with the same size is found by
	// the hash comparison, and copy --checksum repairs it.
	tampered := "with space/a b.txt"
	rclonePut(t, s, "/webdav/tree/"+tampered, bytes.ToUpper(tree[tampered].data))
	out, err := r.run(t, "check", local, "dav:tree", "--checksum")
	if err == nil || !strings.Contains(out, "1 differences found") || !strings.Contains(out, tampered) {
		t.Errorf("rclone check did not find the tampered file %q (err %v):\n%s", tampered, err, out)
	}
	out = r.mustRun(t, "copy", "--checksum", local, "dav:tree")
	if got := strings.Count(out, "Copied"); got != 1 || !strings.Contains(out, tampered+": Copied (replaced existing)") {
		t.Errorf("rclone copy --checksum should replace only %q:\n%s", tampered, out)
	}
	rcloneMustCheck(t, r, local, len(tree))

	// Server-side copies (COPY) of a file and of a folder's files keep
	// content, hashes and modification times.
	out = r.mustRun(t, "copyto", "dav:tree/level1/level2/level3/small.bin", "dav:tree/with space/small copy.bin")
	if !strings.Contains(out, "Copied (server-side copy)") {
		t.Errorf("rclone copyto did not copy server-side:\n%s", out)
	}
	tree["with space/small copy.bin"] = tree["level1/level2/level3/small.bin"]
	out = r.mustRun(t, "copy", "dav:tree/level1/level2/level3", "dav:tree/copy of level3")
	n := 0
	for name, f := range rcloneTreeCopy(tree) {
		if rest, ok := strings.CutPrefix(name, "level1/level2/level3/"); ok {
			tree["copy of level3/"+rest] = f
			n++
		}
	}
	if got := strings.Count(out, "Copied (server-side copy)"); got != n {
		t.Errorf("rclone copy of a folder made %d server-side copies, want %d:\n%s", got, n, out)
	}
	rcloneCompareListing(t, r, "dav:tree", tree)

	// 4. Server-side renames and moves.
	// A rename onto an existing file replaces it.
	out = r.mustRun(t, "moveto", "dav:tree/copy of level3/deep.txt", "dav:tree/copy of level3/small.bin")
	if !strings.Contains(out, "Moved (server-side)") {
		t.Errorf("rclone moveto did not move server-side:\n%s", out)
	}
	rcloneRename(tree, "copy of level3/deep.txt", "copy of level3/small.bin")
	r.mustRun(t, "moveto", "dav:tree/level1/three-mib.bin", "dav:tree/level1/renamed – ✓.bin")
	rcloneRename(tree, "level1/three-mib.bin", "level1/renamed – ✓.bin")
	r.mustRun(t, "moveto", "dav:tree/Ünïcødé – ✓.txt", "dav:tree/with space/Ünïcødé moved.txt")
	rcloneRename(tree, "Ünïcødé – ✓.txt", "with space/Ünïcødé moved.txt")
	// Move a folder (with its contents) into another folder.
	out = r.mustRun(t, "move", "--delete-empty-src-dirs", "dav:tree/日本語", "dav:tree/level1/level2/level3/日本語")
	if strings.Contains(out, "fallback") {
		t.Errorf("rclone move could not move the folder server-side:\n%s", out)
	}
	rcloneRename(tree, "日本語/ファイル.txt", "level1/level2/level3/日本語/ファイル.txt")
	rcloneCompareListing(t, r, "dav:tree", tree)
	rcloneMustCheckRemote(t, r, tree)

	// 5. Download and compare bytes and modification times.
	down := filepath.Join(t.TempDir(), "localcopy")
	out = r.mustRun(t, "copy", "dav:tree", down)
	if got := strings.Count(out, ": Copied (new)"); got != len(tree) {
		t.Errorf("rclone copy (download) reported %d new files, want %d:\n%s", got, len(tree), out)
	}
	var downloaded []string
	err = filepath.WalkDir(down, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(down, p)
		rel = filepath.ToSlash(rel)
		downloaded = append(downloaded, rel)
		want, ok := tree[rel]
		if !ok {
			t.Errorf("download produced unexpected file %q", rel)
			return nil
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want.data) {
			t.Errorf("downloaded %q: %d bytes differ from the %d uploaded", rel, len(got), len(want.data))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !rcloneSameSecond(info.ModTime(), want.mtime) {
			t.Errorf("downloaded %q has mtime %v, want %v", rel, info.ModTime().UTC(), want.mtime)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(downloaded) != len(tree) {
		t.Errorf("downloaded %d files, want %d: %q", len(downloaded), len(tree), downloaded)
	}

	// 6. Delete files of a subtree (folders stay), then purge everything.
	r.mustRun(t, "delete", "dav:tree/level1/level2")
	for name := range tree {
		if strings.HasPrefix(name, "level1/level2/") {
			delete(tree, name)
		}
	}
	entries := rcloneLsjson(t, r, "dav:tree")
	for _, d := range []string{"level1/level2", "level1/level2/level3", "level1/level2/sibling", "level1/level2/level3/日本語"} {
		if e, ok := entries[d]; !ok || !e.IsDir {
			t.Errorf("rclone delete removed the folder %q (it deletes only files)", d)
		}
	}
	for name, e := range entries {
		if _, ok := tree[name]; !e.IsDir && !ok {
			t.Errorf("rclone delete left %q", name)
		}
	}
	r.mustRun(t, "purge", "dav:tree")
	top := rcloneLsjson(t, r, "dav:")
	if _, ok := top["tree"]; ok {
		t.Errorf("the space still lists tree after rclone purge: %v", top)
	}
	if out, err := r.run(t, "lsjson", "dav:tree"); err == nil {
		t.Errorf("rclone lsjson of the purged tree succeeded:\n%s", out)
	}
	if code := rclonePropfindStatus(t, s, "/webdav/tree/"); code != http.StatusNotFound {
		t.Errorf("PROPFIND /webdav/tree/ after purge: %d, want 404", code)
	}
}

// rcloneMustCheck runs rclone check --checksum of local against dav:tree and
// requires that hashes were compared and found equal.
func rcloneMustCheck(t *testing.T, r *rcloneRunner, local string, n int) {
	t.Helper()
	out := r.mustRun(t, "check", local, "dav:tree", "--checksum")
	rcloneAssertCheck(t, out, n)
}

// rcloneMustCheckRemote checks dav:tree against a fresh local copy of tree
// (after renames).
func rcloneMustCheckRemote(t *testing.T, r *rcloneRunner, tree map[string]rcloneFile) {
	t.Helper()
	local := filepath.Join(t.TempDir(), "expected")
	rcloneWriteTree(t, local, tree)
	rcloneMustCheck(t, r, local, len(tree))
}

func rcloneAssertCheck(t *testing.T, out string, n int) {
	t.Helper()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Using (md5|sha1) for hash comparisons`),
		regexp.MustCompile(`: 0 differences found`),
		regexp.MustCompile(`: ` + strconv.Itoa(n) + ` matching files`),
	} {
		if !want.MatchString(out) {
			t.Errorf("rclone check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hashes could not be checked") || strings.Contains(out, "No common hash") {
		t.Errorf("rclone check could not compare hashes:\n%s", out)
	}
}

func rcloneTreeCopy(tree map[string]rcloneFile) map[string]rcloneFile {
	c := make(map[string]rcloneFile, len(tree))
	for k, v := range tree {
		c[k] = v
	}
	return c
}

func rcloneRename(tree map[string]rcloneFile, from, to string) {
	tree[to] = tree[from]
	delete(tree, from)
}

// rcloneEntry is an item of rclone lsjson.
type rcloneEntry struct {
	Path    string
	Name    string
	Size    int64
	ModTime time.Time
	IsDir   bool
	Hashes  map[string]string
}

func rcloneLsjson(t *testing.T, r *rcloneRunner, remote string) map[string]rcloneEntry {
	t.Helper()
	out := r.mustRunQuiet(t, "lsjson", "-R", "--hash", remote)
	var list []rcloneEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("rclone lsjson: %v:\n%s", err, out)
	}
	m := map[string]rcloneEntry{}
	for _, e := range list {
		if _, dup := m[e.Path]; dup {
			t.Errorf("rclone lsjson lists %q twice", e.Path)
		}
		m[e.Path] = e
	}
	return m
}

// rcloneCompareListing requires that remote lists exactly tree: the files
// with their sizes, hashes and modification times (to the second) and the
// folders their paths imply.
func rcloneCompareListing(t *testing.T, r *rcloneRunner, remote string, tree map[string]rcloneFile) {
	t.Helper()
	entries := rcloneLsjson(t, r, remote)
	dirs := rcloneDirs(tree)
	for p, e := range entries {
		if e.Name != path.Base(p) {
			t.Errorf("lsjson %q has Name %q", p, e.Name)
		}
		if e.IsDir {
			if !dirs[p] {
				t.Errorf("lsjson lists unexpected folder %q", p)
			}
			continue
		}
		f, ok := tree[p]
		if !ok {
			t.Errorf("lsjson lists unexpected file %q", p)
			continue
		}
		if e.Size != int64(len(f.data)) {
			t.Errorf("lsjson %q: size %d, want %d", p, e.Size, len(f.data))
		}
		if !rcloneSameSecond(e.ModTime, f.mtime) {
			t.Errorf("lsjson %q: mtime %v, want %v (X-OC-Mtime not preserved?)", p, e.ModTime, f.mtime)
		}
		for _, h := range []string{"sha1", "md5"} {
			if got, want := e.Hashes[h], rcloneHash(h, f.data); got != want {
				t.Errorf("lsjson %q: %s %q, want %q", p, h, got, want)
			}
		}
	}
	for p := range tree {
		if _, ok := entries[p]; !ok {
			t.Errorf("lsjson does not list file %q", p)
		}
	}
	for d := range dirs {
		if e, ok := entries[d]; !ok || !e.IsDir {
			t.Errorf("lsjson does not list folder %q", d)
		}
	}
}

func rcloneSameSecond(a, b time.Time) bool {
	return a.Unix() == b.Unix()
}

func rcloneHash(name string, data []byte) string {
	switch name {
	case "sha1":
		h := sha1.Sum(data)
		return hex.EncodeToString(h[:])
	case "md5":
		h := md5.Sum(data)
		return hex.EncodeToString(h[:])
	}
	panic(name)
}

// rcloneParseHashsum reads rclone hashsum output: "<hash>  <path>" lines.
func rcloneParseHashsum(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		hash, name, ok := strings.Cut(line, "  ")
		if !ok || !regexp.MustCompile(`^[0-9a-f]{32,40}$`).MatchString(hash) {
			continue
		}
		m[name] = hash
	}
	return m
}

// rcloneRunner runs rclone with a remote "dav:" configured only through the
// environment (no config file).
type rcloneRunner struct {
	bin string
	env []string
}

// newRcloneRunner is an rclone with the remote dav: at davURL as one of
// the demo users, with their password.
func newRcloneRunner(t *testing.T, bin, davURL, user string) *rcloneRunner {
	t.Helper()
	return newRcloneRemote(t, bin, davURL, user, users[user])
}

// newRcloneRemote is an rclone with the remote dav: at davURL as user with
// password: a demo user's, an app password, or a link's (user "public").
func newRcloneRemote(t *testing.T, bin, davURL, user, password string) *rcloneRunner {
	t.Helper()
	home := t.TempDir()
	r := &rcloneRunner{bin: bin}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RCLONE_") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"RCLONE_CONFIG="+filepath.Join(home, "rclone.conf"), // does not exist
		"RCLONE_CACHE_DIR="+filepath.Join(home, "rclone-cache"),
	)
	obscured, err := r.run(t, "obscure", password)
	if err != nil {
		t.Fatalf("rclone obscure: %v\n%s", err, obscured)
	}
	r.env = append(r.env,
		"RCLONE_CONFIG_DAV_TYPE=webdav",
		"RCLONE_CONFIG_DAV_URL="+davURL,
		"RCLONE_CONFIG_DAV_VENDOR=owncloud",
		"RCLONE_CONFIG_DAV_USER="+user,
		"RCLONE_CONFIG_DAV_PASS="+strings.TrimSpace(obscured),
	)
	t.Logf("rclone remote dav: = %s as %s", davURL, user)
	return r
}

// run runs rclone with a deadline and returns its combined output.
func (r *rcloneRunner) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, r.bin, args...)
	cmd.Env = r.env
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return string(out), err
}

// rcloneFlags make failures fast and visible.
var rcloneFlags = []string{"--low-level-retries", "1", "--retries", "1", "-v"}

func (r *rcloneRunner) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.run(t, append(args, rcloneFlags...)...)
	if err != nil || strings.Contains(out, "ERROR") {
		t.Fatalf("rclone %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// mustRunQuiet is mustRun for commands whose stdout is parsed: stderr goes to
// the test log instead of the output.
func (r *rcloneRunner) mustRunQuiet(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, r.bin, append(args, "--low-level-retries", "1", "--retries", "1")...)
	cmd.Env = r.env
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil || strings.Contains(stderr.String(), "ERROR") {
		t.Fatalf("rclone %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), out)
	}
	return string(out)
}

func rclonePut(t *testing.T, s *server, p string, data []byte) {
	t.Helper()
	resp := sendAs(t, s, "einstein", http.MethodPut, p, nil, data)
	if resp.code != http.StatusNoContent && resp.code != http.StatusCreated && resp.code != http.StatusOK {
		t.Fatalf("PUT %s: %d\n%s", p, resp.code, resp.body)
	}
}

func rclonePropfindStatus(t *testing.T, s *server, p string) int {
	t.Helper()
	return sendAs(t, s, "einstein", "PROPFIND", p, map[string]string{"Depth": "0"}, nil).code
}
