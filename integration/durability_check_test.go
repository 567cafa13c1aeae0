package integration

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// checkPuts downloads the file of every job and checks that it holds what
// the job allows after the crash; it adds the digest of every file there
// to present, by path.
func checkPuts(t testing.TB, c *client, jobs []*putJob, present map[string]digest) {
	t.Helper()
	var acknowledged, landed int
	for _, j := range jobs {
		if j.failed != nil {
			t.Errorf("before the kill: %v", j.failed)
		}
		got, ok, err := c.getDigest(j.path)
		if err != nil {
			t.Error(err)
			continue
		}
		contents, absent := j.allowed()
		switch {
		case !ok && !absent:
			t.Errorf("GET %s after the restart: 404; %s", j.path, j.describe())
		case ok && !slices.Contains(contents, got):
			t.Errorf("GET %s after the restart: %v, neither an acknowledged nor a whole version; %s", j.path, got, j.describe())
		}
		if ok {
			present[j.path] = got
		}
		if j.acknowledged() {
			acknowledged++
		} else if d, whole := j.sentWhole(); whole && ok && got == d {
			landed++
		}
	}
	t.Logf("%d of %d PUTs (up to %d bytes) acknowledged before the kill, %d more landed unacknowledged",
		acknowledged, len(jobs), slices.MaxFunc(jobs, bySize).content.size, landed)
}

func bySize(a, b *putJob) int { return cmp.Compare(a.content.size, b.content.size) }

// describe tells what became of the PUT, for a failure report.
func (j *putJob) describe() string {
	var b strings.Builder
	switch {
	case j.acknowledged():
		fmt.Fprintf(&b, "the PUT of %d bytes was acknowledged with %d", j.content.size, j.status)
	case j.body == nil:
		fmt.Fprintf(&b, "the PUT of %d bytes was never sent", j.content.size)
	default:
		fmt.Fprintf(&b, "the PUT was not acknowledged after %d of %d bytes were sent", j.body.whole().size, j.content.size)
	}
	if d, ok := j.sentWhole(); ok {
		fmt.Fprintf(&b, " (%v)", d)
	}
	if j.was != nil {
		fmt.Fprintf(&b, "; it replaced an acknowledged %v", *j.was)
	}
	return b.String()
}

// walkProps are the properties checkWalk compares with the downloads.
const walkProps = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:resourcetype/><d:getcontentlength/><oc:checksums/></d:prop></d:propfind>`

// checkWalk lists root (escaped, ending in /) with PROPFIND Depth
// infinity: it must hold exactly the folders and the files given, with
// the size and SHA1 of what GET returned. After a restart the store
// computes the digests a crash left missing in the background, and a
// PROPFIND waits for them a bounded time only: a listing that lacks
// some SHA1 is asked again, until digestsPending has passed.
func checkWalk(t testing.TB, c *client, root string, folders []string, files map[string]digest) {
	t.Helper()
	deadline := time.Now().Add(digestsPending)
	for {
		problems, pending := walkProblems(c, root, folders, files)
		if pending == 0 || time.Now().After(deadline) {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		t.Logf("%d files listed without their SHA1 yet: asking again", pending)
		time.Sleep(time.Second)
	}
}

// digestsPending is how long checkWalk waits for digests being computed.
const digestsPending = time.Minute

// walkProblems returns what checkWalk finds wrong, and how many files
// were listed with their size but no SHA1 yet.
func walkProblems(c *client, root string, folders []string, files map[string]digest) (problems []string, pending int) {
	listed := map[string]bool{}
	for _, r := range c.propfind(root, "infinity", walkProps) {
		listed[r.href] = true
		if strings.Contains(r.props["DAV: resourcetype"], "collection") {
			if !slices.Contains(folders, r.href) {
				problems = append(problems, fmt.Sprintf("PROPFIND Depth infinity lists a folder %s that the test never made", r.href))
			}
			continue
		}
		d, ok := files[r.href]
		if !ok {
			problems = append(problems, fmt.Sprintf("PROPFIND Depth infinity lists %s, which GET does not find", r.href))
			continue
		}
		size, sums := r.props["DAV: getcontentlength"], strings.ToLower(r.props[ocNS+" checksums"])
		if size == fmt.Sprint(d.size) && !strings.Contains(sums, "sha1:") {
			pending++
		}
		if size != fmt.Sprint(d.size) || !strings.Contains(sums, "sha1:"+d.sha1) {
			problems = append(problems, fmt.Sprintf("PROPFIND Depth infinity lists %s with %s bytes and checksums %s; GET returned %v", r.href, size, sums, d))
		}
	}
	for _, p := range append(slices.Collect(maps.Keys(files)), folders...) {
		if !listed[p] {
			problems = append(problems, fmt.Sprintf("PROPFIND Depth infinity does not list %s", p))
		}
	}
	return problems, pending
}

// checkMetadata opens the metadata database of the store in root, read
// only, as the killed Caddy left it, and checks its pages: a torn write
// would show there before the restart could hide it.
func checkMetadata(t testing.TB, root string) {
	t.Helper()
	// The store's bbolt file (boltstore's dbFile).
	db, err := bolt.Open(filepath.Join(root, "meta.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("opening the metadata the killed Caddy left: %v", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("the metadata the killed Caddy left: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantAbsent checks that GET finds nothing at path (escaped).
func wantAbsent(t testing.TB, c *client, path, what string) {
	t.Helper()
	got, ok, err := c.getDigest(path)
	switch {
	case err != nil:
		t.Error(err)
	case ok:
		t.Errorf("GET %s (%s): %v, want 404", path, what, got)
	}
}

// wantContent checks that GET of path (escaped) returns content.
func wantContent(t testing.TB, c *client, path string, content digest) {
	t.Helper()
	got, ok, err := c.getDigest(path)
	switch {
	case err != nil:
		t.Error(err)
	case !ok:
		t.Errorf("GET %s: 404, want %v", path, content)
	case got != content:
		t.Errorf("GET %s: %v, want %v", path, got, content)
	}
}
