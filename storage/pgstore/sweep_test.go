package pgstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// waitGone waits until object key is gone from the bucket and from
// object_sweep.
func waitGone(t *testing.T, s *Store, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.objects.Get(t.Context(), key, 0, -1)
		var rows int
		s.pool.QueryRow(t.Context(), `SELECT count(*) FROM object_sweep WHERE key = $1`, key).Scan(&rows)
		if errors.Is(err, storage.ErrNotFound) && rows == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("object %s still there (%v, %d rows)", key, err, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSweepRemovesOrphans: the object of an upload that crashed before
// its commit is removed once UploadGrace has passed.
func TestSweepRemovesOrphans(t *testing.T) {
	s := openTestStore(t, Options{Sweep: 20 * time.Millisecond, UploadGrace: time.Millisecond})
	orphan := newObjectKey(prefixFile)
	if _, err := s.putObject(t.Context(), orphan, strings.NewReader("crashed"), 7); err != nil {
		t.Fatalf("putObject: %v", err)
	}
	waitGone(t, s, orphan)
}

// TestSweepKeepsReferencedObjects: an object a node references is kept,
// whatever its row in object_sweep says; the row goes.
func TestSweepKeepsReferencedObjects(t *testing.T) {
	s := openTestStore(t, Options{Sweep: 20 * time.Millisecond})
	ctx := t.Context()
	referenced := newObjectKey(prefixFile)
	if _, err := s.putObject(ctx, referenced, strings.NewReader("kept"), 4); err != nil {
		t.Fatalf("putObject: %v", err)
	}
	ids := insertTree(t, s, "sp", "f")
	content := []s3content.Segment{{Key: referenced, Size: 4}}
	if _, err := s.pool.Exec(ctx, `UPDATE nodes SET content = $2 WHERE id = $1`, ids["f"], content); err != nil {
		t.Fatalf("referencing the object: %v", err)
	}
	// As if a commit that did not adopt it had run an UploadGrace ago.
	if _, err := s.pool.Exec(ctx, `UPDATE object_sweep SET sweep_after = now() - interval '1 second'`); err != nil {
		t.Fatalf("making the object due: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var rows int
		s.pool.QueryRow(ctx, `SELECT count(*) FROM object_sweep`).Scan(&rows)
		if rows == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("object_sweep keeps %d rows", rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rc, err := s.objects.Get(ctx, referenced, 0, -1)
	if err != nil {
		t.Fatalf("referenced object swept: %v", err)
	}
	rc.Close()
}

// TestSweepEndsExpiredUploads: expired sessions and chunked uploads go
// with their objects, through two nodes sweeping the same database.
func TestSweepEndsExpiredUploads(t *testing.T) {
	clk := &testClock{}
	// The sweep ticks every minute: the test runs its passes itself.
	a, b := openTwoNodes(t, Options{Now: clk.Now, ObjectGrace: time.Millisecond, UploadGrace: time.Millisecond})
	ctx := t.Context()
	insertTree(t, a, "sp")
	var keys []string
	for i := range 3 {
		us := newTestSession(t, a, "sp", 10)
		if _, err := a.AppendSession(ctx, us.ID, 0, strings.NewReader("abc"), nil); err != nil {
			t.Fatalf("AppendSession: %v", err)
		}
		_, parts := sessionBytes(t, a, us.ID)
		keys = append(keys, parts[0].Key)
		id := fmt.Sprint("upload-", i)
		newTestChunkedUpload(t, b, id)
		if _, err := b.PutChunk(ctx, id, "1", strings.NewReader("x")); err != nil {
			t.Fatalf("PutChunk: %v", err)
		}
		var key string
		b.pool.QueryRow(ctx, `SELECT object FROM chunks WHERE upload_id = $1`, []byte(id)).Scan(&key)
		keys = append(keys, key)
	}
	live := newTestSession(t, a, "sp", 10) // expires with the others, but is held
	clk.Advance(2 * time.Hour)
	done := make(chan error, 2)
	for _, s := range []*Store{a, b} {
		go func() {
			err := s.sweep(ctx)
			if err == nil {
				err = s.sweep(ctx) // the objects released by the first pass
			}
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("sweep: %v", err)
		}
	}
	for _, key := range keys {
		waitGone(t, a, key)
	}
	var left int
	a.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM upload_sessions) + (SELECT count(*) FROM chunked_uploads)`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d expired sessions and uploads left", left)
	}
	if _, err := a.Session(ctx, live.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after expiry: %v", err)
	}
}

// startMultipart starts a multipart upload of key in the store's bucket
// and sends it one part, as a node killed mid-PUT leaves it.
func startMultipart(t *testing.T, b testpeer.S3, key string) {
	t.Helper()
	client, err := minio.New(b.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(b.AccessKey, b.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	core := minio.Core{Client: client}
	id, err := core.NewMultipartUpload(t.Context(), b.Bucket, key, minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("starting a multipart upload: %v", err)
	}
	if _, err := core.PutObjectPart(t.Context(), b.Bucket, key, id, 1, strings.NewReader("part"), 4, minio.PutObjectPartOptions{}); err != nil {
		t.Fatalf("sending a part: %v", err)
	}
}

// unfinished lists the incomplete multipart uploads of key.
func unfinished(t *testing.T, s *Store, key string) []s3content.Incomplete {
	t.Helper()
	us, err := s.objects.ListIncomplete(t.Context(), key, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("ListIncomplete: %v", err)
	}
	return us
}

// TestSweepAbortsUnfinishedMultipart: the multipart upload of a node that
// died mid-PUT (its object recorded as pending, parts sent, never
// completed) is aborted by the sweep once UploadGrace has passed.
func TestSweepAbortsUnfinishedMultipart(t *testing.T) {
	b := testpeer.S3Bucket(t)
	s := openTestStore(t, Options{
		Sweep: 20 * time.Millisecond, UploadGrace: time.Millisecond,
		S3: s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey},
	})
	key := newObjectKey(prefixFile)
	// The upload is begun before its key is pending: the sweep, which runs
	// every 20 ms, would otherwise abort it between its creation and its
	// first part.
	startMultipart(t, b, key)
	if err := s.recordPending(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(unfinished(t, s, key)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the multipart upload of %s is still there after the sweep", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitGone(t, s, key)
}

// TestDiscardLeavesNoMultipart: an upload that streamed past a part and
// is then discarded (its PUT failed) leaves no incomplete multipart upload.
func TestDiscardLeavesNoMultipart(t *testing.T) {
	b := testpeer.S3Bucket(t)
	s := openTestStore(t, Options{S3: s3content.Config{
		Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey, PartSize: 5 << 20,
	}})
	sp := personal(t, s)
	up, err := s.NewUpload(t.Context(), sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Write(make([]byte, 6<<20)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	key := up.(*upload).stream.key
	up.Discard()
	if us := unfinished(t, s, key); len(us) != 0 {
		t.Fatalf("incomplete uploads left: %+v", us)
	}
}

// TestSweepReportsWhatItRemoved: a pass tells the store's observer what
// it removed: an expired session, then the objects it released.
func TestSweepReportsWhatItRemoved(t *testing.T) {
	clk := &testClock{}
	s := openTestStore(t, Options{Now: clk.Now, ObjectGrace: time.Millisecond, UploadGrace: time.Millisecond})
	ctx := t.Context()
	insertTree(t, s, "sp")
	us := newTestSession(t, s, "sp", 10)
	if _, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("abc"), nil); err != nil {
		t.Fatalf("AppendSession: %v", err)
	}
	// The background pass (every minute) may report too.
	reports := make(chan storage.SweepReport, 100)
	s.ObserveSweeps(func(r storage.SweepReport) { reports <- r })
	clk.Advance(2 * time.Hour)
	var total storage.SweepReport
	// The objects the session released are due after ObjectGrace, in a
	// later pass; a loaded machine may need a few.
	for pass := 0; pass < 50 && total.Content == 0; pass++ {
		if pass > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if err := s.sweep(ctx); err != nil {
			t.Fatalf("sweep: %v", err)
		}
		for len(reports) > 0 {
			r := <-reports
			total.UploadSessions += r.UploadSessions
			total.Content += r.Content
			if r.Failed {
				t.Fatalf("pass %d reported a failure", pass)
			}
		}
	}
	if total.UploadSessions != 1 || total.Content == 0 {
		t.Fatalf("reports added up to %+v, want the session and its objects", total)
	}
}
