package boltstore

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// chainStep is one thing a client does to a chunked upload.
type chainStep struct {
	put, after string // PutChunkAfter(put, after), or PutChunk when after is "-"
	remove     string
	reopen     bool
}

// TestAppendChunksCarriesDigests: parts put in order carry the file's
// digests from one to the next, across a restart, so the assembly appends
// them without hashing them again; what breaks the chain (a part out of
// order, a replaced or removed part) only makes the caller copy more. The
// digests are right either way.
func TestAppendChunksCarriesDigests(t *testing.T) {
	tests := []struct {
		name         string
		steps        []chainStep
		order        []string
		wantAppended int
	}{
		{"in order", []chainStep{{put: "1"}, {put: "2", after: "1"}, {put: "3", after: "2"}}, []string{"1", "2", "3"}, 3},
		{"across a restart", []chainStep{{put: "1"}, {put: "2", after: "1"}, {reopen: true}, {put: "3", after: "2"}}, []string{"1", "2", "3"}, 3},
		{"last out of order", []chainStep{{put: "1"}, {put: "3", after: "1"}, {put: "2", after: "1"}}, []string{"1", "2", "3"}, 0},
		{"first late", []chainStep{{put: "2"}, {put: "3", after: "2"}, {put: "1"}}, []string{"1", "2", "3"}, 0},
		{"prefix only", []chainStep{{put: "1"}, {put: "2", after: "1"}, {put: "3", after: "-"}}, []string{"1", "2", "3"}, 2},
		{"replaced part", []chainStep{{put: "1"}, {put: "2", after: "1"}, {put: "1"}}, []string{"1", "2"}, 0},
		{"removed part", []chainStep{{put: "1"}, {put: "2", after: "1"}, {remove: "2"}, {put: "2", after: "1"}}, []string{"1", "2"}, 0},
		{"without chain", []chainStep{{put: "1", after: "-"}, {put: "2", after: "-"}}, []string{"1", "2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			u := f.newChunkedUpload(t, "chain", time.Hour)
			rng := rand.New(rand.NewPCG(1, 2))
			content := map[string][]byte{}
			for _, st := range tt.steps {
				switch {
				case st.reopen:
					f.reopen(t)
				case st.remove != "":
					if err := f.s.RemoveChunk(ctx, u.ID, st.remove); err != nil {
						t.Fatalf("RemoveChunk %q: %v", st.remove, err)
					}
				default:
					b := randomBytes(rng, 200<<10+rng.IntN(1000))
					content[st.put] = b
					var err error
					if st.after == "-" {
						_, err = f.s.PutChunk(ctx, u.ID, st.put, bytes.NewReader(b))
					} else {
						_, err = f.s.PutChunkAfter(ctx, u.ID, st.put, st.after, bytes.NewReader(b))
					}
					if err != nil {
						t.Fatalf("put part %q: %v", st.put, err)
					}
				}
			}
			var whole []byte
			for _, name := range tt.order {
				whole = append(whole, content[name]...)
			}
			if _, err := f.s.ClaimChunkedUpload(ctx, u.ID); err != nil {
				t.Fatalf("ClaimChunkedUpload: %v", err)
			}
			up, err := f.s.NewUpload(ctx, f.root())
			if err != nil {
				t.Fatalf("NewUpload: %v", err)
			}
			defer up.Discard()
			// As an assembly announced in SHA1 (nextcloud/desktop's
			// propagateuploadng.cpp sends OC-Checksum on the MOVE).
			storage.HashInline(up, checksum.SHA1)
			appended, err := f.s.AppendChunks(ctx, up, u.ID, tt.order)
			if err != nil || appended != tt.wantAppended {
				t.Fatalf("AppendChunks = %d, %v; want %d", appended, err, tt.wantAppended)
			}
			for _, name := range tt.order[appended:] {
				f.copyChunkInto(t, up, u.ID, name)
			}
			if got, want := up.Checksums(), sumsOf(whole); got != (checksum.Sums{SHA1: want.SHA1}) {
				t.Errorf("checksums = %v, want the SHA1 of %v alone", got, want)
			}
			n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "assembled", Assembles: u.ID})
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			if got := f.read(t, n.ID); got != string(whole) {
				t.Errorf("assembled file differs from its parts (%d bytes, want %d)", len(got), len(whole))
			}
			if got := f.settled(t, n).Checksums; got != sumsOf(whole) {
				t.Errorf("committed checksums = %v, want %v", got, sumsOf(whole))
			}
		})
	}
}

// An upload of another store, or one that holds bytes already, takes no
// parts with their digests.
func TestAppendChunksNeedsAnEmptyUploadOfItsStore(t *testing.T) {
	f := newFixture(t)
	u := f.newChunkedUpload(t, "chain", time.Hour)
	if _, err := f.s.PutChunkAfter(ctx, u.ID, "1", "", bytes.NewReader([]byte("one"))); err != nil {
		t.Fatalf("PutChunkAfter: %v", err)
	}
	other := newFixture(t)
	up, err := other.s.NewUpload(ctx, other.root())
	if err != nil {
		t.Fatalf("NewUpload: %v", err)
	}
	defer up.Discard()
	if n, err := f.s.AppendChunks(ctx, up, u.ID, []string{"1"}); n != 0 || err != nil {
		t.Errorf("AppendChunks into another store's upload = %d, %v; want 0, nil", n, err)
	}
	mine, err := f.s.NewUpload(ctx, f.root())
	if err != nil {
		t.Fatalf("NewUpload: %v", err)
	}
	defer mine.Discard()
	mine.Write([]byte("x"))
	if n, err := f.s.AppendChunks(ctx, mine, u.ID, []string{"1"}); n != 0 || err == nil {
		t.Errorf("AppendChunks into a written upload = %d, %v; want an error", n, err)
	}
}

func (f *fixture) copyChunkInto(t testing.TB, up storage.Upload, id, name string) {
	t.Helper()
	rc, err := f.s.OpenChunk(ctx, id, name)
	if err != nil {
		t.Fatalf("OpenChunk %q: %v", name, err)
	}
	defer rc.Close()
	if _, err := io.Copy(up, rc); err != nil {
		t.Fatalf("copy part %q: %v", name, err)
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+8)
	for len(b) < n {
		b = binary.LittleEndian.AppendUint64(b, rng.Uint64())
	}
	return b[:n]
}

// sumsOf computes the digests with the standard library alone, not
// through the checksum package under test.
func sumsOf(b []byte) checksum.Sums {
	s1, m5 := sha1.Sum(b), md5.Sum(b)
	a := binary.BigEndian.AppendUint32(nil, adler32.Checksum(b))
	return checksum.Sums{SHA1: hex.EncodeToString(s1[:]), MD5: hex.EncodeToString(m5[:]), Adler32: hex.EncodeToString(a)}
}
