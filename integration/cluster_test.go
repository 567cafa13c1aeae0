package integration

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The cluster tests: two nodes on one PostgreSQL database and one S3
// bucket must behave as one server, whichever node a request reaches and
// whichever node dies.
const (
	clusterKillPuts    = 50
	clusterKillMaxSize = 3 << 20
	clusterKillFolder  = "/webdav/kill/"
	// clusterKillPercent of the PUTs' bytes are sent when a node dies:
	// the small PUTs are acknowledged by then, the large ones in flight.
	clusterKillPercent = 30

	clusterWriterPuts = 100
	clusterWriters    = 8
	clusterBothFolder = "/webdav/both/"
)

// TestClusterKillNodeDuringUploads sends 50 parallel PUTs through the load
// balancer and a TUS upload to node A, and kills node A while they are in
// flight. Node B then serves every acknowledged PUT whole and nothing of
// the others but whole files, lists just that, and takes over the TUS
// upload from the offset node A acknowledged; node A, started again, lists
// the same.
func TestClusterKillNodeDuringUploads(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{davspaces: []string{"depth_infinity"}})
	lb := newDurabilityClient(t, c.lb.URL)
	a, b := newDurabilityClient(t, c.nodes[0].URL), newDurabilityClient(t, c.nodes[1].URL)
	lb.expect(http.StatusCreated, "MKCOL", clusterKillFolder, "")
	jobs := planPuts(t, clusterKillFolder, "put", clusterKillPuts, 1<<10, clusterKillMaxSize, nil)
	tus := startTusRun(t, a, clusterKillFolder, "tus.bin")

	cr := newCrash(totalSize(jobs) * clusterKillPercent / 100)
	t.Cleanup(cr.stopUploaders)
	puts := sendJobs(jobs, clusterKillPuts, func(i int) bool {
		if jobs[i].putThroughLB(lb, cr) {
			cr.acknowledged()
		}
		return true
	})
	tusDone := tus.duringCrash(a, cr)
	select {
	case <-cr.due:
	case <-puts:
		t.Fatalf("the PUTs ended after %d of %d bytes, before the kill at %d", cr.progress.Load(), totalSize(jobs), cr.at)
	}
	cr.kill(c.nodes[0].server)
	<-puts
	<-tusDone
	wantSomeCutOff(t, jobs)

	present := map[string]digest{}
	checkPuts(t, b, jobs, present)
	folders := []string{"/webdav/", clusterKillFolder}
	checkWalk(t, b, "/webdav/", folders, present)
	target := clusterKillFolder + "tus.bin"
	tus.resume(t, b, target)
	present[target] = tus.content.digest()

	c.nodes[0].start(t)
	checkWalk(t, a, "/webdav/", folders, present)
}

// putThroughLB is put for a PUT sent through the load balancer, which
// outlives the node: a node killed in the middle of a PUT shows as 502 Bad
// Gateway rather than as a broken connection.
func (j *putJob) putThroughLB(c *client, cr *crash) bool {
	j.body = newCountedBody(j.content.section(0, j.content.size), cr.sent)
	resp, err := c.sendStream(http.MethodPut, j.path, nil, j.body, j.content.size)
	if err != nil {
		j.failed = fmt.Errorf("the load balancer did not answer: %w", err)
		return false
	}
	body := drainAnswer(resp)
	j.status = resp.StatusCode
	switch {
	case j.acknowledged():
		return true
	case resp.StatusCode == http.StatusBadGateway && cr.killed.Load():
		return false
	}
	j.failed = fmt.Errorf("PUT %s: %d, want %d\n%s", j.path, resp.StatusCode, j.wantStatus(), body)
	return false
}

// wantSomeCutOff fails a test whose kill came too late to cut off any PUT,
// which would have checked nothing of a node dying.
func wantSomeCutOff(t *testing.T, jobs []*putJob) {
	t.Helper()
	for _, j := range jobs {
		if !j.acknowledged() {
			return
		}
	}
	t.Errorf("all %d PUTs were acknowledged: the kill cut none off", len(jobs))
}

// TestClusterWritersOnBothNodes has both nodes write 100 files each into
// one folder at once. Then the folder's and the space's oc:size are the sum
// of the files, every file has an etag of its own, and both nodes list the
// same.
func TestClusterWritersOnBothNodes(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	a, b := newDurabilityClient(t, c.nodes[0].URL), newDurabilityClient(t, c.nodes[1].URL)
	a.expect(http.StatusCreated, "MKCOL", clusterBothFolder, "")
	jobsA := planPuts(t, clusterBothFolder, "a", clusterWriterPuts, 0, 64<<10, nil)
	jobsB := planPuts(t, clusterBothFolder, "b", clusterWriterPuts, 0, 64<<10, nil)
	never := newCrash(neverReached)
	doneA, doneB := runPuts(a, never, jobsA, clusterWriters), runPuts(b, never, jobsB, clusterWriters)
	<-doneA
	<-doneB
	jobs := slices.Concat(jobsA, jobsB)
	for _, j := range jobs {
		if !j.acknowledged() {
			t.Errorf("%s: %s: %v", j.path, j.describe(), j.failed)
		}
	}
	sum := strconv.FormatInt(totalSize(jobs), 10)

	listings := []folderListing{listFolder(t, a, clusterBothFolder), listFolder(t, b, clusterBothFolder)}
	wantFiles(t, listings[0], jobs)
	if got := listings[0].self.size; got != sum {
		t.Errorf("%s: oc:size %s, want the sum of its files, %s", clusterBothFolder, got, sum)
	}
	if got := a.prop("/webdav/", ocNS, "size"); got != sum {
		t.Errorf("/webdav/: oc:size %s, want the sum of the files, %s", got, sum)
	}
	if diff := listings[0].diff(listings[1]); diff != "" {
		t.Errorf("the nodes list %s differently: %s", clusterBothFolder, diff)
	}
}

// entryProps are what the cluster tests compare of a resource.
type entryProps struct {
	etag, size, length string
}

// folderListing is a PROPFIND Depth 1 of a folder: the folder and its
// members by href.
type folderListing struct {
	self    entryProps
	members map[string]entryProps
}

const listingProps = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:getetag/><oc:size/><d:getcontentlength/></d:prop></d:propfind>`

func listFolder(t testing.TB, c *client, folder string) folderListing {
	t.Helper()
	l := folderListing{members: map[string]entryProps{}}
	for _, r := range c.propfind(folder, "1", listingProps) {
		e := entryProps{etag: r.props["DAV: getetag"], size: r.props[ocNS+" size"], length: r.props["DAV: getcontentlength"]}
		if r.href == folder {
			l.self = e
			continue
		}
		l.members[r.href] = e
	}
	return l
}

// diff describes the first differences from other, "" for none.
func (l folderListing) diff(other folderListing) string {
	if l.self != other.self {
		return fmt.Sprintf("the folder is %+v on one node, %+v on the other", l.self, other.self)
	}
	for href, e := range l.members {
		if o, ok := other.members[href]; !ok || o != e {
			return fmt.Sprintf("%s is %+v on one node, %+v (listed: %t) on the other", href, e, o, ok)
		}
	}
	if len(l.members) != len(other.members) {
		return fmt.Sprintf("%d members on one node, %d on the other", len(l.members), len(other.members))
	}
	return ""
}

// wantFiles checks that l lists exactly the files of jobs, with their
// sizes, each with an etag no other file has.
func wantFiles(t testing.TB, l folderListing, jobs []*putJob) {
	t.Helper()
	etags := map[string]string{}
	for _, j := range jobs {
		e, ok := l.members[j.path]
		switch {
		case !ok:
			t.Errorf("%s is not listed", j.path)
			continue
		case e.length != strconv.FormatInt(j.content.size, 10):
			t.Errorf("%s is listed with %s bytes, want %d", j.path, e.length, j.content.size)
		case e.etag == "":
			t.Errorf("%s is listed without an etag", j.path)
		}
		if other, dup := etags[e.etag]; dup {
			t.Errorf("%s and %s have the same etag %s", other, j.path, e.etag)
		}
		etags[e.etag] = j.path
	}
	if len(l.members) != len(jobs) {
		t.Errorf("%d members listed, want %d", len(l.members), len(jobs))
	}
}

// TestClusterNodesAgree: what one node does, the other knows at once. A
// file written through node A is listed by node B with the etag A
// answered; a lock taken through A refuses B's writes without its token
// until it is unlocked, and its token works through B.
func TestClusterNodesAgree(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	a, b := newClient(t, c.nodes[0].URL, "einstein"), newClient(t, c.nodes[1].URL, "einstein")
	const p = "/webdav/shared.txt"

	resp, _ := a.expect(http.StatusCreated, http.MethodPut, p, "written through A")
	if etag, listed := resp.Header.Get("ETag"), listFolder(t, b, "/webdav/").members[p].etag; listed != etag {
		t.Errorf("B lists %s with etag %q, A answered the PUT with %q", p, listed, etag)
	}

	token := a.lock(http.StatusOK, p, "exclusive", "0")
	b.expect(http.StatusLocked, http.MethodPut, p, "B without the token")
	if got := b.activeLockTokens(p); len(got) != 1 || got[0] != token {
		t.Errorf("B reports the locks %q on %s, want A's %s", got, p, token)
	}
	b.expect(http.StatusNoContent, http.MethodPut, p, "B with A's token", "If", "(<"+token+">)")
	a.expect(http.StatusLocked, http.MethodPut, p, "A without the token")
	a.expect(http.StatusNoContent, "UNLOCK", p, "", "Lock-Token", "<"+token+">")
	b.expect(http.StatusNoContent, http.MethodPut, p, "B after the unlock")
	if got := string(mustGetFrom(t, a, p)); got != "B after the unlock" {
		t.Errorf("A reads %q from %s, want B's last write", got, p)
	}
}

// mustGetFrom downloads p (escaped) through c.
func mustGetFrom(t testing.TB, c *client, p string) []byte {
	t.Helper()
	_, body := c.expect(http.StatusOK, http.MethodGet, p, "")
	return []byte(body)
}

// TestClusterLinksNameTheLoadBalancer: behind a load balancer that ends
// TLS, a node sees plain HTTP, yet the absolute URLs it answers must name
// what the client talks to: a TUS upload's Location is on the load
// balancer's https origin (the node trusts its X-Forwarded-Proto).
func TestClusterLinksNameTheLoadBalancer(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{tls: true})
	lb := &client{t: t, base: c.lb.URL, user: "einstein", http: caddyCAClient(t, c.lb)}
	resp, body, err := lb.tusCreate("/webdav/", "linked.bin", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /webdav/ (TUS): %d, want 201\n%s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	if strings.Contains(loc, "://") && !strings.HasPrefix(loc, c.lb.URL+"/") {
		t.Errorf("TUS Location %q, want a URL on the load balancer, %s", loc, c.lb.URL)
	}
	lb.expect(http.StatusNoContent, http.MethodPatch, uploadPath(t, c.lb.URL, loc), "0123456789",
		"Tus-Resumable", tusResumable, "Upload-Offset", "0", "Content-Type", "application/offset+octet-stream")
}

// TestClusterNodesStartTogether starts the nodes of fresh clusters at the
// same moment, as a deployment starts its replicas: both set up the empty
// database and declare the spaces of the configuration at once, and both
// must come up. A few rounds, since a race shows only now and then.
func TestClusterNodesStartTogether(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			c := startCluster(t, clusterOptions{together: true})
			for _, n := range c.nodes {
				newClient(t, n.URL, "einstein").expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
			}
		})
	}
}
