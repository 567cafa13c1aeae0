package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

func newTestSession(t *testing.T, s *Store, spaceID string, length int64) storage.UploadSession {
	t.Helper()
	us, err := s.CreateSession(t.Context(), storage.UploadSession{
		SpaceID: spaceID, User: "u", Length: length,
		Target: storage.Commit{ParentID: spaceID, Name: "f"}, Expires: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return us
}

// sessionBytes reads what session id holds, from its parts' objects.
func sessionBytes(t *testing.T, s *Store, id string) (string, []s3content.Segment) {
	t.Helper()
	var parts []s3content.Segment
	err := s.pool.QueryRow(t.Context(), `SELECT parts FROM upload_sessions WHERE id = $1`, id).Scan(&parts)
	if err != nil {
		t.Fatalf("session parts: %v", err)
	}
	r := s.objects.NewReader(t.Context(), parts)
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading parts: %v", err)
	}
	return string(b), parts
}

func sumsOf(content string) checksum.Sums {
	w := checksum.NewWriter()
	io.WriteString(w, content)
	return w.Sums()
}

func expect(alg checksum.Algorithm, content string) *checksum.Expected {
	d, _ := sumsOf(content).Get(alg)
	return &checksum.Expected{Algorithm: alg, Digest: d}
}

// TestAppendSession: each append keeps its bytes as one part, or nothing
// when it is refused, and the checksum state follows the kept bytes only.
func TestAppendSession(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	insertTree(t, s, "sp")
	us := newTestSession(t, s, "sp", 12)
	broken := errors.New("connection reset")
	steps := []struct {
		name   string
		offset int64
		r      io.Reader
		check  *checksum.Expected
		want   error
		after  int64
	}{
		{"first", 0, strings.NewReader("abc"), nil, nil, 3},
		{"behind", 0, strings.NewReader("abc"), nil, storage.ErrConflict, 3},
		{"ahead", 4, strings.NewReader("x"), nil, storage.ErrConflict, 3},
		{"too long", 3, strings.NewReader(strings.Repeat("x", 10)), nil, storage.ErrInvalid, 3},
		{"checksum mismatch", 3, strings.NewReader("def"), expect(checksum.SHA1, "xyz"), storage.ErrChecksum, 3},
		{"failing with a check", 3, io.MultiReader(strings.NewReader("de"), iotest.ErrReader(broken)), expect(checksum.MD5, "de"), broken, 3},
		{"failing without a check", 3, io.MultiReader(strings.NewReader("de"), iotest.ErrReader(broken)), nil, broken, 5},
		{"failing at once", 5, io.MultiReader(strings.NewReader(""), iotest.ErrReader(broken)), nil, broken, 5},
		{"checked", 5, strings.NewReader("fgh"), expect(checksum.Adler32, "fgh"), nil, 8},
		{"empty", 8, strings.NewReader(""), nil, nil, 8},
		{"to the end", 8, strings.NewReader("ijkl"), nil, nil, 12},
		{"past the end", 12, strings.NewReader("m"), nil, storage.ErrInvalid, 12},
	}
	for _, st := range steps {
		got, err := s.AppendSession(ctx, us.ID, st.offset, st.r, st.check)
		if !errors.Is(err, st.want) {
			t.Fatalf("%s: AppendSession: %v, want %v", st.name, err, st.want)
		}
		now, serr := s.Session(ctx, us.ID)
		if serr != nil || now.Offset != st.after {
			t.Fatalf("%s: offset %d, %v; want %d", st.name, now.Offset, serr, st.after)
		}
		if err == nil && got.Offset != st.after {
			t.Fatalf("%s: AppendSession says offset %d, want %d", st.name, got.Offset, st.after)
		}
	}
	content, parts := sessionBytes(t, s, us.ID)
	if content != "abcdefghijkl" || len(parts) != 4 {
		t.Fatalf("session holds %q in %d parts", content, len(parts))
	}
	var state []byte
	s.pool.QueryRow(ctx, `SELECT hash_state FROM upload_sessions WHERE id = $1`, us.ID).Scan(&state)
	w := checksum.NewWriter()
	if err := w.UnmarshalBinary(state); err != nil || w.Sums() != sumsOf("abcdefghijkl") {
		t.Fatalf("carried sums %v, %v; want those of the kept bytes", w.Sums(), err)
	}
	var pending int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM object_sweep`).Scan(&pending)
	if pending != 0 {
		t.Fatalf("%d objects left for the sweep: refused parts must be removed, kept ones adopted", pending)
	}
}

// TestAppendSessionAcrossNodes: appends at one offset through two nodes
// are serialised on the session's row: exactly one wins, alone.
func TestAppendSessionAcrossNodes(t *testing.T) {
	a, b := openTwoNodes(t, Options{})
	ctx := t.Context()
	insertTree(t, a, "sp")
	const size = 256 << 10
	us := newTestSession(t, a, "sp", size)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		won []int
	)
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			_, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader(strings.Repeat(fmt.Sprint(i), size)), nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, i)
			case !errors.Is(err, storage.ErrConflict):
				t.Errorf("AppendSession: %v", err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("winners %v, want one", won)
	}
	if content, _ := sessionBytes(t, b, us.ID); content != strings.Repeat(fmt.Sprint(won[0]), size) {
		t.Fatalf("session content is not the winner's part alone")
	}
}

// openTwoNodes opens two stores on one database and bucket, as two nodes
// of a cluster.
func openTwoNodes(t *testing.T, opts Options) (*Store, *Store) {
	t.Helper()
	b := testpeer.S3Bucket(t)
	opts.DSN = testpeer.PostgreSQL(t)
	opts.S3 = s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}
	return openTestStore(t, opts), openTestStore(t, opts)
}

// TestAppendSessionWaitsForContext: an append waiting for the row lock
// another holds while it records gives up when its context ends, and
// keeps nothing.
func TestAppendSessionWaitsForContext(t *testing.T) {
	s := openTestStore(t, Options{})
	insertTree(t, s, "sp")
	us := newTestSession(t, s, "sp", 10)
	holder, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer holder.Rollback(context.Background())
	if _, err := holder.Exec(t.Context(), `SELECT 1 FROM upload_sessions WHERE id = $1 FOR UPDATE`, us.ID); err != nil {
		t.Fatalf("locking the session's row: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("x"), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting AppendSession: %v, want the context's end", err)
	}
	holder.Rollback(t.Context())
	if got, _ := s.Session(t.Context(), us.ID); got.Offset != 0 {
		t.Fatalf("offset %d, want 0", got.Offset)
	}
	if n := pendingObjects(t, s); n != 0 {
		t.Fatalf("%d objects left pending, want the refused part's discarded", n)
	}
}

// TestAppendSessionStalledHoldsNothing: an append whose body stalls holds
// no lock of the session: a second append at the same offset is taken
// meanwhile, and the stalled one, once its body ends, finds the offset
// moved (ErrConflict) and keeps nothing.
func TestAppendSessionStalledHoldsNothing(t *testing.T) {
	s := openTestStore(t, Options{})
	insertTree(t, s, "sp")
	us := newTestSession(t, s, "sp", 10)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.AppendSession(t.Context(), us.ID, 0, pr, nil)
		done <- err
	}()
	pw.Write([]byte("ab")) // the stalled append is reading its body now
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if got, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("xyz"), nil); err != nil || got.Offset != 3 {
		t.Fatalf("AppendSession beside a stalled one = %+v, %v; want offset 3", got, err)
	}
	pw.Close()
	if err := <-done; !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stalled AppendSession: %v, want ErrConflict", err)
	}
	if content, parts := sessionBytes(t, s, us.ID); content != "xyz" || len(parts) != 1 {
		t.Fatalf("session holds %q in %d parts, want the second append's alone", content, len(parts))
	}
	if n := pendingObjects(t, s); n != 0 {
		t.Fatalf("%d objects left pending, want the loser's discarded", n)
	}
}

// pendingObjects counts the objects on the sweep's list.
func pendingObjects(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM object_sweep`).Scan(&n); err != nil {
		t.Fatalf("object_sweep: %v", err)
	}
	return n
}

// TestCompleteAndRemoveSession: a session ends on completion whatever the
// commit's outcome; its parts are released when nothing adopts them.
func TestCompleteAndRemoveSession(t *testing.T) {
	clk := &testClock{}
	s := openClockedStore(t, clk)
	ctx := t.Context()
	insertTree(t, s, "sp")

	partial := newTestSession(t, s, "sp", 4)
	if _, _, err := s.CompleteSession(ctx, partial.ID, nil, time.Time{}); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("CompleteSession of a partial session: %v", err)
	}

	mismatch, err := s.CreateSession(ctx, storage.UploadSession{SpaceID: "sp", User: "u", Length: 2,
		Target: storage.Commit{ParentID: "sp", Name: "f"}, Expected: expect(checksum.SHA1, "ok")})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if _, err := s.AppendSession(ctx, mismatch.ID, 0, strings.NewReader("no"), nil); err != nil {
		t.Fatalf("AppendSession: %v", err)
	}
	_, parts := sessionBytes(t, s, mismatch.ID)
	if _, _, err := s.CompleteSession(ctx, mismatch.ID, nil, time.Time{}); !errors.Is(err, storage.ErrChecksum) {
		t.Fatalf("CompleteSession with a mismatch: %v", err)
	}
	wantSweepRows(t, s, parts, true)

	// The commit fails: the target's folder does not exist.
	failing, err := s.CreateSession(ctx, storage.UploadSession{SpaceID: "sp", User: "u", Length: 2,
		Target: storage.Commit{ParentID: "no-such-folder", Name: "f"}})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	s.AppendSession(ctx, failing.ID, 0, strings.NewReader("ab"), nil)
	_, parts = sessionBytes(t, s, failing.ID)
	if _, _, err := s.CompleteSession(ctx, failing.ID, nil, time.Time{}); err == nil {
		t.Fatalf("CompleteSession with a failing commit succeeded")
	}
	if _, err := s.Session(ctx, failing.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after a failed commit: %v", err)
	}
	wantSweepRows(t, s, parts, true)

	removed := newTestSession(t, s, "sp", 2)
	s.AppendSession(ctx, removed.ID, 0, strings.NewReader("a"), nil)
	_, parts = sessionBytes(t, s, removed.ID)
	if err := s.RemoveSession(ctx, removed.ID); err != nil {
		t.Fatalf("RemoveSession: %v", err)
	}
	if err := s.RemoveSession(ctx, removed.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("RemoveSession twice: %v", err)
	}
	wantSweepRows(t, s, parts, true)

	clk.Advance(2 * time.Hour)
	if _, err := s.Session(ctx, partial.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after expiry: %v", err)
	}
	if _, err := s.Session(ctx, "../../etc/passwd"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session of a malformed id: %v", err)
	}
}

// wantSweepRows checks whether the objects of parts wait in object_sweep.
func wantSweepRows(t *testing.T, s *Store, parts []s3content.Segment, want bool) {
	t.Helper()
	for _, p := range parts {
		var n int
		s.pool.QueryRow(t.Context(), `SELECT count(*) FROM object_sweep WHERE key = $1`, p.Key).Scan(&n)
		if (n == 1) != want {
			t.Fatalf("object %s in object_sweep: %v, want %v", p.Key, n == 1, want)
		}
	}
}

func TestCreateSessionRules(t *testing.T) {
	s := openTestStore(t, Options{})
	insertTree(t, s, "sp")
	for _, tt := range []struct {
		name string
		edit func(*storage.UploadSession)
		want error
	}{
		{"unknown space", func(us *storage.UploadSession) { us.SpaceID = "nope" }, storage.ErrNotFound},
		{"negative length", func(us *storage.UploadSession) { us.Length = -1 }, storage.ErrInvalid},
		{"slash", func(us *storage.UploadSession) { us.Target.Name = "a/b" }, storage.ErrInvalid},
		{"invalid UTF-8", func(us *storage.UploadSession) { us.Target.Name = "a\xff" }, storage.ErrInvalid},
		{"unsupported checksum", func(us *storage.UploadSession) {
			us.Expected = &checksum.Expected{Algorithm: "CRC32", Digest: "0"}
		}, storage.ErrInvalid},
		{"by node id", func(us *storage.UploadSession) { us.Target = storage.Commit{NodeID: "n"} }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			us := storage.UploadSession{SpaceID: "sp", User: "u", Length: 1, Target: storage.Commit{ParentID: "sp", Name: "f"}}
			tt.edit(&us)
			got, err := s.CreateSession(t.Context(), us)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateSession: %v, want %v", err, tt.want)
			}
			if err == nil {
				back, err := s.Session(t.Context(), got.ID)
				if err != nil || back.Target != got.Target || !back.Created.Equal(got.Created) {
					t.Fatalf("Session = %+v, %v; want %+v", back, err, got)
				}
			}
		})
	}
}
