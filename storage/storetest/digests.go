package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// testLaterDigests: an upload asked to hash only one algorithm inline
// (storage.HashInline) has that digest right before its commit, and every
// digest right soon after it (storage.AwaitDigests), whether the store
// computes the others later or computed them all inline; a small file and
// a big one alike.
func testLaterDigests(t *testing.T, f *fixture) {
	big := bytes.Repeat([]byte("later digests "), 40_000) // past any inline limit
	for _, tc := range []struct {
		name    string
		content []byte
		inline  checksum.Algorithm
	}{
		{"small", []byte("small"), checksum.MD5},
		{"big MD5", big, checksum.MD5},
		{"big ADLER32", big, checksum.Adler32},
		{"big none", big, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := f.s.NewUpload(f.ctx, f.space.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Discard()
			var algs []checksum.Algorithm
			if tc.inline != "" {
				algs = append(algs, tc.inline)
			}
			storage.HashInline(u, algs...)
			if _, err := u.Write(tc.content); err != nil {
				t.Fatal(err)
			}
			want := sums(string(tc.content))
			if tc.inline != "" {
				got, _ := u.Checksums().Get(tc.inline)
				if w, _ := want.Get(tc.inline); got != w {
					t.Fatalf("%s before the commit = %q, want %q", tc.inline, got, w)
				}
			}
			n, _, err := u.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "later-" + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			if !agrees(n.Checksums, want) {
				t.Fatalf("committed digests %+v disagree with %+v", n.Checksums, want)
			}
			got := f.awaitDigests(t, n)
			if got.Checksums != want || got.ETag != n.ETag {
				t.Fatalf("node = %+v; want the digests %+v and etag %s", got, want, n.ETag)
			}
		})
	}
}

// agrees reports whether every digest known in got is the one in want.
func agrees(got, want checksum.Sums) bool {
	for _, alg := range checksum.Algorithms() {
		g, _ := got.Get(alg)
		w, _ := want.Get(alg)
		if g != "" && g != w {
			return false
		}
	}
	return true
}

// awaitDigests returns file n once its digests are all known, within
// seconds: through storage.AwaitDigests where the store (not a wrapper
// hiding it) waits, else by asking again.
func (f *fixture) awaitDigests(t *testing.T, n storage.Node) storage.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	storage.AwaitDigests(ctx, f.s, &n)
	for !n.Checksums.Complete() && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		got, err := f.s.Node(f.ctx, f.space.ID, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		n = got
	}
	return n
}
