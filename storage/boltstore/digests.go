package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Later digests (storage.LaterDigests): a single PUT hashes only the
// algorithm its client announced while the body streams, so that the
// answer waits for no digest nobody asked for. Once the content file is
// committed, a job of the digester reads it back (from the page cache, as
// a rule) and records the missing digests in the file's record, under a
// bound of the store's: Options.DigestWorkers jobs at once. The commit is
// as durable as ever; a digest a crash left missing is computed again
// after the restart (queueMissingDigests), and a record whose content
// changed meanwhile is left alone (digestJob.blob).

// DefaultDigestWorkers is how many contents have their later digests
// computed at once when Options.DigestWorkers is 0. Each takes one core
// at most (checksum.Compute), so that the next requests keep the others.
const DefaultDigestWorkers = 1

// digestJob is a content file whose record lacks digests.
type digestJob struct {
	spaceID, nodeID string
	// blob is the content file the digests are of: a record that names
	// another one by the time they are known has a newer content, and
	// keeps its own digests.
	blob string
}

// digester runs digest jobs on a fixed number of goroutines, in the
// order they were queued.
type digester struct {
	mu      sync.Mutex
	cond    *sync.Cond // signalled when a job is queued, finished, or the store closes
	queue   []digestJob
	running int
	closed  bool
	// pending maps the content file of each job queued or running to a
	// channel closed when it is done, for AwaitDigests.
	pending map[string]chan struct{}
	wg      sync.WaitGroup
}

// startDigester starts workers goroutines running jobs with run.
func startDigester(workers int, run func(digestJob)) *digester {
	d := &digester{pending: map[string]chan struct{}{}}
	d.cond = sync.NewCond(&d.mu)
	for range max(workers, 1) {
		d.wg.Go(func() {
			for {
				job, ok := d.next()
				if !ok {
					return
				}
				run(job)
				d.finish(job)
			}
		})
	}
	return d
}

// add queues job; it never blocks the commit that calls it.
func (d *digester) add(job digestJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // the next open finds the digests missing
	}
	if _, queued := d.pending[job.blob]; queued {
		return
	}
	d.pending[job.blob] = make(chan struct{})
	d.queue = append(d.queue, job)
	d.cond.Broadcast()
}

// next waits for a job; ok is false once the digester is closed.
func (d *digester) next() (digestJob, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.queue) == 0 && !d.closed {
		d.cond.Wait()
	}
	if d.closed {
		return digestJob{}, false
	}
	job := d.queue[0]
	d.queue[0] = digestJob{}
	d.queue = d.queue[1:]
	d.running++
	return job, true
}

func (d *digester) finish(job digestJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	close(d.pending[job.blob])
	delete(d.pending, job.blob)
	d.cond.Broadcast()
}

// done returns a channel closed once the job of content file blob is done;
// nil when none is queued or running.
func (d *digester) done(blob string) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pending[blob]
}

// take removes the job of content file blob from the queue, for a caller
// that would wait for it to run it at once itself, and then call finish;
// ok is false when no such job is queued (none, or one running).
func (d *digester) take(blob string) (job digestJob, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.queue, func(j digestJob) bool { return j.blob == blob })
	if i < 0 {
		return digestJob{}, false
	}
	job = d.queue[i]
	d.queue = slices.Delete(d.queue, i, i+1)
	d.running++
	return job, true
}

// idle waits until no job is queued or running.
func (d *digester) idle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for (len(d.queue) > 0 || d.running > 0) && !d.closed {
		d.cond.Wait()
	}
}

// close drops the queued jobs, which the next open finds again, and
// waits for the running ones.
func (d *digester) close() {
	d.mu.Lock()
	for _, job := range d.queue {
		close(d.pending[job.blob])
		delete(d.pending, job.blob)
	}
	d.closed, d.queue = true, nil
	d.cond.Broadcast()
	d.mu.Unlock()
	d.wg.Wait()
}

// HashInline makes the upload compute only the digests of algs while its
// bytes stream (storage.LaterDigests); the store computes the others after
// the commit.
func (u *upload) HashInline(algs ...checksum.Algorithm) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.size > 0 || u.finished {
		return // too late: every digest is under way
	}
	w, err := checksum.NewWriterOf(algs...)
	if err != nil {
		return // an algorithm the store does not know: compute them all
	}
	u.sum, u.later = w, true
}

// completeInline adds to content, kept inline, the digests its upload left
// for later: a small content costs less to hash now than to queue.
func completeInline(content *newContent) {
	missing := content.sums.Missing()
	if len(missing) == 0 {
		return
	}
	sums, _ := checksum.Compute(bytes.NewReader(content.inline), missing...)
	content.sums = content.sums.Merge(sums)
}

// queueDigests has the digests n's record lacks computed, when it names
// a content file.
func (s *Store) queueDigests(n rec) {
	if n.Blob == "" || n.Checksums.Complete() || s.digests == nil {
		return
	}
	s.queueJob(digestJob{spaceID: n.SpaceID, nodeID: n.ID, blob: n.Blob})
}

// queueJob queues job when the store computes digests later.
func (s *Store) queueJob(job digestJob) {
	if s.digests != nil {
		s.digests.add(job)
	}
}

// runDigestJob computes the digests the record of job's node lacks and
// records them, unless its content changed meanwhile. A failure is logged:
// the digests stay missing until the next open tries again.
func (s *Store) runDigestJob(job digestJob) {
	if err := s.completeDigests(job); err != nil {
		s.log.Warn("cannot compute the digests of a content", zap.String("node", job.nodeID), zap.String("blob", job.blob), zap.Error(err))
	}
}

func (s *Store) completeDigests(job digestJob) error {
	r, current, err := s.digestTarget(job)
	if err != nil || !current || r.Checksums.Complete() {
		return err
	}
	f, err := os.Open(s.blobPath(job.blob))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // replaced and removed meanwhile
	}
	if err != nil {
		return fmt.Errorf("open content: %w", err)
	}
	defer f.Close()
	sums, err := checksum.Compute(closingReader{f, s.closing}, r.Checksums.Missing()...)
	if errors.Is(err, errClosing) {
		return nil // the next open computes them
	}
	if err != nil {
		return err
	}
	return s.updateGrouped(func(t *txn) error {
		r, current, err := t.digestTarget(job)
		if err != nil || !current {
			return err
		}
		r.Checksums = r.Checksums.Merge(sums)
		return t.putNode(&r)
	})
}

var errClosing = errors.New("the store is closing")

// closingReader reads r until closing is closed, so that a store closing
// waits for no digest of a big file.
type closingReader struct {
	r       io.Reader
	closing <-chan struct{}
}

func (c closingReader) Read(p []byte) (int, error) {
	select {
	case <-c.closing:
		return 0, errClosing
	default:
		return c.r.Read(p)
	}
}

// digestTarget returns the record job is for, and whether it still names
// job's content file.
func (s *Store) digestTarget(job digestJob) (r rec, current bool, err error) {
	err = s.view(func(t *txn) error {
		r, current, err = t.digestTarget(job)
		return err
	})
	return r, current, err
}

func (t *txn) digestTarget(job digestJob) (rec, bool, error) {
	r, err := t.nodeIn(job.spaceID, job.nodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return rec{}, false, nil
	}
	if err != nil {
		return rec{}, false, err
	}
	return r, r.Blob == job.blob, nil
}

// queueMissingDigests queues a job for every file whose content file's
// digests are not all recorded: those a crash or a close left to compute.
func (s *Store) queueMissingDigests() error {
	var jobs []digestJob
	// It reads every content's record: as a walk, so that a database of
	// millions of files leaves no more of its mapping resident.
	err := s.viewWalk(func(t *txn) error {
		return t.blobs().raw().ForEach(func(blob, nodeID []byte) error {
			t.walk.readRecord()
			r, ok, err := t.node(string(nodeID))
			if err != nil || !ok || r.Blob != string(blob) || r.Checksums.Complete() {
				return err
			}
			jobs = append(jobs, digestJob{spaceID: r.SpaceID, nodeID: r.ID, blob: r.Blob})
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("find missing digests: %w", err)
	}
	for _, job := range jobs {
		s.digests.add(job)
	}
	if len(jobs) > 0 {
		s.log.Info("computing the digests a restart left missing", zap.Int("contents", len(jobs)))
	}
	return nil
}

// AwaitDigests waits until the digests of the content of file nodeID that
// the store is computing are recorded, or ctx ends, and returns the node
// as it is then (storage.DigestWaiter). It returns at once for a node
// whose digests are all known or not being computed. A job the digester
// has not started yet is run on the caller's goroutine: after a restart
// that left many to compute, a listing then has each file's digests in the
// time it takes to read that file, not the whole queue before it.
func (s *Store) AwaitDigests(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	var r rec
	if err := s.view(func(t *txn) (err error) {
		r, err = t.nodeIn(spaceID, nodeID)
		return err
	}); err != nil {
		return storage.Node{}, fmt.Errorf("await digests: %w", err)
	}
	if r.Blob == "" || r.Checksums.Complete() || s.digests == nil {
		return r.Node, nil
	}
	// A job still queued is run now, by the caller, who would wait for
	// it anyway; one under way is waited for.
	if job, ok := s.digests.take(r.Blob); ok {
		s.runDigestJob(job)
		s.digests.finish(job)
	}
	done := s.digests.done(r.Blob)
	if done == nil {
		// Not queued, or done since the record was read: read it again.
		return s.Node(ctx, spaceID, nodeID)
	}
	select {
	case <-done:
		return s.Node(ctx, spaceID, nodeID)
	case <-ctx.Done():
		return r.Node, nil // what is known
	}
}

// WaitDigests waits until every digest queued so far is computed: for
// tests and benchmarks, which compare them.
func (s *Store) WaitDigests() {
	if s.digests != nil {
		s.digests.idle()
	}
}
