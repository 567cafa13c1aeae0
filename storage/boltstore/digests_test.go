package boltstore

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// putLater uploads content as name in the root, hashing only algs inline.
func (f *fixture) putLater(t *testing.T, name, content string, algs ...checksum.Algorithm) storage.Node {
	t.Helper()
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Discard()
	storage.HashInline(u, algs...)
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	n, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// settled returns file n once the digester has computed the digests its
// upload left for later.
func (f *fixture) settled(t *testing.T, n storage.Node) storage.Node {
	t.Helper()
	f.s.WaitDigests()
	return f.node(t, n.ID)
}

func allSums(t *testing.T, content string) checksum.Sums {
	t.Helper()
	s, err := checksum.Compute(strings.NewReader(content), checksum.Algorithms()...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLaterDigestsRecorded: a content file committed with one digest has
// the others recorded by the digester, without a new etag.
func TestLaterDigestsRecorded(t *testing.T) {
	f := newFixture(t)
	content := strings.Repeat("later ", 50_000)
	n := f.putLater(t, "f", content, checksum.MD5)
	want := allSums(t, content)
	if n.Checksums != (checksum.Sums{MD5: want.MD5}) {
		t.Fatalf("the commit answered the digests %+v, want only MD5 %s", n.Checksums, want.MD5)
	}
	f.s.WaitDigests()
	got := f.node(t, n.ID)
	if got.Checksums != want || got.ETag != n.ETag || !got.ModTime.Equal(n.ModTime) {
		t.Fatalf("after the digester: %+v; want digests %+v, etag %s", got, want, n.ETag)
	}
}

// TestLaterDigestsKeepNewerContent: a job for a content the file no longer
// has leaves the newer content's record alone.
func TestLaterDigestsKeepNewerContent(t *testing.T) {
	f := newFixture(t)
	first := f.putLater(t, "f", strings.Repeat("first ", 50_000), checksum.SHA1)
	f.s.WaitDigests()
	oldJob := digestJob{spaceID: f.space.ID, nodeID: first.ID, blob: f.blob(t, first.ID)}
	f.s.digests.close() // the second content's digests stay missing
	second := strings.Repeat("second ", 50_000)
	n := f.putLater(t, "f", second, checksum.Adler32)
	if err := f.s.completeDigests(oldJob); err != nil {
		t.Fatal(err)
	}
	want := allSums(t, second)
	if got := f.node(t, n.ID).Checksums; got != (checksum.Sums{Adler32: want.Adler32}) {
		t.Fatalf("a job for the old content wrote %+v into the new one's record", got)
	}
	if err := f.s.completeDigests(digestJob{spaceID: f.space.ID, nodeID: n.ID, blob: f.blob(t, n.ID)}); err != nil {
		t.Fatal(err)
	}
	if got := f.node(t, n.ID); got.Checksums != want || got.ETag != n.ETag {
		t.Fatalf("the new content's own job recorded %+v (etag %s), want %+v (etag %s)", got.Checksums, got.ETag, want, n.ETag)
	}
}

// TestLaterDigestsAfterRestart: digests a close left missing are computed
// when the store opens again.
func TestLaterDigestsAfterRestart(t *testing.T) {
	f := newFixture(t)
	f.s.digests.close() // as a crash right after the commit would
	content := strings.Repeat("restart ", 50_000)
	n := f.putLater(t, "f", content)
	if !f.node(t, n.ID).Checksums.IsZero() {
		t.Fatal("digests recorded with the digester closed")
	}
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, f.dir, f.clk)
	s.WaitDigests()
	got, err := s.Node(ctx, f.space.ID, n.ID)
	if err != nil || got.Checksums != allSums(t, content) {
		t.Fatalf("after the restart: %+v, %v; want the digests %+v", got.Checksums, err, allSums(t, content))
	}
}

// TestLaterDigestsInline: a content kept inline has every digest at its
// commit, and HashInline after the first byte changes nothing.
func TestLaterDigestsInline(t *testing.T) {
	f := newFixture(t)
	f.s.inlineLimit = DefaultInlineLimit
	n := f.putLater(t, "small", "small", checksum.MD5)
	if n.Checksums != allSums(t, "small") {
		t.Fatalf("inline content committed with %+v", n.Checksums)
	}
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Discard()
	io.WriteString(u, "ab")
	storage.HashInline(u, checksum.MD5)
	io.WriteString(u, "c")
	if u.Checksums() != allSums(t, "abc") {
		t.Fatalf("HashInline after the first byte dropped digests: %+v", u.Checksums())
	}
}

// TestAwaitDigests: waiting for a content's digests returns them all once
// the digester has run, and at once what is known when ctx ends first. A
// job still queued is left to the digester, within its bound: the caller
// hashes nothing.
func TestAwaitDigests(t *testing.T) {
	f := newFixture(t)
	content := strings.Repeat("await ", 50_000)
	n := f.putLater(t, "f", content, checksum.MD5)
	got, err := f.s.AwaitDigests(ctx, f.space.ID, n.ID)
	if err != nil || got.Checksums != allSums(t, content) {
		t.Fatalf("AwaitDigests = %+v, %v", got.Checksums, err)
	}
	for _, running := range []bool{false, true} {
		f.s.digests.close()
		m := f.putLater(t, fmt.Sprintf("g-%t", running), content, checksum.MD5)
		// A digester busy with a job that never ends: m's job waits in
		// the queue behind it, or is that job.
		block := make(chan struct{})
		f.s.digests = startDigester(1, func(digestJob) { <-block })
		mJob := digestJob{spaceID: f.space.ID, nodeID: m.ID, blob: f.blob(t, m.ID)}
		if !running {
			f.s.digests.add(digestJob{blob: "busy"})
		}
		f.s.digests.add(mJob)
		waitRunning(t, f.s.digests, 1)
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		got, err = f.s.AwaitDigests(short, f.space.ID, m.ID)
		cancel()
		close(block)
		if err != nil || got.Checksums != m.Checksums {
			t.Fatalf("running %t: AwaitDigests past its deadline = %+v, %v; want what is known, %+v", running, got.Checksums, err, m.Checksums)
		}
	}
}

// TestDigesterHurry: the jobs requests wait for run before those nobody
// waits for, in the order they were first waited for.
func TestDigesterHurry(t *testing.T) {
	block := make(chan struct{})
	var ran []string
	d := startDigester(1, func(job digestJob) {
		if job.blob == "busy" {
			<-block
			return
		}
		ran = append(ran, job.blob)
	})
	defer d.close()
	d.add(digestJob{blob: "busy"})
	waitRunning(t, d, 1)
	for _, blob := range []string{"a", "b", "c", "d"} {
		d.add(digestJob{blob: blob})
	}
	for _, blob := range []string{"c", "b", "c", "busy", "none"} {
		d.hurry(blob)
	}
	close(block)
	d.idle()
	if want := []string{"c", "b", "a", "d"}; !slices.Equal(ran, want) {
		t.Fatalf("jobs ran in the order %q, want %q", ran, want)
	}
}

// waitRunning waits until d runs n jobs.
func waitRunning(t *testing.T, d *digester, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		d.mu.Lock()
		running := d.running
		d.mu.Unlock()
		if running == n {
			return
		}
	}
	t.Fatalf("the digester never ran %d jobs", n)
}

// TestLaterDigestsOfACopy: a copy of a file whose digests are still being
// computed gets its own, as its content file is another.
func TestLaterDigestsOfACopy(t *testing.T) {
	f := newFixture(t)
	hold := f.holdDigester()
	content := strings.Repeat("copied ", 50_000)
	src := f.putLater(t, "f", content, checksum.SHA1)
	cp, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Checksums.Complete() {
		t.Fatalf("the copy has every digest before the digester ran: %+v", cp.Checksums)
	}
	close(hold)
	f.s.WaitDigests()
	want := allSums(t, content)
	for _, id := range []string{src.ID, cp.ID} {
		if got := f.node(t, id).Checksums; got != want {
			t.Errorf("node %s: digests %+v, want %+v", id, got, want)
		}
	}
}

// TestLaterDigestsOfAVersion: a file replaced before the digester got to
// its content keeps that content as a version, which gets the digests
// too, from the job under way or from the open after a crash.
func TestLaterDigestsOfAVersion(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%t", crash), func(t *testing.T) {
			f := newFixture(t)
			var hold chan struct{}
			if crash { // the jobs are lost, as in a crash
				f.s.digests.close()
				hold = make(chan struct{})
			} else {
				hold = f.holdDigester()
			}
			first, second := strings.Repeat("first ", 50_000), strings.Repeat("second ", 50_000)
			n := f.putLater(t, "f", first, checksum.SHA1)
			f.putLater(t, "f", second, checksum.SHA1)
			close(hold)
			s := f.s
			if crash {
				if err := f.s.Close(); err != nil {
					t.Fatal(err)
				}
				s = openStore(t, f.dir, f.clk)
			}
			s.WaitDigests()
			vs, err := s.FileVersions(ctx, f.space.ID, n.ID)
			if err != nil || len(vs) != 1 {
				t.Fatalf("versions %+v, %v; want one", vs, err)
			}
			if got, want := vs[0].Node.Checksums, allSums(t, first); got != want {
				t.Errorf("the version's digests %+v, want %+v", got, want)
			}
			live, err := s.Node(ctx, f.space.ID, n.ID)
			if err != nil || live.Checksums != allSums(t, second) {
				t.Errorf("the file's digests %+v, %v; want %+v", live.Checksums, err, allSums(t, second))
			}
		})
	}
}

// TestNoLaterDigests: a store opened with NoLaterDigests has an upload
// that asks for one digest inline compute them all before its commit.
func TestNoLaterDigests(t *testing.T) {
	f := newFixture(t)
	f.reopenWithoutLaterDigests(t)
	content := strings.Repeat("inline ", 50_000)
	if n := f.putLater(t, "f", content, checksum.MD5); n.Checksums != allSums(t, content) {
		t.Fatalf("committed with %+v, want every digest %+v", n.Checksums, allSums(t, content))
	}
}

// TestLaterDigestsInTheTrash: a file deleted before the digester got to
// its content gets its digests in the trash, and has them once restored.
func TestLaterDigestsInTheTrash(t *testing.T) {
	f := newFixture(t)
	hold := f.holdDigester()
	content := strings.Repeat("trashed ", 50_000)
	n := f.putLater(t, "f", content, checksum.MD5)
	if err := f.s.Remove(ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	close(hold)
	f.s.WaitDigests()
	items, err := f.s.TrashItems(ctx, f.space.ID, "", 10)
	if err != nil || len(items) != 1 {
		t.Fatalf("trash items %+v, %v; want one", items, err)
	}
	back, _, err := f.s.RestoreTrash(ctx, f.space.ID, items[0].Key, storage.Transfer{NodeID: n.ID, NewParentID: f.root(), NewName: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if want := allSums(t, content); back.Checksums != want {
		t.Fatalf("restored from the trash with the digests %+v, want %+v", back.Checksums, want)
	}
}

// TestNoLaterDigestsOfASession: with no later digests a TUS session
// computes all three while its bytes arrive, whatever it announced.
func TestNoLaterDigestsOfASession(t *testing.T) {
	f := newFixture(t)
	f.reopenWithoutLaterDigests(t)
	content := strings.Repeat("session ", 40_000)
	us, err := f.s.CreateSession(ctx, storage.UploadSession{
		SpaceID: f.space.ID, User: "einstein", Length: int64(len(content)),
		Target: storage.Commit{ParentID: f.root(), Name: "tus.bin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AppendSession(ctx, us.ID, 0, strings.NewReader(content), nil); err != nil {
		t.Fatal(err)
	}
	n, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Checksums != allSums(t, content) {
		t.Fatalf("committed with %+v, want every digest %+v", n.Checksums, allSums(t, content))
	}
}

// reopenWithoutLaterDigests opens f's store again with digest_workers 0:
// every digest computed while the bytes arrive.
func (f *fixture) reopenWithoutLaterDigests(t *testing.T) {
	t.Helper()
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(f.dir, Options{InlineLimit: -1, Now: f.clk.Now, DigestWorkers: NoLaterDigests})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
}

// holdDigester gives f's store a digester whose jobs wait until the
// channel returned is closed.
func (f *fixture) holdDigester() chan struct{} {
	hold := make(chan struct{})
	f.s.digests.close()
	f.s.digests = startDigester(1, func(job digestJob) {
		<-hold
		f.s.runDigestJob(job)
	})
	return hold
}
