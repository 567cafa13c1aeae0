package integration

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// webUIDir holds the puppeteer-core script and its npm packages.
const webUIDir = "testdata/webui"

// webUIInstall installs the script's npm packages, from the module root.
const webUIInstall = "npm ci --prefix integration/testdata/webui"

// bigFolderFiles is how many files the big folder holds: the issue's
// 10,000, which the page must open usable within bigFolderBudget.
const (
	bigFolderFiles  = 10_000
	bigFolderBudget = 2 * time.Second
)

// driveOptions are the options of testdata/webui/drive.mjs.
type driveOptions struct {
	browserSession
	Downloads     string        `json:"downloads"`
	BigFolder     string        `json:"bigFolder"`
	BigCount      int           `json:"bigCount"`
	BigNeedle     string        `json:"bigNeedle"`
	BudgetMs      int64         `json:"budgetMs"`
	WorkFolder    string        `json:"workFolder"`
	Stranger      driveIdentity `json:"stranger"`
	ForeignFolder string        `json:"foreignFolder"`
	MissingFolder string        `json:"missingFolder"`
	Hints         []string      `json:"hints"`
	Favorite      string        `json:"favorite"`
	Versioned     string        `json:"versioned"`
	Versions      int           `json:"versions"`
	Locked        string        `json:"locked"`
	LockOwner     string        `json:"lockOwner"`
	MoveCopy      moveCopyNames `json:"moveCopy"`
	Inline        inlineNames   `json:"inline"`
}

// moveCopyNames are the files of the work folder that drive.mjs moves and
// copies.
type moveCopyNames struct {
	Moved      string `json:"moved"`      // into Folder with the picker
	Copied     string `json:"copied"`     // to OtherSpace's top with the picker, beside itself, to OtherSpace again
	Kept       string `json:"kept"`       // the name of the second copy, beside itself and in OtherSpace
	Dragged    string `json:"dragged"`    // onto Folder's row, then Ctrl-dragged back onto the crumb
	Locked     string `json:"locked"`     // whose drag is refused
	Folder     string `json:"folder"`     // the sub-folder
	OtherSpace string `json:"otherSpace"` // the other space's name in the picker
	SpaceName  string `json:"spaceName"`  // the work folder's space, named in its private link's breadcrumbs
}

// inlineNames are the files drive.mjs opens: Text in a tab, HTML as a
// download.
type inlineNames struct {
	Text        string `json:"text"`
	TextContent string `json:"textContent"`
	HTML        string `json:"html"`
}

type driveIdentity struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// requireBrowser finds chromium, node and puppeteer-core. Missing ones fail
// the test in CI (CI=true), where the test command installs them, and skip
// it elsewhere.
func requireBrowser(t *testing.T) (chromium, dir string) {
	t.Helper()
	chromium = requirePeer(t, "chromium")
	requirePeer(t, "node")
	dir, err := filepath.Abs(webUIDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "puppeteer-core", "package.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("puppeteer-core is not installed: the test command must run %s", webUIInstall)
		}
		t.Skipf("puppeteer-core is not installed; run: %s", webUIInstall)
	}
	return chromium, dir
}

// webUIArtifacts is where the screenshots go: WEBUI_ARTIFACTS when set
// (to keep them), else the test's own directory.
func webUIArtifacts(t *testing.T) string {
	if dir := os.Getenv("WEBUI_ARTIFACTS"); dir != "" {
		return dir
	}
	return filepath.Join(t.TempDir(), "artifacts")
}

// browserSession is what every script of testdata/webui is given: the
// browser, its profile, where screenshots go, and the server and user it
// signs in to.
type browserSession struct {
	Chromium    string `json:"chromium"`
	UserDataDir string `json:"userDataDir"`
	Artifacts   string `json:"artifacts"`
	Base        string `json:"base"`
	User        string `json:"user"`
	Password    string `json:"password"`
}

// newBrowserSession gives chromium a fresh profile and the test's
// screenshot folder.
func newBrowserSession(t *testing.T, chromium, base, user, password string) browserSession {
	return browserSession{
		Chromium:    chromium,
		UserDataDir: filepath.Join(t.TempDir(), "chromium"),
		Artifacts:   webUIArtifacts(t),
		Base:        base,
		User:        user,
		Password:    password,
	}
}

// testWebUI drives the browser page with Debian's chromium against the
// real Caddy, signed in with Basic: the overview, a folder of 10,000 files
// usable within 2 s, new folder, rename, delete, restore and purge from
// the trash, a file's download and the folder's as a zip, a refusal in
// words, and "not found" for a non-member; a favourite marked in the list,
// a file's details (checksums, id, a lock's holder), its private link
// copied and fetched, and its oldest version restored (a viewer's restore
// refused in words), each checked through WebDAV; a file moved into a
// sub-folder and one copied to another space with the folder picker, a
// name clash settled by keeping both, a row dragged onto a folder and
// Ctrl-dragged onto a breadcrumb, a locked file's move refused in words,
// each checked through WebDAV; a text file shown in a sandboxed tab and an
// HTML file downloaded, not rendered. It writes screenshots at desktop and
// phone width of the overview, a folder, the trash, a file's details with
// its versions and the folder picker.
//
// It holds the page to showing a folder of 10,000 files within two
// seconds of an idle machine: drive.mjs scales each load's time by the
// share of a core the machine gives a busy process in the same moment, so
// the test runs beside the others and beside a second suite.
func testWebUI(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	// A quota, so that the overview shows its bar.
	s := startServer(t, serverOptions{davspaces: []string{"personal_quota 2GB"}})
	einstein := newClient(t, s.URL, "einstein")
	personal := personalSpaceRef(t, s, "einstein")
	physics := projectSpaceRef(personal, "Physics")

	bigFolder := "/dav/spaces/" + personal + "/big/"
	einstein.expect(http.StatusCreated, "MKCOL", bigFolder, "")
	putMany(t, einstein, bigFolder, bigFolderFiles)

	work := "/dav/spaces/" + physics + "/lab/"
	einstein.expect(http.StatusCreated, "MKCOL", work, "")
	einstein.expect(http.StatusCreated, "MKCOL", work+"data/", "")
	const notes = "Notes on the photoelectric effect\n"
	uploaded := map[string]string{
		"notes.txt":   notes,
		"photo.jpg":   strings.Repeat("j", 48_000),
		"song.mp3":    strings.Repeat("m", 3_200_000),
		"report.pdf":  strings.Repeat("p", 250_000),
		"archive.zip": strings.Repeat("z", 1_200_000),
		"main.go":     "package main\n",
		"page.html":   "<h1 id=rendered>rendered</h1><script>document.title='ran'</script>",
	}
	for name, body := range uploaded {
		einstein.expect(http.StatusCreated, http.MethodPut, work+name, body)
	}

	// A file replaced twice: two versions, the first content the oldest.
	drafts := []string{"first draft\n", "second draft\n", "third draft\n"}
	for i, body := range drafts {
		status := http.StatusNoContent
		if i == 0 {
			status = http.StatusCreated
		}
		einstein.expect(status, http.MethodPut, work+"draft.txt", body)
	}

	// A locked file, whose details say by whom and until when.
	einstein.expect(http.StatusOK, "LOCK", work+"report.pdf",
		`<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>Einstein's editor</d:owner></d:lockinfo>`,
		"Timeout", "Second-3600")

	opts := driveOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "einstein", users["einstein"]),
		Downloads:      t.TempDir(),
		BigFolder:      bigFolder,
		BigCount:       bigFolderFiles,
		BigNeedle:      fmt.Sprintf("file-%05d", bigFolderFiles-1),
		BudgetMs:       bigFolderBudget.Milliseconds(),
		WorkFolder:     work,
		Stranger:       driveIdentity{User: "richard", Password: users["richard"]},
		ForeignFolder:  bigFolder,
		MissingFolder:  "/dav/spaces/" + personal + "x/big/",
		Hints:          []string{"einstein", "big", "file-", "Personal"},
		Favorite:       "main.go",
		Versioned:      "draft.txt",
		Versions:       len(drafts) - 1,
		Locked:         "report.pdf",
		LockOwner:      "Einstein's editor",
		MoveCopy: moveCopyNames{
			Moved: "song.mp3", Copied: "notes.txt", Kept: "notes (2).txt", Dragged: "archive.zip",
			Locked: "report.pdf", Folder: "data", OtherSpace: "Personal", SpaceName: "Physics",
		},
		Inline: inlineNames{Text: "notes.txt", TextContent: "photoelectric", HTML: "page.html"},
	}
	events := runDrive(t, dir, "drive.mjs", opts)
	for _, ev := range events {
		if ev["event"] != "check" && ev["event"] != "timings" {
			t.Logf("%v", ev)
		}
	}

	downloaded, err := os.ReadFile(filepath.Join(opts.Downloads, "notes.txt"))
	if err != nil || string(downloaded) != notes {
		t.Errorf("the page's download of notes.txt: %q, %v; want %q", downloaded, err, notes)
	}

	wantZip := map[string]string{"lab/": "", "lab/data/": ""}
	for name, body := range uploaded {
		wantZip["lab/"+name] = body
	}
	// The zip is taken before the page restores draft.txt's oldest version.
	wantZip["lab/draft.txt"] = drafts[len(drafts)-1]
	compareZip(t, filepath.Join(opts.Downloads, "lab.zip"), wantZip)

	// What the page did is on the server.
	wantStatus := func(path string, status int) {
		t.Helper()
		resp, _ := einstein.do("PROPFIND", path, "", "Depth", "0")
		if resp.StatusCode != status {
			t.Errorf("PROPFIND %s: %d, want %d", path, resp.StatusCode, status)
		}
	}
	wantStatus(work+"notes.txt", http.StatusMultiStatus)
	wantStatus(work+"Drafts/", http.StatusNotFound)
	wantStatus(work+"Final/", http.StatusNotFound)
	if resp, body := einstein.do(http.MethodGet, work+"draft.txt", ""); body != drafts[0] {
		t.Errorf("draft.txt after the page restored its oldest version: %d %q, want %q", resp.StatusCode, body, drafts[0])
	}
	if link := eventValue(events, "link", "url"); link == "" {
		t.Error("the page copied no link")
	} else if resp, body := einstein.do(http.MethodGet, strings.TrimPrefix(link, s.URL), ""); body != drafts[0] {
		t.Errorf("GET of the copied link %s: %d %q, want %q", link, resp.StatusCode, body, drafts[0])
	}
	const favoriteProp = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/></d:prop></d:propfind>`
	if resp, body := einstein.do("PROPFIND", work+opts.Favorite, favoriteProp, "Depth", "0"); !strings.Contains(body, ">1</oc:favorite>") {
		t.Errorf("oc:favorite of %s after the page marked it: %d %s", opts.Favorite, resp.StatusCode, body)
	}
	checkMovedAndCopied(t, einstein, work, "/dav/spaces/"+personal+"/", uploaded, opts.MoveCopy)
	if html, err := os.ReadFile(filepath.Join(opts.Downloads, opts.Inline.HTML)); err != nil || string(html) != uploaded[opts.Inline.HTML] {
		t.Errorf("opening %s downloaded %q, %v; want its content", opts.Inline.HTML, html, err)
	}
	resp, body := einstein.do("PROPFIND", "/dav/spaces/trash-bin/"+physics, "", "Depth", "1")
	if items := len(mustMultistatus(t, resp, body)) - 1; items != 0 {
		t.Errorf("the trash holds %d items after the page restored one and purged the other", items)
	}
}

// checkMovedAndCopied checks through WebDAV what drive.mjs moved and
// copied in work (a folder of uploaded files) and to the other space's top.
func checkMovedAndCopied(t *testing.T, c *client, work, other string, uploaded map[string]string, n moveCopyNames) {
	t.Helper()
	want := map[string]string{
		work + n.Folder + "/" + n.Moved:   uploaded[n.Moved],
		other + n.Copied:                  uploaded[n.Copied],
		other + n.Kept:                    uploaded[n.Copied],
		work + n.Copied:                   uploaded[n.Copied],
		work + n.Kept:                     uploaded[n.Copied],
		work + n.Folder + "/" + n.Dragged: uploaded[n.Dragged],
		work + n.Dragged:                  uploaded[n.Dragged],
		work + n.Locked:                   uploaded[n.Locked],
	}
	for path, content := range want {
		if resp, body := c.do(http.MethodGet, escapeSegments(path), ""); resp.StatusCode != http.StatusOK || body != content {
			t.Errorf("GET %s after the page's moves and copies: %d, %d bytes; want %d bytes", path, resp.StatusCode, len(body), len(content))
		}
	}
	for _, gone := range []string{work + n.Moved, work + n.Folder + "/" + n.Locked} {
		if resp, _ := c.do("PROPFIND", escapeSegments(gone), "", "Depth", "0"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("PROPFIND %s after the page moved it away (or was refused): %d, want 404", gone, resp.StatusCode)
		}
	}
}

// escapeSegments escapes a path's segments (a name with a space).
func escapeSegments(path string) string {
	return strings.ReplaceAll(path, " ", "%20")
}

// compareZip reads the archive at file and compares its entries (name to
// content, "" for a folder) with want.
func compareZip(t *testing.T, file string, want map[string]string) {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Errorf("the page's folder zip: %v", err)
		return
	}
	defer zr.Close()
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s in the zip: %v", f.Name, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading %s from the zip: %v", f.Name, err)
		}
		got[f.Name] = string(body)
	}
	if len(got) != len(want) {
		t.Errorf("the folder zip holds %d entries, want %d", len(got), len(want))
	}
	for name, body := range want {
		if g, ok := got[name]; !ok || g != body {
			t.Errorf("the folder zip's %s: present %v, %d bytes; want %d bytes", name, ok, len(g), len(body))
		}
	}
}

// putMany puts n small files named file-00000.txt … into folder with a few
// requests at a time.
func putMany(t *testing.T, c *client, folder string, n int) {
	t.Helper()
	const workers = 6
	names := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				resp, body, err := c.try(http.MethodPut, fmt.Sprintf("%sfile-%05d.txt", folder, i), nil, []byte(fmt.Sprint(i)))
				if err == nil && resp.StatusCode != http.StatusCreated {
					err = fmt.Errorf("PUT file %d: %d %s", i, resp.StatusCode, body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	started := time.Now()
	func() {
		defer close(names)
		for i := range n {
			select {
			case names <- i:
			case err := <-errs:
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("put %d files in %v", n, time.Since(started).Round(time.Millisecond))
}

func mustMultistatus(t *testing.T, resp *http.Response, body string) []davResponse {
	t.Helper()
	if resp.StatusCode != http.StatusMultiStatus {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	rs, err := parseMultistatus([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// runDrive runs one browser script of testdata/webui with opts as its
// argument and returns the events it printed; a failed run fails the test
// with its reason.
func runDrive(t *testing.T, dir, script string, opts any) []map[string]any {
	t.Helper()
	arg, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	// A script's waits each have their own bound (waitMs); this one only
	// ends a script that hangs, so it leaves room for the longest, Web's
	// seventeen journeys, on a machine running two suites.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, "node", filepath.Join(dir, script), string(arg))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var events []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stdout.Bytes()))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Errorf("%s printed %q", script, sc.Text())
			continue
		}
		events = append(events, ev)
	}
	if runErr != nil {
		t.Fatalf("%s: %v\n%s\n%s", script, runErr, stdout.String(), tail(stderr.String(), 4000))
	}
	return events
}

// eventValue is the field of the first event of a kind drive.mjs printed.
func eventValue(events []map[string]any, kind, field string) string {
	for _, ev := range events {
		if ev["event"] == kind {
			v, _ := ev[field].(string)
			return v
		}
	}
	return ""
}
