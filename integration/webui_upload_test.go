package integration

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// uploadOptions are the options of testdata/webui/upload.mjs.
type uploadOptions struct {
	browserSession
	// Folder is the page the files are uploaded to.
	Folder string `json:"folder"`
	// Small go up with Big, which the proxy cuts; the page is reloaded and
	// Big picked again.
	Small []string `json:"small"`
	Big   string   `json:"big"`
	// Album is a folder with a sub-folder, uploaded by the folder picker.
	Album string `json:"album"`
	// Dropped is a folder dropped on the page: a file, a sub-folder with a
	// file, and an empty one.
	Dropped string `json:"dropped"`
	// Paused is uploaded slowly and paused and resumed.
	Paused string `json:"paused"`
	// TinyFolder is a space's folder with a small quota, which refuses
	// TooBig and takes Fits.
	TinyFolder string `json:"tinyFolder"`
	TooBig     string `json:"tooBig"`
	Fits       string `json:"fits"`
	// Network is the URL of the switch the script works the proxy with.
	Network string `json:"network"`
}

// Sizes of the files the page uploads: the 300 MB, cut after
// bigCutAfter bytes (mid-way); a file paused while it goes up slowly; and
// one past the tiny space's quota.
const (
	bigUploadSize = 300_000_000
	bigCutAfter   = 150 << 20
	pausedSize    = 12 << 20
	tinyQuota     = "1MB"
	tooBigSize    = 2_000_000
)

// testWebUIUpload drives the browser page's uploads with Debian's chromium
// through a loopback proxy in front of the real Caddy, signed in with
// Basic: three files by the file picker, one of 300 MB, whose connection
// the proxy cuts mid-way; the page is reloaded, offers to resume it, and
// the same file picked again goes on from the server's offset and
// finishes. A folder with a sub-folder goes up by the folder picker, an
// upload is paused (no bytes move) and resumed, and a file past a space's
// quota is refused in words before its first byte while the other file
// goes on. A folder dropped on the page goes up with its sub-folders, the
// empty one included. It writes screenshots of an upload in progress at desktop and
// phone width. Then every file's SHA1 is compared through WebDAV, and no
// unfinished upload is left (nothing reserved, nothing in the browser's
// storage) and the bytes sent show the big file was not sent twice.
func testWebUIUpload(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	s := startServer(t, serverOptions{davspaces: []string{
		"personal_quota 2GB",
		"space Tiny {", "manager einstein", "quota " + tinyQuota, "}",
	}})
	einstein := newClient(t, s.URL, "einstein")
	personal := personalSpaceRef(t, s, "einstein")
	folder := "/dav/spaces/" + personal + "/inbox/"
	einstein.expect(http.StatusCreated, "MKCOL", folder, "")
	tinyFolder := "/dav/spaces/" + projectSpaceRef(personal, "Tiny") + "/"

	files := t.TempDir()
	want := map[string]string{} // path below folder → SHA1
	write := func(rel string, size int64) string {
		t.Helper()
		path := filepath.Join(files, filepath.FromSlash(rel))
		return writeRandomFile(t, path, size)
	}
	opts := uploadOptions{
		browserSession: newBrowserSession(t, chromium, "", "einstein", users["einstein"]),
		Folder:         folder,
		Album:          filepath.Join(files, "album"),
		TinyFolder:     tinyFolder,
	}
	for _, f := range []struct {
		rel  string
		size int64
	}{
		{"notes.txt", 2_000}, {"photo.jpg", 1_500_000}, {"big.bin", bigUploadSize},
		{"album/cover.txt", 300}, {"album/disc 1/track 01.txt", 40_000}, {"paused.bin", pausedSize},
		{"dropped/a.txt", 5_000}, {"dropped/inner/b.txt", 70_000},
	} {
		want[f.rel] = write(f.rel, f.size)
	}
	if err := os.Mkdir(filepath.Join(files, "dropped", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts.Dropped = filepath.Join(files, "dropped")
	opts.Small = []string{filepath.Join(files, "notes.txt"), filepath.Join(files, "photo.jpg")}
	opts.Big = filepath.Join(files, "big.bin")
	opts.Paused = filepath.Join(files, "paused.bin")
	tiny := t.TempDir()
	opts.TooBig = filepath.Join(tiny, "too big.bin")
	writeRandomFile(t, opts.TooBig, tooBigSize)
	opts.Fits = filepath.Join(tiny, "fits.txt")
	fitsSum := writeRandomFile(t, opts.Fits, 1_000)

	proxy := startCutProxy(t, s.URL)
	opts.Base = proxy.URL
	opts.Network = startNetworkSwitch(t, proxy, s.URL)
	// The cut takes the network down until the script brings it back, so
	// that the page is reloaded while big.bin is surely unfinished.
	down := deadAddress(t)
	proxy.arm(bigCutAfter, func() { proxy.retarget(down) })

	events := runDrive(t, dir, "upload.mjs", opts)
	for _, ev := range events {
		t.Logf("%v", ev)
	}
	sent, trips := proxy.stats()
	var total int64
	for f := range want {
		st, err := os.Stat(filepath.Join(files, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	t.Logf("the proxy forwarded %d client bytes for %d bytes of files; it cut %d times", sent, total, trips)
	if trips != 2 {
		t.Errorf("the proxy cut %d times, want 2 (big.bin, paused.bin)", trips)
	}
	// Sent again from the start, big.bin would have cost bigCutAfter more.
	if slack := sent - total; slack > bigCutAfter/2 {
		t.Errorf("the page sent %d bytes more than the files hold: big.bin was not resumed", slack)
	}
	resumed := eventNumbers(t, events, "resumed")
	if resumed["from"] <= 0 || resumed["sent"] >= bigUploadSize {
		t.Errorf("big.bin after the reload: resumed from %d, sent %d more bytes; want a resume from past 0", resumed["from"], resumed["sent"])
	}
	if refused := eventNumbers(t, events, "refused"); refused["sent"] != 0 {
		t.Errorf("the page sent %d bytes of the file past the quota", refused["sent"])
	}

	for rel, sum := range want {
		if got := davSHA1(t, s.URL, folder+escapePath(rel), basicAuth("einstein")); got != sum {
			t.Errorf("%s: SHA1 %s through WebDAV, want %s", rel, got, sum)
		}
	}
	if got := davSHA1(t, s.URL, tinyFolder+"fits.txt", basicAuth("einstein")); got != fitsSum {
		t.Errorf("fits.txt in the tiny space: SHA1 %s, want %s", got, fitsSum)
	}
	einstein.expect(http.StatusNotFound, "PROPFIND", tinyFolder+"too%20big.bin", "", "Depth", "0")

	// Nothing else is there, and no unfinished upload reserves bytes.
	for path, children := range map[string]int{
		folder: 6, folder + "album/": 2, folder + "album/disc%201/": 1,
		folder + "dropped/": 3, folder + "dropped/inner/": 1, folder + "dropped/empty/": 0,
	} {
		if got := len(einstein.propfind(path, "1", "")) - 1; got != children {
			t.Errorf("%s holds %d entries, want %d", path, got, children)
		}
	}
	root := "/dav/spaces/" + personal + "/"
	used, _ := strconv.ParseInt(einstein.prop(root, "DAV:", "quota-used-bytes"), 10, 64)
	free, _ := strconv.ParseInt(einstein.prop(root, "DAV:", "quota-available-bytes"), 10, 64)
	if used != total || free != 2_000_000_000-total {
		t.Errorf("quota: %d used, %d free; want %d and %d (no upload left reserving bytes)", used, free, total, 2_000_000_000-total)
	}
}

// startNetworkSwitch serves the script's switch of the proxy on loopback:
// POST /up sends connections to the server again, POST /cut?after=N cuts
// them once after N more bytes.
func startNetworkSwitch(t *testing.T, proxy *cutProxy, upstream string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /up", func(w http.ResponseWriter, r *http.Request) {
		proxy.retarget(upstream)
	})
	mux.HandleFunc("POST /cut", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		if err != nil || n <= 0 {
			http.Error(w, "after: a positive byte count", http.StatusBadRequest)
			return
		}
		proxy.arm(n, nil)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// deadAddress is a loopback address that refuses connections.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// writeRandomFile writes size bytes of seeded noise to path (its folders
// made) and returns their SHA1.
func writeRandomFile(t *testing.T, path string, size int64) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha1.New()
	src := rand.NewChaCha8([32]byte{byte(size), byte(size >> 8), byte(size >> 16)})
	if _, err := io.CopyN(io.MultiWriter(f, h), src, size); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestWebUIUploadOIDC uploads a file of two chunks from the page signed in
// with the test OpenID Connect provider: every TUS request carries the
// page's token (the PATCHes go by XMLHttpRequest, for their progress).
func TestWebUIUploadOIDC(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	port := freePort(t)
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{origin + "/"}, PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	s := startServer(t, serverOptions{issuer: idp.Issuer, port: port, davspaces: labSpace, env: []string{"OIDC_WEB_CLIENT_ID=" + webClientID}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	work := "/dav/spaces/lab/uploads/"
	alice.expect(http.StatusCreated, "MKCOL", work, "")
	file := filepath.Join(t.TempDir(), "signed.bin")
	sum := writeRandomFile(t, file, 40_000_000)

	opts := map[string]any{
		"chromium": chromium, "userDataDir": filepath.Join(t.TempDir(), "chromium"), "artifacts": webUIArtifacts(t),
		"base": s.URL, "user": "alice", "password": "alice-password", "folder": work, "file": file,
	}
	for _, ev := range runDrive(t, dir, "upload_oidc.mjs", opts) {
		t.Logf("%v", ev)
	}
	if got := davSHA1(t, s.URL, work+"signed.bin", "Bearer "+alice.token); got != sum {
		t.Errorf("signed.bin: SHA1 %s through WebDAV, want %s", got, sum)
	}
}

// davSHA1 GETs path with the Authorization header auth and sums the body
// as it streams.
func davSHA1(t *testing.T, base, path, auth string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode)
	}
	h := sha1.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// eventNumbers returns the numeric fields of the first event of a kind.
func eventNumbers(t *testing.T, events []map[string]any, kind string) map[string]int64 {
	t.Helper()
	for _, ev := range events {
		if ev["event"] != kind {
			continue
		}
		nums := map[string]int64{}
		for k, v := range ev {
			if f, ok := v.(float64); ok {
				nums[k] = int64(f)
			}
		}
		return nums
	}
	t.Errorf("upload.mjs reported no %q event", kind)
	return map[string]int64{}
}
