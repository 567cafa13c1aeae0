package boltstore

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// carried returns the algorithms a marshaled checksum state computes.
func carried(t *testing.T, state []byte) []checksum.Algorithm {
	t.Helper()
	w := checksum.NewWriter()
	if err := w.UnmarshalBinary(state); err != nil {
		t.Fatalf("carried state: %v", err)
	}
	return w.Computes()
}

// TestChunkedPartsHashOnlyTheAnnouncedDigest: NG parts put in order carry
// SHA1 alone (storage.PartDigests), the digest nextcloud/desktop announces
// on the MOVE (propagateuploadng.cpp), so an assembly announced in SHA1, or
// in nothing, appends them without a second read and hashes nothing else
// inline; one announced in another digest takes their bytes once more,
// hashing that one. The digester completes every digest after the commit.
func TestChunkedPartsHashOnlyTheAnnouncedDigest(t *testing.T) {
	tests := []struct {
		name         string
		announced    []checksum.Algorithm
		wantAppended int
		wantInline   []checksum.Algorithm
	}{
		{"SHA1", []checksum.Algorithm{checksum.SHA1}, 3, []checksum.Algorithm{checksum.SHA1}},
		{"none", nil, 3, []checksum.Algorithm{checksum.SHA1}},
		{"MD5", []checksum.Algorithm{checksum.MD5}, 0, []checksum.Algorithm{checksum.MD5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			u := f.newChunkedUpload(t, "ng", time.Hour)
			rng := rand.New(rand.NewPCG(5, 6))
			var whole []byte
			order := []string{"1", "2", "3"}
			prev := ""
			for _, name := range order {
				b := randomBytes(rng, 100<<10+rng.IntN(1000))
				whole = append(whole, b...)
				if _, err := f.s.PutChunkAfter(ctx, u.ID, name, prev, bytes.NewReader(b)); err != nil {
					t.Fatalf("PutChunkAfter %q: %v", name, err)
				}
				prev = name
			}
			r, err := f.s.liveChunkedUpload(u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := carried(t, r.Chain.State); !slices.Equal(got, storage.PartDigests()) {
				t.Fatalf("the parts carried %v, want %v", got, storage.PartDigests())
			}
			if _, err := f.s.ClaimChunkedUpload(ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			up, err := f.s.NewUpload(ctx, f.root())
			if err != nil {
				t.Fatal(err)
			}
			defer up.Discard()
			storage.HashInline(up, tt.announced...)
			appended, err := f.s.AppendChunks(ctx, up, u.ID, order)
			if err != nil || appended != tt.wantAppended {
				t.Fatalf("AppendChunks = %d, %v; want %d", appended, err, tt.wantAppended)
			}
			for _, name := range order[appended:] {
				f.copyChunkInto(t, up, u.ID, name)
			}
			want := sumsOf(whole)
			if got := up.Checksums(); !slices.Equal(sumsAlgorithms(got), tt.wantInline) || !agreesWith(got, want) {
				t.Fatalf("inline digests %v, want those of %v in %v", got, tt.wantInline, want)
			}
			n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "ng.bin", Assembles: u.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.settled(t, n); got.Checksums != want || got.ETag != n.ETag || f.read(t, n.ID) != string(whole) {
				t.Fatalf("after the digester: %v (etag %s), want %v (etag %s)", got.Checksums, got.ETag, want, n.ETag)
			}
		})
	}
}

// TestSessionHashesOnlyTheAnnouncedDigest: a TUS session carries through
// its PATCHes the digest of the checksum announced at its creation alone
// (owncloud/client's propagateuploadtus.cpp sends it in Upload-Metadata),
// none without one, across a restart too; CompleteSession checks it and
// the digester completes the others.
func TestSessionHashesOnlyTheAnnouncedDigest(t *testing.T) {
	content := randomBytes(rand.New(rand.NewPCG(7, 8)), 300<<10)
	want := sumsOf(content)
	tests := []struct {
		name     string
		expected *checksum.Expected
		inline   []checksum.Algorithm
	}{
		{"MD5", &checksum.Expected{Algorithm: checksum.MD5, Digest: want.MD5}, []checksum.Algorithm{checksum.MD5}},
		{"ADLER32", &checksum.Expected{Algorithm: checksum.Adler32, Digest: want.Adler32}, []checksum.Algorithm{checksum.Adler32}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			us, err := f.s.CreateSession(ctx, storage.UploadSession{
				SpaceID: f.space.ID, User: "einstein", Length: int64(len(content)),
				Target: storage.Commit{ParentID: f.root(), Name: "tus.bin"}, Expected: tt.expected,
			})
			if err != nil {
				t.Fatal(err)
			}
			half := int64(len(content) / 2)
			if _, err := f.s.AppendSession(ctx, us.ID, 0, bytes.NewReader(content[:half]), nil); err != nil {
				t.Fatal(err)
			}
			f.reopen(t)
			if _, err := f.s.AppendSession(ctx, us.ID, half, bytes.NewReader(content[half:]), nil); err != nil {
				t.Fatal(err)
			}
			r, err := f.s.lockedSession(us.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := carried(t, r.SumState); !slices.Equal(got, tt.inline) {
				t.Fatalf("the session carried %v, want %v", got, tt.inline)
			}
			n, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sumsAlgorithms(n.Checksums), tt.inline) || !agreesWith(n.Checksums, want) {
				t.Fatalf("committed with %v, want those of %v in %v", n.Checksums, tt.inline, want)
			}
			if got := f.settled(t, n); got.Checksums != want || got.ETag != n.ETag || f.read(t, n.ID) != string(content) {
				t.Fatalf("after the digester: %v (etag %s), want %v (etag %s)", got.Checksums, got.ETag, want, n.ETag)
			}
		})
	}
}

// sumsAlgorithms lists the algorithms whose digest s holds.
func sumsAlgorithms(s checksum.Sums) []checksum.Algorithm {
	var algs []checksum.Algorithm
	for _, alg := range checksum.Algorithms() {
		if d, _ := s.Get(alg); d != "" {
			algs = append(algs, alg)
		}
	}
	return algs
}

// agreesWith reports whether every digest known in got is the one in want.
func agreesWith(got, want checksum.Sums) bool {
	for _, alg := range sumsAlgorithms(got) {
		g, _ := got.Get(alg)
		if w, _ := want.Get(alg); g != w {
			return false
		}
	}
	return true
}
