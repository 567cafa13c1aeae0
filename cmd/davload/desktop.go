package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The desktop subcommand runs a real desktop sync client (owncloudcmd or
// nextcloudcmd) against a server: a first sync of a generated tree, two
// syncs with nothing to do (the first after the upload, then the steady
// state), and a sync after some files changed; then it checks every
// file on the server against the local tree (the SHA1 checksum the server
// computed from the bytes it received), and prints one JSON result line per
// pass for davload report:
//
//	davload desktop -client owncloudcmd -url http://127.0.0.1:PORT/ -user U -pass P -work DIR
//
// The ownCloud client syncs the user's whole personal space, the Nextcloud
// client the folder -folder (made first), so each needs a user, or at
// least a folder, of its own. Every pass is bounded by -timeout.

// desktopConfig is the settings of one desktop run.
type desktopConfig struct {
	client, server, user, pass, work, folder, label string
	files, folders, changed, round                  int
	size                                            int64
	timeout                                         time.Duration
}

func runDesktop(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseDesktopFlags(args, stderr)
	if err != nil {
		return flagsFailed(stderr, "davload desktop", err)
	}
	ctx, stop := untilInterrupted()
	defer stop()
	results, err := cfg.run(ctx, stderr)
	for _, res := range results {
		line, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(line))
	}
	if err != nil {
		fmt.Fprintln(stderr, "davload desktop:", err)
		return 1
	}
	return 0
}

func parseDesktopFlags(args []string, stderr io.Writer) (*desktopConfig, error) {
	fs := flag.NewFlagSet("davload desktop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &desktopConfig{}
	fs.StringVar(&cfg.client, "client", "owncloudcmd", "the sync client: owncloudcmd or nextcloudcmd")
	rawURL := fs.String("url", "", "the server's address, e.g. http://127.0.0.1:9280/ (loopback hosts only)")
	fs.StringVar(&cfg.user, "user", "", "user name")
	fs.StringVar(&cfg.pass, "pass", "", "password")
	fs.StringVar(&cfg.work, "work", "", "an empty directory for the local tree and the client's settings")
	fs.StringVar(&cfg.folder, "folder", "sync", "the folder nextcloudcmd syncs (owncloudcmd syncs the whole space)")
	fs.StringVar(&cfg.label, "label", "", "server label in the results")
	fs.IntVar(&cfg.round, "round", 0, "round number recorded in the results")
	fs.IntVar(&cfg.files, "files", 5000, "files in the tree")
	fs.IntVar(&cfg.folders, "folders", 50, "folders the files are spread over")
	fs.IntVar(&cfg.changed, "changed", 100, "files changed before the last sync")
	rawSize := fs.String("size", "4KiB", "size of each file")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "limit of each sync pass")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	base, err := parseBaseURL(*rawURL)
	if err != nil {
		return nil, err
	}
	cfg.server = base.Scheme + "://" + base.Host + "/"
	if cfg.size, err = parseSize(*rawSize); err != nil {
		return nil, fmt.Errorf("-size: %w", err)
	}
	switch {
	case cfg.client != "owncloudcmd" && cfg.client != "nextcloudcmd":
		return nil, fmt.Errorf("-client %q: owncloudcmd or nextcloudcmd", cfg.client)
	case cfg.user == "" || cfg.work == "":
		return nil, errors.New("-user and -work are required")
	case cfg.files < 1 || cfg.folders < 1 || cfg.changed < 0 || cfg.changed > cfg.files:
		return nil, errors.New("-files and -folders must be positive, -changed at most -files")
	}
	if cfg.label == "" {
		cfg.label = base.Host
	}
	return cfg, nil
}

// run makes the tree, syncs it three times and verifies the server's copy.
func (c *desktopConfig) run(ctx context.Context, stderr io.Writer) ([]*result, error) {
	local := filepath.Join(c.work, "local")
	tree := c.tree()
	if err := writeTree(local, tree, c.size, 1); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.work, "exclude.lst"), []byte(".DS_Store\n"), 0o644); err != nil {
		return nil, err
	}
	if c.client == "nextcloudcmd" {
		if err := c.mkcol(ctx); err != nil {
			return nil, err
		}
	}
	var results []*result
	pass := func(scenario string, files int) error {
		took, err := c.sync(ctx, local)
		res := &result{Label: c.label, Round: c.round, Scenario: scenario, Client: c.client, Concurrency: 1,
			Size: c.size, Files: files, Folders: c.folders, N: files, Secs: took.Seconds()}
		if took > 0 {
			res.OpsPerSec = float64(files) / took.Seconds()
		}
		if err != nil {
			res.Errors = 1
		}
		results = append(results, res)
		fmt.Fprintf(stderr, "davload desktop: %s %s against %s: %.2fs\n", c.client, scenario, c.label, took.Seconds())
		return err
	}
	if err := pass("desktop-first", len(tree)); err != nil {
		return results, err
	}
	// The first pass after the upload is not quite a no-op: the Nextcloud
	// client lists again every folder it made (it kept no etag for them).
	// The second is the steady state.
	if err := pass("desktop-resync", 0); err != nil {
		return results, err
	}
	if err := pass("desktop-noop", 0); err != nil {
		return results, err
	}
	// Every c.files/c.changed-th file gets new content of the same size.
	changed := spread(tree, c.changed)
	if err := writeTree(local, changed, c.size, 2); err != nil {
		return results, err
	}
	if err := pass("desktop-changed", len(changed)); err != nil {
		return results, err
	}
	if err := c.verify(ctx, local, tree); err != nil {
		results[len(results)-1].Errors++
		return results, err
	}
	return results, nil
}

// tree names the files: f000.bin… in folders d00…
func (c *desktopConfig) tree() []string {
	names := make([]string, c.files)
	for i := range names {
		names[i] = fmt.Sprintf("d%02d/f%04d.bin", i%c.folders, i/c.folders)
	}
	return names
}

// spread picks n of names, evenly spaced.
func spread(names []string, n int) []string {
	var picked []string
	for i := range n {
		picked = append(picked, names[i*len(names)/n])
	}
	return picked
}

// writeTree writes each file of names below dir with size bytes of a
// stream of its own (the generation tells one content of a file from the
// next).
func writeTree(dir string, names []string, size int64, generation uint64) error {
	for i, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, contentOf(name, size, generation<<32|uint64(i+1)), 0o644); err != nil {
			return err
		}
		// The clients see a change by its mtime and size: a rewrite within
		// the second of the last sync must not pass for no change.
		mtime := time.Unix(1_700_000_000+int64(generation)*3600, 0)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// contentOf is a file's content: a stream seeded by the seed and the name.
func contentOf(name string, size int64, seed uint64) []byte {
	h := sha1.Sum([]byte(name))
	for i := range 8 {
		seed ^= uint64(h[i]) << (8 * i)
	}
	return patternBytes(size, seed)
}

// remoteBase is the WebDAV URL of the synced folder.
func (c *desktopConfig) remoteBase() string {
	if c.client == "nextcloudcmd" {
		return c.server + "remote.php/webdav/" + url.PathEscape(c.folder) + "/"
	}
	return c.server + "remote.php/webdav/"
}

func (c *desktopConfig) mkcol(ctx context.Context) error {
	resp, err := c.request(ctx, "MKCOL", c.remoteBase(), "")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("MKCOL %s: status %d", c.remoteBase(), resp.StatusCode)
	}
	return nil
}

func (c *desktopConfig) request(ctx context.Context, method, u, depth string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.user, c.pass)
	if depth != "" {
		req.Header.Set("Depth", depth)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: loopbackDialer().DialContext}}
	return client.Do(req)
}

// sync runs one pass of the client, its output kept in the work
// directory; the client's settings live there too, not in the user's.
func (c *desktopConfig) sync(ctx context.Context, local string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	args := []string{"--non-interactive", "--trust", "--max-sync-retries", "1",
		"--exclude", filepath.Join(c.work, "exclude.lst"), "--user", c.user, "--password", c.pass}
	if c.client == "nextcloudcmd" {
		args = append(args, "--path", "/"+c.folder)
	}
	cmd := exec.CommandContext(ctx, c.client, append(args, local, c.server)...)
	home := filepath.Join(c.work, "home")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}, name)
	}), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	logFile, err := os.OpenFile(filepath.Join(c.work, c.client+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("%s after %v: %w (log: %s)", c.client, took.Round(time.Millisecond), err, logFile.Name())
	}
	return took, nil
}

// verify compares every file of names on the server with the local one:
// the SHA1 the server computed from the bytes it stored against the local
// file's, folder by folder (PROPFIND Depth 1).
func (c *desktopConfig) verify(ctx context.Context, local string, names []string) error {
	byFolder := map[string][]string{}
	for _, name := range names {
		dir, file := path.Split(name)
		byFolder[dir] = append(byFolder[dir], file)
	}
	var problems []string
	for dir, files := range byFolder {
		remote, err := c.listSums(ctx, c.remoteBase()+dir)
		if err != nil {
			return err
		}
		for _, file := range files {
			content, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(dir+file)))
			if err != nil {
				return err
			}
			sum := sha1.Sum(content)
			if want := "SHA1:" + hex.EncodeToString(sum[:]); !strings.EqualFold(remote[file], want) {
				problems = append(problems, fmt.Sprintf("%s%s: server %q, local %s", dir, file, remote[file], want))
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%d of %d files differ on the server, e.g. %s", len(problems), len(names), problems[0])
	}
	return nil
}

// multistatus is what verify reads of a listing.
type multistatus struct {
	Responses []struct {
		Href      string `xml:"href"`
		Checksums string `xml:"propstat>prop>checksums>checksum"`
	} `xml:"response"`
}

// listSums maps the names of the files in folder u to their SHA1
// checksums ("SHA1:hex").
func (c *desktopConfig) listSums(ctx context.Context, u string) (map[string]string, error) {
	resp, err := c.request(ctx, "PROPFIND", u, "1")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusMultiStatus {
		return nil, fmt.Errorf("PROPFIND %s: status %d %v", u, resp.StatusCode, err)
	}
	var ms multistatus
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&ms); err != nil {
		return nil, fmt.Errorf("PROPFIND %s: %w", u, err)
	}
	sums := map[string]string{}
	for _, r := range ms.Responses {
		name, err := url.PathUnescape(path.Base(r.Href))
		if err != nil {
			continue
		}
		for sum := range strings.FieldsSeq(r.Checksums) {
			if strings.HasPrefix(strings.ToUpper(sum), "SHA1:") {
				sums[name] = sum
			}
		}
	}
	return sums, nil
}
