package integration

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// crash is the moment the durability test kills Caddy, as the uploading
// goroutines see it: they count the PUT body bytes they send and the PUTs
// acknowledged; Caddy dies once the bytes reach at and at least one PUT
// was acknowledged (without that an early kill would only find uploads in
// flight), and whatever they send is cut off there.
type crash struct {
	at       int64
	progress atomic.Int64
	acks     atomic.Int64
	due      chan struct{} // closed when it is time to kill
	dueOnce  sync.Once
	killed   atomic.Bool   // set just before the kill: later errors are the kill's
	down     chan struct{} // closed once Caddy is dead: the uploaders stop
	downOnce sync.Once
}

// neverReached is a progress no upload reaches: a round that is not cut off.
const neverReached = -1

func newCrash(at int64) *crash {
	return &crash{at: at, due: make(chan struct{}), down: make(chan struct{})}
}

// sent counts n more bytes sent.
func (cr *crash) sent(n int64) {
	cr.progress.Add(n)
	cr.checkDue()
}

// acknowledged counts a PUT acknowledged.
func (cr *crash) acknowledged() {
	cr.acks.Add(1)
	cr.checkDue()
}

func (cr *crash) checkDue() {
	if cr.at != neverReached && cr.progress.Load() >= cr.at && cr.acks.Load() > 0 {
		cr.dueOnce.Do(func() { close(cr.due) })
	}
}

// kill kills Caddy, as a crash would, and stops the uploaders.
func (cr *crash) kill(s *server) {
	cr.killed.Store(true)
	s.kill()
	cr.stopUploaders()
}

// stopUploaders closes down; it is safe to call more than once.
func (cr *crash) stopUploaders() { cr.downOnce.Do(func() { close(cr.down) }) }

// await waits until progress reaches n; it is false when Caddy went down
// first, and waits for that when n is neverReached.
func (cr *crash) await(n int64) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for n == neverReached || cr.progress.Load() < n {
		select {
		case <-cr.down:
			return false
		case <-tick.C:
		}
	}
	return true
}

// expected says whether a failed request may have failed because of the
// kill.
func (cr *crash) expected(err error) bool { return err != nil && cr.killed.Load() }

// errCrashed ends the body of a request that waited for bytes the crash
// cut off.
var errCrashed = errors.New("caddy went down while the body was held back")

// gate is an empty part of a request body that holds the rest back until
// the PUTs have sent at bytes.
type gate struct {
	cr *crash
	at int64
}

func (g gate) Read([]byte) (int, error) {
	if !g.cr.await(g.at) {
		return 0, errCrashed
	}
	return 0, io.EOF
}

// countedBody is a PUT body that digests what the transport has read of
// it, since only a body sent whole can have landed, and reports how much
// to progress when set.
type countedBody struct {
	r        io.Reader
	progress func(n int64)

	mu   sync.Mutex
	sent int64
	hash hash.Hash
}

func newCountedBody(r io.Reader, progress func(n int64)) *countedBody {
	return &countedBody{r: r, progress: progress, hash: sha1.New()}
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.mu.Lock()
	b.sent += int64(n)
	b.hash.Write(p[:n])
	b.mu.Unlock()
	if b.progress != nil {
		b.progress(int64(n))
	}
	return n, err
}

// whole is the digest of the bytes sent so far.
func (b *countedBody) whole() digest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return digest{size: b.sent, sha1: hex.EncodeToString(b.hash.Sum(nil))}
}

// putJob is one PUT of a round: a new file, or a new version of a file
// whose acknowledged content is was.
type putJob struct {
	path    string // escaped
	was     *digest
	content stream

	// Set by the uploader; read once the round has ended.
	body   *countedBody // nil when the PUT was never sent
	status int          // 0 when no answer came
	failed error        // a failure the crash does not explain
}

// wantStatus is the acknowledgement of the PUT.
func (j *putJob) wantStatus() int {
	if j.was != nil {
		return http.StatusNoContent
	}
	return http.StatusCreated
}

func (j *putJob) acknowledged() bool { return j.status == j.wantStatus() }

// sentWhole is the digest of the new version when all of it was sent, so
// the server may have stored it without answering.
func (j *putJob) sentWhole() (digest, bool) {
	if j.body == nil {
		return digest{}, false
	}
	d := j.body.whole()
	return d, d.size == j.content.size
}

// allowed is what the file may hold after the crash: exactly the new
// version once acknowledged (and nothing is right if that was before all
// of it was sent); otherwise the old one (or nothing, for a new file), or
// the new one if it was sent whole.
func (j *putJob) allowed() (contents []digest, absent bool) {
	if j.acknowledged() {
		if d, whole := j.sentWhole(); whole {
			return []digest{d}, false
		}
		return nil, false
	}
	if j.was != nil {
		contents = append(contents, *j.was)
	}
	if d, ok := j.sentWhole(); ok {
		contents = append(contents, d)
	}
	return contents, j.was == nil
}

// stored is a file with acknowledged content.
type stored struct {
	path    string // escaped
	content digest
}

// planPuts prepares n PUTs of random sizes from minSize to maxSize below
// folder (escaped, ending in /) named prefix-NNN.bin; the files to replace
// are spread evenly among them.
func planPuts(t testing.TB, folder, prefix string, n int, minSize, maxSize int64, replace []stored) []*putJob {
	jobs := make([]*putJob, n)
	for i := range jobs {
		jobs[i] = &putJob{path: fmt.Sprintf("%s%s-%03d.bin", folder, prefix, i), content: newStream(t, minSize+rand.Int64N(maxSize-minSize+1))}
	}
	for k, old := range replace {
		j := jobs[k*n/len(replace)]
		j.path, j.was = old.path, &old.content
	}
	return jobs
}

// totalSize is the number of body bytes of jobs.
func totalSize(jobs []*putJob) int64 {
	var n int64
	for _, j := range jobs {
		n += j.content.size
	}
	return n
}

// runPuts sends jobs, uploaders at a time, until all are sent or Caddy
// goes down; their bytes and acknowledgements count towards the crash. The returned
// channel is closed when every uploader has returned.
func runPuts(c *client, cr *crash, jobs []*putJob, uploaders int) <-chan struct{} {
	return sendJobs(jobs, uploaders, func(i int) bool {
		select {
		case <-cr.down:
			return false
		default:
		}
		if jobs[i].put(c, cr, cr.sent) {
			cr.acknowledged()
		}
		return true
	})
}

// runPacedPuts sends jobs, uploaders at a time, each once the crash's
// progress reached its share of the bytes before the kill: they are
// spread over the time before it, and some are in flight at the kill.
func runPacedPuts(c *client, cr *crash, jobs []*putJob, uploaders int) <-chan struct{} {
	return sendJobs(jobs, uploaders, func(i int) bool {
		if !cr.await(cr.at * int64(i) / int64(len(jobs))) {
			return false
		}
		jobs[i].put(c, cr, nil)
		return true
	})
}

// sendJobs calls send with the index of each job in turn, uploaders at a
// time, until it returns false; the returned channel is closed when every
// uploader has returned.
func sendJobs(jobs []*putJob, uploaders int, send func(i int) bool) <-chan struct{} {
	queue := make(chan int, len(jobs))
	for i := range jobs {
		queue <- i
	}
	close(queue)
	var wg sync.WaitGroup
	for range uploaders {
		wg.Go(func() {
			for i := range queue {
				if !send(i) {
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// put sends the PUT, records its outcome and says whether it was
// acknowledged; progress, when set, counts the bytes sent.
func (j *putJob) put(c *client, cr *crash, progress func(n int64)) bool {
	j.body = newCountedBody(j.content.section(0, j.content.size), progress)
	resp, err := c.sendStream(http.MethodPut, j.path, nil, j.body, j.content.size)
	if err != nil {
		if !cr.expected(err) {
			j.failed = err
		}
		return false
	}
	body := drainAnswer(resp)
	j.status = resp.StatusCode
	// A dead server answers nothing: any other answer is a failure.
	if !j.acknowledged() {
		j.failed = fmt.Errorf("PUT %s: %d, want %d\n%s", j.path, resp.StatusCode, j.wantStatus(), body)
		return false
	}
	return true
}
