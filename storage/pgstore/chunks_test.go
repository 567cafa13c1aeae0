package pgstore

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/davspaces/davspaces/storage"
)

func newTestChunkedUpload(t *testing.T, s *Store, id string) {
	t.Helper()
	_, err := s.CreateChunkedUpload(t.Context(), storage.ChunkedUpload{ID: id, User: "u", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateChunkedUpload %q: %v", id, err)
	}
}

func readPart(t *testing.T, s *Store, id, name string) string {
	t.Helper()
	rc, err := s.OpenChunk(t.Context(), id, name)
	if err != nil {
		t.Fatalf("OpenChunk %q: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading part %q: %v", name, err)
	}
	return string(b)
}

// TestChunkedUploadParts: parts are kept under any bytes as ids and names,
// listed in byte order, replaced whole, and a failing body keeps nothing.
func TestChunkedUploadParts(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	ids := []string{"a", "a\x00b", "a\xffb", "A"}
	for _, id := range ids {
		newTestChunkedUpload(t, s, id)
	}
	if _, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "a", User: "u"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("CreateChunkedUpload of a live id: %v", err)
	}
	for _, id := range ids {
		for _, name := range []string{"2", "10", "\xff", "é"} {
			if _, err := s.PutChunk(ctx, id, name, strings.NewReader(id+name)); err != nil {
				t.Fatalf("PutChunk %q %q: %v", id, name, err)
			}
		}
	}
	got, err := s.Chunks(ctx, "a\x00b")
	if err != nil {
		t.Fatalf("Chunks: %v", err)
	}
	names := make([]string, len(got))
	for i, c := range got {
		names[i] = c.Name
	}
	if want := []string{"10", "2", "é", "\xff"}; !slices.Equal(names, want) {
		t.Fatalf("Chunks = %q, want %q", names, want)
	}
	if got := readPart(t, s, "a\xffb", "é"); got != "a\xffbé" {
		t.Fatalf("part = %q", got)
	}

	if _, err := s.PutChunk(ctx, "a", "2", strings.NewReader("replaced")); err != nil {
		t.Fatalf("PutChunk replacing: %v", err)
	}
	broken := errors.New("connection reset")
	for _, name := range []string{"2", "new"} {
		_, err := s.PutChunk(ctx, "a", name, io.MultiReader(strings.NewReader("half"), iotest.ErrReader(broken)))
		if !errors.Is(err, broken) {
			t.Fatalf("PutChunk with a failing body: %v, want %v", err, broken)
		}
	}
	if got := readPart(t, s, "a", "2"); got != "replaced" {
		t.Fatalf("part after a failed replacement = %q", got)
	}
	if _, err := s.OpenChunk(ctx, "a", "new"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("OpenChunk of a failed part: %v", err)
	}
	for _, name := range []string{"", "a/b", "n\x00", strings.Repeat("n", storage.MaxChunkNameBytes+1)} {
		if _, err := s.PutChunk(ctx, "a", name, strings.NewReader("x")); !errors.Is(err, storage.ErrInvalid) {
			t.Fatalf("PutChunk %q: %v, want ErrInvalid", name, err)
		}
		if err := s.RemoveChunk(ctx, "a", name); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("RemoveChunk %q: %v, want ErrNotFound", name, err)
		}
	}
	var pending int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM object_sweep WHERE sweep_after > now() + interval '1 hour'`).Scan(&pending)
	if pending != 0 {
		t.Fatalf("%d failed or adopted objects still pending", pending)
	}
}

// TestChunkClaimAcrossNodes: of claims through two nodes exactly one wins,
// and after it no part changes.
func TestChunkClaimAcrossNodes(t *testing.T) {
	a, b := openTwoNodes(t, Options{})
	ctx := t.Context()
	newTestChunkedUpload(t, a, "u1")
	a.PutChunk(ctx, "u1", "1", strings.NewReader("one"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			chunks, err := s.ClaimChunkedUpload(ctx, "u1")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && len(chunks) == 1:
				won++
			case !errors.Is(err, storage.ErrConflict):
				t.Errorf("ClaimChunkedUpload = %v, %v", chunks, err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims won, want 1", won)
	}
	if _, err := b.PutChunk(ctx, "u1", "2", strings.NewReader("two")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("PutChunk after the claim: %v", err)
	}
	if err := b.RemoveChunk(ctx, "u1", "nope"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("RemoveChunk after the claim: %v", err)
	}
	if err := a.RemoveChunkedUpload(ctx, "u1"); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	if _, err := b.ChunkedUpload(ctx, "u1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("ChunkedUpload after removal: %v", err)
	}
}

// TestChunkClaimLapsesWithItsNode: a claim lasts as long as the node that
// holds it. While node A lives, B's claim is refused however long A's
// assembly takes; once A dies mid-assembly (its store stops, the upload
// stays claimed, as kill -9 leaves it) the claim lapses within the lease:
// the upload reads as unclaimed, and B's claim takes it over with its
// parts and holds it in turn.
func TestChunkClaimLapsesWithItsNode(t *testing.T) {
	const lease = 300 * time.Millisecond
	a, b := openTwoNodes(t, Options{claimLease: lease})
	ctx := t.Context()
	newTestChunkedUpload(t, a, "u1")
	if _, err := a.PutChunk(ctx, "u1", "1", strings.NewReader("one")); err != nil {
		t.Fatalf("PutChunk: %v", err)
	}
	if _, err := a.ClaimChunkedUpload(ctx, "u1"); err != nil {
		t.Fatalf("ClaimChunkedUpload through A: %v", err)
	}
	time.Sleep(4 * lease)
	if _, err := b.ClaimChunkedUpload(ctx, "u1"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("claim through B %v after A's, which A holds: %v, want ErrConflict", 4*lease, err)
	}

	a.Close()
	died := time.Now()
	for {
		u, err := b.ChunkedUpload(ctx, "u1")
		if err != nil {
			t.Fatalf("ChunkedUpload: %v", err)
		}
		if !u.Claimed {
			break
		}
		if time.Since(died) > 3*lease {
			t.Fatalf("the claim of the dead node A still holds %v after it died, with a lease of %v", time.Since(died), lease)
		}
		time.Sleep(lease / 10)
	}
	chunks, err := b.ClaimChunkedUpload(ctx, "u1")
	if want := []storage.Chunk{{Name: "1", Size: 3}}; err != nil || !slices.Equal(chunks, want) {
		t.Fatalf("claim through B after A died: %v, %v; want %v", chunks, err, want)
	}
	if got := readPart(t, b, "u1", "1"); got != "one" {
		t.Errorf("part 1 after the takeover: %q", got)
	}
	time.Sleep(4 * lease)
	if u, err := b.ChunkedUpload(ctx, "u1"); err != nil || !u.Claimed {
		t.Fatalf("the upload %v after B's claim: %+v, %v; want it claimed, as B holds it", 4*lease, u, err)
	}
	if _, err := b.PutChunk(ctx, "u1", "2", strings.NewReader("two")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("PutChunk during B's claim: %v, want ErrConflict", err)
	}
}

// TestChunkPutRacingRecreation: a part written for an upload that was
// removed and started again meanwhile does not land in the new one.
func TestChunkPutRacingRecreation(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	newTestChunkedUpload(t, s, "u")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.PutChunk(ctx, "u", "1", pr)
		done <- err
	}()
	pw.Write([]byte("old"))
	if err := s.RemoveChunkedUpload(ctx, "u"); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	newTestChunkedUpload(t, s, "u")
	pw.Close()
	if err := <-done; !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("PutChunk into a recreated upload: %v, want ErrNotFound", err)
	}
	if chunks, err := s.Chunks(ctx, "u"); err != nil || len(chunks) != 0 {
		t.Fatalf("Chunks of the new upload = %v, %v", chunks, err)
	}
}

func TestChunkedUploadExpiry(t *testing.T) {
	clk := &testClock{}
	s := openClockedStore(t, clk)
	ctx := t.Context()
	newTestChunkedUpload(t, s, "u")
	s.PutChunk(ctx, "u", "1", strings.NewReader("x"))
	clk.Advance(2 * time.Hour)
	if _, err := s.Chunks(ctx, "u"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Chunks after expiry: %v", err)
	}
	_, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "u", User: "u", Expires: clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateChunkedUpload over an expired upload: %v", err)
	}
	if chunks, err := s.Chunks(ctx, "u"); err != nil || len(chunks) != 0 {
		t.Fatalf("Chunks of the new upload = %v, %v", chunks, err)
	}
}
