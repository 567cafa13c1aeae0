package integration

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// How long and how much each concurrency test hammers the server: long
// enough for hundreds of requests to overlap, bounded so the suite stays
// fast on a small machine.
const (
	hammerFor         = 4 * time.Second
	readersPerTest    = 3
	listingsPerReader = 50   // parsed after the churn: slow under -race
	getsPerReader     = 1500 // checked at once: a SHA1 is cheap
	churnersPerTest   = 4
	minOverlapCount   = 5
)

// desktopPropfind is the property set the ownCloud desktop client asks for
// when it discovers a folder (DiscoverySingleDirectoryJob in
// owncloud/client, with the root-only data-fingerprint and the sharing
// share-types), plus the favourite flag other ownCloud clients read.
const desktopPropfind = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getetag/>` +
	`<oc:id/><oc:downloadURL/><oc:dDC/><oc:permissions/><oc:checksums/>` +
	`<oc:share-types/><oc:data-fingerprint/><oc:favorite/><oc:size/>` +
	`</d:prop></d:propfind>`

// TestListingsWhileChildrenChange lists a folder with PROPFIND Depth 1 while
// some of its children are deleted and re-created: every listing must be a
// 207 whose body parses to the end and holds every child that existed
// throughout. (A child that vanished while its properties were read used to
// cut the body off after the 207 had gone out.)
func TestListingsWhileChildrenChange(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/busy", "")
	// The churned children sort after many stable ones, so each listing
	// spends long enough between reading the page and reading their
	// properties for deletions to land in between. Folders are the
	// stable children that are quick to make.
	var stable []string
	for i := range 4 {
		name := fmt.Sprintf("/webdav/busy/stable-%d.txt", i)
		c.expect(http.StatusCreated, "PUT", name, "stays")
		setDeadProp(c, name)
		stable = append(stable, name)
	}
	for i := range 40 {
		name := fmt.Sprintf("/webdav/busy/stable-folder-%03d", i)
		c.expect(http.StatusCreated, "MKCOL", name, "")
		stable = append(stable, name+"/")
	}

	bodies := []struct{ name, body string }{
		{"empty body (allprop)", ""},
		{"allprop", `<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`},
		{"desktop property set", desktopPropfind},
	}
	ctx, cancel := context.WithTimeout(context.Background(), hammerFor)
	defer cancel()
	var churn tally
	var cycles atomic.Int64
	var churners, readers []func(context.Context)
	for w := range churnersPerTest {
		churners = append(churners, func(ctx context.Context) {
			cycles.Add(churnChildren(ctx, c, fmt.Sprintf("/webdav/busy/zz-churn-%d", w), 6, w%2 == 1, &churn))
		})
	}
	// The readers only collect the answers: parsing them (slow under the
	// race detector) waits until the churn is over, so it does not take
	// the CPU the overlap needs.
	var fetchedMu sync.Mutex
	var fetched []listing
	for r := range readersPerTest {
		readers = append(readers, func(ctx context.Context) {
			// Spread over the whole window, so every listing meets churn.
			paced(ctx, listingsPerReader, hammerFor/listingsPerReader, func(i int) {
				b := bodies[(r+i)%len(bodies)]
				l := fetchListing(c, "/webdav/busy/", b.name, b.body)
				fetchedMu.Lock()
				fetched = append(fetched, l)
				fetchedMu.Unlock()
			})
		})
	}
	overlap(ctx, churners, readers)

	churn.mustBeClean(t, "churn requests")
	if cycles.Load() < minOverlapCount || len(fetched) < minOverlapCount {
		t.Fatalf("too little overlap to test anything: %d churn cycles, %d listings", cycles.Load(), len(fetched))
	}
	t.Logf("%d listings during %d delete/re-create cycles", len(fetched), cycles.Load())
	var listings tally
	for _, l := range fetched {
		listings.record(l.kind, l.check(stable))
	}
	listings.mustBeClean(t, "listings")
}

// TestGetWhileOverwritten downloads a file while two writers overwrite it
// with different contents: every body's SHA1 must be the one its
// OC-Checksum header announces, and its ETag the one the PUT of exactly that
// content answered.
func TestGetWhileOverwritten(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	const p = "/webdav/hot.bin"
	var written versions
	written.put(t, c, p, versionContent(0, 0))

	ctx, cancel := context.WithTimeout(context.Background(), hammerFor)
	defer cancel()
	var writes, gets, etags tally
	var seenMu sync.Mutex
	var seen [][2]string // ETag and body SHA1 of every sound GET
	var writers, readers []func(context.Context)
	for w := 1; w <= 2; w++ {
		writers = append(writers, func(ctx context.Context) {
			for v := 1; ctx.Err() == nil; v++ {
				writes.record("PUT", written.tryPut(c, p, versionContent(w, v)))
			}
		})
	}
	for range readersPerTest {
		readers = append(readers, func(ctx context.Context) {
			for i := 0; i < getsPerReader && ctx.Err() == nil; i++ {
				etag, sum, err := checkedGet(c, p)
				gets.record("GET", err)
				if err == nil {
					seenMu.Lock()
					seen = append(seen, [2]string{etag, sum})
					seenMu.Unlock()
				}
			}
		})
	}
	overlap(ctx, writers, readers)

	writes.mustBeClean(t, "PUTs")
	if writes.total < minOverlapCount || gets.total < minOverlapCount {
		t.Fatalf("too little overlap to test anything: %d PUTs, %d GETs", writes.total, gets.total)
	}
	t.Logf("%d GETs during %d PUTs", gets.total, writes.total)
	gets.mustBeClean(t, "GETs (body against OC-Checksum)")
	// A GET may have seen a version before its PUT's answer was recorded,
	// so the ETags are matched once everything is written.
	for _, got := range seen {
		etags.record("GET", written.match(got[0], got[1]))
	}
	etags.mustBeClean(t, "GETs (ETag against the version written)")
}

// overlap runs the background workers (writers) while the foreground ones
// (readers, each bounded in count) run, and stops them once every reader
// has returned or ctx is done.
func overlap(ctx context.Context, background, foreground []func(context.Context)) {
	bgCtx, stop := context.WithCancel(ctx)
	defer stop()
	var bg sync.WaitGroup
	for _, w := range background {
		bg.Add(1)
		go func() {
			defer bg.Done()
			w(bgCtx)
		}()
	}
	var fg sync.WaitGroup
	for _, w := range foreground {
		fg.Add(1)
		go func() {
			defer fg.Done()
			w(ctx)
		}()
	}
	fg.Wait()
	stop()
	bg.Wait()
}

// paced calls fn(0), fn(1)… up to n times, at most once per period, until
// ctx is done.
func paced(ctx context.Context, n int, period time.Duration, fn func(i int)) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		fn(i)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// tally counts outcomes from several goroutines, by kind, and keeps the
// first failures as examples.
type tally struct {
	mu       sync.Mutex
	total    int
	failed   int
	byKind   map[string]*[2]int // failed, total
	examples []string
}

func (t *tally) record(kind string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byKind == nil {
		t.byKind = map[string]*[2]int{}
	}
	if t.byKind[kind] == nil {
		t.byKind[kind] = new([2]int)
	}
	t.total++
	t.byKind[kind][1]++
	if err == nil {
		return
	}
	t.failed++
	t.byKind[kind][0]++
	if len(t.examples) < 3 {
		t.examples = append(t.examples, kind+": "+err.Error())
	}
}

// mustBeClean fails the test with the failure counts and examples.
func (t *tally) mustBeClean(tb testing.TB, what string) {
	tb.Helper()
	if t.failed == 0 {
		return
	}
	var kinds []string
	for kind, n := range t.byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d of %d", kind, n[0], n[1]))
	}
	sort.Strings(kinds)
	tb.Errorf("%d of %d %s broke (%s); the first:\n%s", t.failed, t.total, what,
		strings.Join(kinds, ", "), strings.Join(t.examples, "\n---\n"))
}

// setDeadProp gives a resource a dead property, so listings must read the
// properties of every child.
func setDeadProp(c *client, p string) {
	c.t.Helper()
	c.expect(http.StatusMultiStatus, "PROPPATCH", p, deadPropBody)
}

const deadPropBody = `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:color>red</z:color></d:prop></d:set></d:propertyupdate>`

// churnChildren deletes and re-creates n children named prefix-<i> (files,
// or folders, which are quicker to make) until ctx is done, and returns the
// cycles completed.
func churnChildren(ctx context.Context, c *client, prefix string, n int, folders bool, failures *tally) int64 {
	create := struct {
		method, body string
		ok           []int
	}{http.MethodPut, "comes and goes", []int{http.StatusCreated, http.StatusNoContent}}
	if folders {
		create.method, create.body, create.ok = "MKCOL", "", []int{http.StatusCreated}
	}
	var cycles int64
	for ; ctx.Err() == nil; cycles++ {
		name := fmt.Sprintf("%s-%d", prefix, cycles%int64(n))
		failures.record(http.MethodDelete, expectOneOf(c, http.MethodDelete, name, "", []int{http.StatusNoContent, http.StatusNotFound}))
		failures.record(create.method, expectOneOf(c, create.method, name, create.body, create.ok))
	}
	return cycles
}

// expectOneOf sends a request from any goroutine and checks its status.
func expectOneOf(c *client, method, p, body string, ok []int) error {
	resp, b, err := c.try(method, p, nil, []byte(body))
	if err != nil {
		return err
	}
	for _, status := range ok {
		if resp.StatusCode == status {
			return nil
		}
	}
	return fmt.Errorf("%s %s: status %d\n%s", method, p, resp.StatusCode, b)
}

// listing is the answer to one PROPFIND Depth 1.
type listing struct {
	kind   string // which request body
	status int
	body   []byte
	err    error
}

// fetchListing lists folder with PROPFIND Depth 1 and the given body.
func fetchListing(c *client, folder, kind, body string) listing {
	resp, b, err := c.try("PROPFIND", folder, map[string]string{"Depth": "1", "Content-Type": "application/xml"}, []byte(body))
	l := listing{kind: kind, body: b, err: err}
	if err == nil {
		l.status = resp.StatusCode
	}
	return l
}

// check reports whether the listing is a complete multistatus holding
// every stable child with its ETag.
func (l listing) check(stable []string) error {
	if l.err != nil {
		return l.err
	}
	if l.status != http.StatusMultiStatus {
		return fmt.Errorf("status %d\n%s", l.status, tail(string(l.body), 500))
	}
	responses, err := parseMultistatus(l.body)
	if err != nil {
		return fmt.Errorf("%w (%d bytes, ending %q)", err, len(l.body), tail(string(l.body), 200))
	}
	listed := map[string]bool{}
	for _, r := range responses {
		listed[r.href] = r.props["DAV: getetag"] != ""
	}
	for _, href := range stable {
		if !listed[href] {
			return fmt.Errorf("%s is missing or has no ETag among %d responses", href, len(responses))
		}
	}
	return nil
}

// versions maps the ETag each PUT answered to the SHA1 of what it wrote.
type versions struct {
	mu     sync.Mutex
	sha1Of map[string]string
}

// versionContent is the distinct content writer w writes in round v: small,
// so versions follow each other quickly.
func versionContent(w, v int) []byte {
	line := fmt.Sprintf("writer %d version %d\n", w, v)
	return []byte(strings.Repeat(line, (4<<10)/len(line)))
}

func (vs *versions) put(t testing.TB, c *client, p string, content []byte) {
	t.Helper()
	if err := vs.tryPut(c, p, content); err != nil {
		t.Fatal(err)
	}
}

func (vs *versions) tryPut(c *client, p string, content []byte) error {
	resp, b, err := c.try(http.MethodPut, p, nil, content)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("PUT %s: status %d\n%s", p, resp.StatusCode, b)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		return fmt.Errorf("PUT %s: no ETag", p)
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.sha1Of == nil {
		vs.sha1Of = map[string]string{}
	}
	vs.sha1Of[etag] = sha1Hex(content)
	return nil
}

// match checks that a GET's ETag names the version whose content it sent.
func (vs *versions) match(etag, sum string) error {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	want, ok := vs.sha1Of[etag]
	switch {
	case !ok:
		return fmt.Errorf("ETag %s was never answered to a PUT", etag)
	case want != sum:
		return fmt.Errorf("ETag %s belongs to content %s, the body sent was %s", etag, want, sum)
	}
	return nil
}

// checkedGet downloads p and checks the body against its OC-Checksum; it
// returns the ETag and the body's SHA1.
func checkedGet(c *client, p string) (etag, sum string, err error) {
	resp, b, err := c.try(http.MethodGet, p, nil, nil)
	if err != nil {
		return "", "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("status %d\n%s", resp.StatusCode, b)
	}
	sum = sha1Hex(b)
	if got := resp.Header.Get("OC-Checksum"); !strings.EqualFold(got, "SHA1:"+sum) {
		return "", "", fmt.Errorf("OC-Checksum %q, body SHA1:%s (ETag %s)", got, sum, resp.Header.Get("ETag"))
	}
	return resp.Header.Get("ETag"), sum, nil
}

func sha1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}
