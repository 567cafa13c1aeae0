//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// The limits for 16 clients listing a folder of 100,000 entries:
// the server's heap and stacks (RssAnon) stay under 64 MB. The database
// mapping is file-backed and shared; the store trims it as it is read, so
// that it stays a fraction of the database (which is larger than the
// limit here).
const (
	bigFolderEntries = 100_000
	listingClients   = 16
	maxListingAnonKB = 64 << 10
	maxListingDBKB   = 48 << 10
)

// The limits over the whole bench, deletes of big folders among
// them: the resident set (VmHWM, which counts the executable's pages and
// the database's mapping) and heap and stacks, for a delete, which moves
// the folder into the trash, and for emptying the trash.
const (
	deleteFolderEntries = 20_000
	maxDeleteHWMKB      = 100 << 10
	maxDeleteAnonKB     = 64 << 10
)

// listingPropfind is what the desktop clients ask of a folder's children.
const listingPropfind = `<?xml version="1.0"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>
<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/>
<oc:id/><oc:fileid/><oc:permissions/><oc:size/><oc:checksums/><oc:share-types/>
</d:prop></d:propfind>`

// testMemoryListingBigFolder starts the real Caddy on a folder of 100,000
// files, which it seeds straight into the store, lets 16 clients list it
// with PROPFIND Depth 1 at once and samples the server's memory from
// /proc meanwhile: every listing is complete and the heap and stacks stay
// under the 64 MB.
func testMemoryListingBigFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 files")
	}
	// Its minutes of seeding run beside TestUndoRetentionSettings' minutes
	// of waiting for the sweep; the memory it measures is its own server's.
	t.Parallel()
	s := startWithBigFolder(t, bigFolderEntries)

	startHWM, err := procStatusKB(s.cmd.Process.Pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	sampler := startMemorySampler(s.cmd.Process.Pid)
	began := time.Now()
	errs := make(chan error, listingClients)
	var wg sync.WaitGroup
	for range listingClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- listBigFolder(s.URL+"/webdav/big", bigFolderEntries+1)
		}()
	}
	wg.Wait()
	took := time.Since(began)
	peak := sampler.stop()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	hwm, err := procStatusKB(s.cmd.Process.Pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d listings of %d entries in %v: peak RssAnon %d kB, database mapped %d kB, VmHWM %d kB (%d kB after the start; %d samples)",
		listingClients, bigFolderEntries+1, took.Round(time.Millisecond), peak.anonKB, peak.dbKB, hwm, startHWM, peak.samples)
	if peak.anonKB > maxListingAnonKB {
		t.Errorf("RssAnon reached %d kB while %d clients listed, want at most %d", peak.anonKB, listingClients, maxListingAnonKB)
	}
	if peak.dbKB > maxListingDBKB {
		t.Errorf("%d kB of the database mapped while %d clients listed, want at most %d", peak.dbKB, listingClients, maxListingDBKB)
	}
}

// startWithBigFolder starts the real Caddy with einstein's folder /big
// holding n files, seeded straight into the store while it is stopped.
func startWithBigFolder(t *testing.T, n int) *server {
	t.Helper()
	port := freePort(t)
	s := startServer(t, serverOptions{port: port})
	owner := newClient(t, s.URL, "einstein")
	owner.expect(http.StatusCreated, "MKCOL", "/webdav/big", "")
	folder := owner.prop("/webdav/big", ocNS, "fileid")
	s.stop()
	began := time.Now()
	seedFolder(t, s.Root, folder, n)
	t.Logf("seeded %d files in %v", n, time.Since(began).Round(time.Millisecond))
	return startServer(t, serverOptions{root: s.Root, port: port})
}

// testMemoryDeleteBigFolder starts the real Caddy on a folder of 20,000
// files, which it seeds straight into the store, deletes the folder (into
// the trash) and empties the trash, and checks the server's peak resident
// set in each against the limits.
func testMemoryDeleteBigFolder(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 20,000 files")
	}
	s := startWithBigFolder(t, deleteFolderEntries)
	owner := newClient(t, s.URL, "einstein")
	pid := s.cmd.Process.Pid
	settleAfterStart(t, pid)

	trash := "/dav/spaces/trash-bin/" + escapeID(personalSpaceRef(t, s, "einstein"))
	for _, step := range []struct{ name, path string }{
		{"delete into the trash", "/webdav/big"},
		{"emptying the trash", trash},
	} {
		hwm, anon := peakDuring(t, pid, func() {
			owner.expect(http.StatusNoContent, "DELETE", step.path, "")
		})
		t.Logf("%s of %d files: VmHWM %d kB, peak RssAnon %d kB", step.name, deleteFolderEntries, hwm, anon)
		if hwm > maxDeleteHWMKB {
			t.Errorf("%s: VmHWM %d kB, want at most %d", step.name, hwm, maxDeleteHWMKB)
		}
		if anon > maxDeleteAnonKB {
			t.Errorf("%s: RssAnon reached %d kB, want at most %d", step.name, anon, maxDeleteAnonKB)
		}
		if step.path != trash {
			if items := owner.propfind(trash, "1", ""); len(items) != 2 {
				t.Fatalf("the trash holds %d responses after the delete, want the root and the folder", len(items))
			}
		}
	}
	owner.expect(http.StatusNotFound, "PROPFIND", "/webdav/big", "", "Depth", "0")
}

// settleAfterStart waits, for 5 s at most, until the server has dropped
// from its resident set what its start touched of the executable (the
// store does that soon after it opened), so that a peak measured next is
// the request's.
func settleAfterStart(t *testing.T, pid int) {
	t.Helper()
	atStart, err := procStatusKB(pid, "RssFile")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if now, err := procStatusKB(pid, "RssFile"); err == nil && now < atStart/2 {
			t.Logf("RssFile %d kB after the start, %d kB once dropped", atStart, now)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("RssFile stayed above half of its %d kB after the start", atStart)
}

// peakDuring runs fn and returns the peak resident set (VmHWM, set back to
// the present resident set before) and the largest RssAnon sampled of
// process pid meanwhile.
func peakDuring(t *testing.T, pid int, fn func()) (hwmKB, anonKB int) {
	t.Helper()
	// "5" sets VmHWM back to the present resident set (proc(5)).
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	sampler := startMemorySampler(pid)
	fn()
	peak := sampler.stop()
	hwm, err := procStatusKB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return hwm, peak.anonKB
}

// seedFolder adds n empty files to folder (a resource id) in the store of
// data directory root, whose server is stopped. Concurrent commits share
// transactions, so the seeding takes seconds: enough writers to keep the
// store's groups full (two of its largest at once) spend a bolt commit on
// many files instead of on two or three.
func seedFolder(t *testing.T, root, folder string, n int) {
	t.Helper()
	_, rest, _ := strings.Cut(folder, "$")
	spaceID, folderID, _ := strings.Cut(rest, "!")
	store, err := boltstore.Open(root, boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 256
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < n; i += workers {
				if err := commitEmpty(store, spaceID, folderID, fmt.Sprintf("file-%06d.txt", i)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	// Closing syncs what NoSync left unsynced.
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

func commitEmpty(store *boltstore.Store, spaceID, folderID, name string) error {
	ctx := context.Background()
	u, err := store.NewUpload(ctx, spaceID)
	if err != nil {
		return err
	}
	defer u.Discard()
	if _, _, err := u.Commit(ctx, storage.Commit{ParentID: folderID, Name: name}); err != nil {
		return fmt.Errorf("seeding %s: %w", name, err)
	}
	return nil
}

// listBigFolder sends a PROPFIND Depth 1 to url as einstein and reads the
// streamed answer, checking that it holds want responses.
func listBigFolder(url string, want int) error {
	req, err := http.NewRequest("PROPFIND", url, strings.NewReader(listingPropfind))
	if err != nil {
		return err
	}
	req.SetBasicAuth("einstein", users["einstein"])
	req.Header.Set("Depth", "1")
	req.Header.Set("Content-Type", "application/xml")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("PROPFIND %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMultiStatus {
		return fmt.Errorf("PROPFIND %s: %s", url, resp.Status)
	}
	var responses countWriter
	responses.of = []byte("</d:response>")
	if _, err := io.Copy(&responses, resp.Body); err != nil {
		return fmt.Errorf("PROPFIND %s: reading the answer: %w", url, err)
	}
	if responses.n != want {
		return fmt.Errorf("PROPFIND %s: %d responses, want %d", url, responses.n, want)
	}
	return nil
}

// countWriter counts the occurrences of of in what is written to it,
// across writes.
type countWriter struct {
	of   []byte
	tail []byte // the end of the last write, which may begin an occurrence
	n    int
}

func (c *countWriter) Write(p []byte) (int, error) {
	buf := append(c.tail, p...)
	c.n += bytes.Count(buf, c.of)
	keep := min(len(c.of)-1, len(buf))
	c.tail = append(c.tail[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// memoryPeak is the most a process used while sampled.
type memoryPeak struct {
	anonKB  int // RssAnon: heap, stacks
	dbKB    int // resident pages of the database mapping
	samples int
}

// memorySampler samples a process's memory every few milliseconds until
// stopped.
type memorySampler struct {
	done chan struct{}
	peak chan memoryPeak
}

func startMemorySampler(pid int) *memorySampler {
	m := &memorySampler{done: make(chan struct{}), peak: make(chan memoryPeak, 1)}
	go func() {
		var peak memoryPeak
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if anon, err := procStatusKB(pid, "RssAnon"); err == nil {
				peak.anonKB = max(peak.anonKB, anon)
				peak.samples++
			}
			if db, err := mappingKB(pid, "/meta.db"); err == nil {
				peak.dbKB = max(peak.dbKB, db)
			}
			select {
			case <-m.done:
				m.peak <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memorySampler) stop() memoryPeak {
	close(m.done)
	return <-m.peak
}

// procStatusKB returns a field of /proc/pid/status in kB.
func procStatusKB(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// mappingKB returns the resident kB of the mappings of pid whose file name
// ends in suffix, from /proc/pid/smaps.
func mappingKB(pid int, suffix string) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	total, in := 0, false
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasSuffix(line, suffix)
			continue
		}
		if rss, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rss), " kB"))
			if err != nil {
				return 0, err
			}
			total += kb
		}
	}
	return total, lines.Err()
}
