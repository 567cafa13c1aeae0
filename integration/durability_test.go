package integration

import (
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The kill -9 durability test: parallel PUTs of random 1–8 MiB files, some
// over acknowledged files, with small PUTs spread over the same time (a
// store may keep those inline and commit them in groups) and a TUS and a
// chunking NG upload in flight. Caddy is killed once the large PUTs have
// sent a given share of their bytes and started again on the same data.
// What was acknowledged must be there, whole; nothing else may show but
// whole versions.
const (
	durabilityPuts = 100
	// durabilityUploaders is how many of the PUTs are in flight at once:
	// few enough that some are acknowledged before even an early kill.
	durabilityUploaders = 25
	// durabilityReplaced of the PUTs replace an acknowledged file.
	durabilityReplaced = 20
	durabilityMinSize  = 1 << 20
	durabilityMaxSize  = 8 << 20
	durabilityFolder   = "/webdav/dur/"
	// The small PUTs: sizes on both sides of 16 KiB, up to which the
	// store may keep a file inline, some over acknowledged small files.
	durabilitySmallPuts      = 200
	durabilitySmallUploaders = 8
	durabilitySmallReplaced  = 20
	durabilitySmallMaxSize   = 32 << 10
)

func TestDurabilityKill9(t *testing.T) {
	t.Parallel()
	for _, percent := range []int64{10, 50, 90} {
		t.Run(fmt.Sprintf("kill after %d%% of the bytes", percent), func(t *testing.T) {
			testKillDuringUploads(t, percent)
		})
	}
}

// testKillDuringUploads kills Caddy once the PUTs have sent percent of
// their bytes, then checks the restarted server and writes to it again.
func testKillDuringUploads(t *testing.T, percent int64) {
	opts := serverOptions{root: filepath.Join(t.TempDir(), "data"), davspaces: []string{"depth_infinity"}}
	s := startServer(t, opts)
	r := prepareUploads(t, newDurabilityClient(t, s.URL))
	r.sendUntilKilled(t, newDurabilityClient(t, s.URL), s, percent)
	checkMetadata(t, opts.root)

	s = startServer(t, opts)
	r.checkRestarted(t, newDurabilityClient(t, s.URL))
}

// uploadsToKill are the uploads sent to the Caddy that is killed.
type uploadsToKill struct {
	puts      []*putJob
	smallPuts []*putJob
	tus       *tusRun
	ng        *ngRun
}

// prepareUploads makes the folder and the files the PUTs replace, starts
// the resumable uploads and plans the PUTs.
func prepareUploads(t *testing.T, c *client) *uploadsToKill {
	t.Helper()
	c.expect(http.StatusCreated, "MKCOL", durabilityFolder, "")
	originals := putAll(t, c, planPuts(t, durabilityFolder, "original", durabilityReplaced, 64<<10, 64<<10, nil))
	smallOriginals := putAll(t, c, planPuts(t, durabilityFolder, "small-original", durabilitySmallReplaced, 1, durabilitySmallMaxSize, nil))
	return &uploadsToKill{
		puts:      planPuts(t, durabilityFolder, "put", durabilityPuts, durabilityMinSize, durabilityMaxSize, originals),
		smallPuts: planPuts(t, durabilityFolder, "small", durabilitySmallPuts, 1, durabilitySmallMaxSize, smallOriginals),
		tus:       startTusRun(t, c, durabilityFolder, "tus.bin"),
		ng:        startNGRun(t, c, "durability"),
	}
}

// sendUntilKilled sends the PUTs and more of the resumable uploads, and
// kills s once the PUTs have sent percent of their bytes.
func (u *uploadsToKill) sendUntilKilled(t *testing.T, c *client, s *server, percent int64) {
	t.Helper()
	total := totalSize(u.puts)
	cr := newCrash(total * percent / 100)
	t.Cleanup(cr.stopUploaders)
	puts := runPuts(c, cr, u.puts, durabilityUploaders)
	senders := []<-chan struct{}{
		puts,
		runPacedPuts(c, cr, u.smallPuts, durabilitySmallUploaders),
		u.tus.duringCrash(c, cr),
		u.ng.duringCrash(c, cr),
	}
	select {
	case <-cr.due:
	case <-puts:
		for _, j := range u.puts {
			if j.failed != nil {
				t.Error(j.failed)
			}
		}
		t.Fatalf("the PUTs ended after %d of %d bytes, before the kill at %d", cr.progress.Load(), total, cr.at)
	}
	cr.kill(s)
	for _, done := range senders {
		<-done
	}
	t.Logf("killed Caddy after the large PUTs had sent %d of %d bytes (due at %d)", cr.progress.Load(), total, cr.at)
}

// checkRestarted checks what the restarted server holds: the PUTs' files,
// a PROPFIND walk that agrees with them, the resumable uploads, which it
// then finishes; and that it takes new writes.
func (u *uploadsToKill) checkRestarted(t *testing.T, c *client) {
	t.Helper()
	present := map[string]digest{}
	checkPuts(t, c, u.puts, present)
	checkPuts(t, c, u.smallPuts, present)
	checkWalk(t, c, "/webdav/", []string{"/webdav/", durabilityFolder}, present)
	u.tus.resume(t, c, durabilityFolder+"tus.bin")
	inFiles := "/remote.php/dav/files/" + c.user + strings.TrimPrefix(durabilityFolder, "/webdav")
	u.ng.resume(t, c, inFiles+"ng.bin", durabilityFolder+"ng.bin")
	writeAgain(t, c, present)
}

// writeAgain sends a second round of PUTs to the restarted server, new
// files and new versions of files that survived the kill: each is
// acknowledged and reads back.
func writeAgain(t *testing.T, c *client, present map[string]digest) {
	t.Helper()
	var replace []stored
	for _, p := range slices.Sorted(maps.Keys(present)) {
		if len(replace) == 5 {
			break
		}
		replace = append(replace, stored{path: p, content: present[p]})
	}
	for _, s := range putAll(t, c, planPuts(t, durabilityFolder, "again", 10, 64<<10, 2<<20, replace)) {
		wantContent(t, c, s.path, s.content)
	}
}

// putAll sends jobs, a few at a time, to a server that is not killed:
// each must be acknowledged. It returns what they stored.
func putAll(t *testing.T, c *client, jobs []*putJob) []stored {
	t.Helper()
	<-runPuts(c, newCrash(neverReached), jobs, 4)
	var out []stored
	for _, j := range jobs {
		if !j.acknowledged() {
			t.Fatalf("%s: %v", j.describe(), j.failed)
		}
		d, _ := j.sentWhole()
		out = append(out, stored{path: j.path, content: d})
	}
	return out
}

// newDurabilityClient is a client of einstein's with a transport of its
// own: the connections the kill breaks stay out of other tests' way.
func newDurabilityClient(t *testing.T, base string) *client {
	tr := &http.Transport{MaxIdleConnsPerHost: durabilityUploaders}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, base: base, user: "einstein", http: &http.Client{Transport: tr, Timeout: time.Minute}}
}
