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

// NoLaterDigests as Options.DigestWorkers has uploads compute every digest
// while their bytes stream, as before the digester: for a node that would
// rather spend the cores during the upload than have a listing wait.
const NoLaterDigests = -1

// digestJob is a content file whose record lacks digests.
type digestJob struct {
	spaceID, nodeID string
	// blob is the content file the digests are of: a record that names
	// another one by the time they are known has a newer content, and
	// keeps its own digests.
	blob string
}

// digester runs digest jobs on a fixed number of goroutines, in the
// order they were queued, except that a job a request waits for goes
// before those nobody waits for.
type digester struct {
	mu    sync.Mutex
	cond  *sync.Cond // signalled when a job is queued, finished, or the store closes
	queue []digestJob
	// urgent is how many jobs at the head of queue a request waits for
	// (hurry), in the order they were first waited for.
	urgent  int
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
	d.urgent = max(d.urgent-1, 0)
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

// hurry moves the queued job of content file blob ahead of the jobs
// nobody waits for, behind those waited for before it: a request waiting
// for one file's digests then waits for that file's read, not for the
// whole queue a restart left, and the hashing stays within the workers'
// bound.
func (d *digester) hurry(blob string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.queue, func(j digestJob) bool { return j.blob == blob })
	if i < d.urgent {
		return // not queued (running, or done), or already ahead
	}
	job := d.queue[i]
	copy(d.queue[d.urgent+1:i+1], d.queue[d.urgent:i])
	d.queue[d.urgent] = job
	d.urgent++
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
	d.closed, d.queue, d.urgent = true, nil, 0
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
	if u.size > 0 || u.finished || !u.s.laterDigests {
		return // too late, or not wanted: every digest is under way
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

// completeDigests computes the digests the records that have job's
// content file lack (digestHolders) and records them in every one.
func (s *Store) completeDigests(job digestJob) error {
	var h digestHolders
	if err := s.view(func(t *txn) (err error) {
		h, err = t.digestHolders(job)
		return err
	}); err != nil {
		return err
	}
	missing := h.missing()
	if len(missing) == 0 {
		return nil
	}
	f, err := os.Open(s.blobPath(job.blob))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // replaced and removed meanwhile
	}
	if err != nil {
		return fmt.Errorf("open content: %w", err)
	}
	defer f.Close()
	sums, err := checksum.Compute(closingReader{f, s.closing}, missing...)
	if errors.Is(err, errClosing) {
		return nil // the next open computes them
	}
	if err != nil {
		return err
	}
	return s.updateGrouped(func(t *txn) error {
		h, err := t.digestHolders(job)
		if err != nil {
			return err
		}
		return h.record(t, sums)
	})
}

// digestHolders are the records that have a job's content file: the
// file's own, in the space or in its trash, unless it has a newer content
// by now, and those of its versions, one made when a newer content
// replaced it before its digests were known among them. A copy has a
// content file of its own, and a job of its own (copyNode).
type digestHolders struct {
	job      digestJob
	file     *rec
	versions []versionRec
}

func (t *txn) digestHolders(job digestJob) (digestHolders, error) {
	h := digestHolders{job: job}
	r, ok, err := t.node(job.nodeID)
	if err != nil {
		return h, err
	}
	if ok && r.Blob == job.blob && ownSpace(r.SpaceID) == job.spaceID {
		h.file = &r
	}
	vs, err := t.fileVersions(job.spaceID, job.nodeID)
	if err != nil {
		return h, err
	}
	for _, v := range vs {
		if v.File.Blob == job.blob {
			h.versions = append(h.versions, v)
		}
	}
	return h, nil
}

// missing returns the algorithms whose digest one of the records lacks.
func (h digestHolders) missing() []checksum.Algorithm {
	var all []checksum.Sums
	if h.file != nil {
		all = append(all, h.file.Checksums)
	}
	for _, v := range h.versions {
		all = append(all, v.File.Checksums)
	}
	var out []checksum.Algorithm
	for _, alg := range checksum.Algorithms() {
		if slices.ContainsFunc(all, func(s checksum.Sums) bool { return slices.Contains(s.Missing(), alg) }) {
			out = append(out, alg)
		}
	}
	return out
}

// record adds sums, the digests of the content, to every record that
// lacks one.
func (h digestHolders) record(t *txn, sums checksum.Sums) error {
	if f := h.file; f != nil && f.Checksums.Merge(sums) != f.Checksums {
		f.Checksums = f.Checksums.Merge(sums)
		if err := t.putNode(f); err != nil {
			return err
		}
	}
	for _, v := range h.versions {
		if v.File.Checksums.Merge(sums) == v.File.Checksums {
			continue
		}
		v.File.Checksums = v.File.Checksums.Merge(sums)
		if err := t.versions().Put(versionRecKey(h.job.spaceID, h.job.nodeID, v.Key), encodeVersion(&v)); err != nil {
			return err
		}
	}
	return nil
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

// queueMissingDigests queues a job for every content file whose digests
// a record of it (a file's, a version's) lacks: those a crash or a close
// left to compute.
func (s *Store) queueMissingDigests() error {
	var jobs []digestJob
	// It reads every content's record: as a walk, so that a database of
	// millions of files leaves no more of its mapping resident.
	err := s.viewWalk(func(t *txn) error {
		return t.blobs().raw().ForEach(func(blob, nodeID []byte) error {
			t.walk.readRecord()
			r, ok, err := t.node(string(nodeID))
			if err != nil || !ok {
				return err
			}
			job := digestJob{spaceID: ownSpace(r.SpaceID), nodeID: r.ID, blob: string(blob)}
			if r.Blob == job.blob {
				if !r.Checksums.Complete() {
					jobs = append(jobs, job)
				}
				return nil
			}
			// A version's content.
			h, err := t.digestHolders(job)
			if err != nil || len(h.missing()) == 0 {
				return err
			}
			jobs = append(jobs, job)
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
// whose digests are all known or not being computed. It hashes nothing
// itself: every read of a content runs within the digester's bound, which
// takes the file's job ahead of those nobody waits for. After a restart
// that left many jobs, those waited for still queue behind the ones
// running, so that a wait may end with only the digests known.
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
	done := s.digests.done(r.Blob)
	if done == nil {
		// Not queued, or done since the record was read: read it again.
		return s.Node(ctx, spaceID, nodeID)
	}
	s.digests.hurry(r.Blob)
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
