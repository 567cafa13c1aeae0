package davhandler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// v1Put sends chunk index of count of name's transfer as user.
func (e *env) v1Put(user, folder, name string, count, index int, content string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	path := fmt.Sprintf("%s/%s-chunking-4711-%d-%d", folder, name, count, index)
	return e.do(user, http.MethodPut, path, content, append([]string{"OC-Chunked", "1"}, hdr...)...)
}

func TestParseV1Chunk(t *testing.T) {
	tests := []struct {
		name         string
		ok           bool
		file, xfer   string
		count, index int
	}{
		{"blob.bin-chunking-4711-3-0", true, "blob.bin", "4711", 3, 0},
		{"blob.bin-chunking-4711-3-2", true, "blob.bin", "4711", 3, 2},
		{"a-chunking-b-chunking-1-2-1", true, "a-chunking-b", "1", 2, 1},
		{"x-chunking-abc_9-1-0", true, "x", "abc_9", 1, 0},
		{"blob.bin-chunking-4711-3-3", false, "", "", 0, 0},
		{"blob.bin-chunking-4711-0-0", false, "", "", 0, 0},
		{"blob.bin-chunking-4711-10000-0", false, "", "", 0, 0},
		{"blob.bin-chunking-4711-99999999999999999999-0", false, "", "", 0, 0},
		{"blob.bin-chunking-47 11-3-0", false, "", "", 0, 0},
		{"blob.bin-chunking-4711-3", false, "", "", 0, 0},
		{"-chunking-4711-3-0", false, "", "", 0, 0},
		{"..-chunking-4711-3-0", false, "", "", 0, 0},
		{"blob.bin", false, "", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseV1Chunk(tt.name)
			if !tt.ok {
				wantDAVStatus(t, err, http.StatusBadRequest)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c != (v1Chunk{file: tt.file, transfer: tt.xfer, count: tt.count, index: tt.index}) {
				t.Fatalf("got %+v", c)
			}
		})
	}
}

// rootState is what a listing tells about a space root: its etag and size.
func rootState(t testing.TB, e *env, user string) storage.Node {
	t.Helper()
	space, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user})
	if err != nil {
		t.Fatal(err)
	}
	root, err := e.store.Node(context.Background(), space.ID, space.ID)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestChunkV1: chunks in any order; only the completing one carries the
// headers of a PUT, and until then nothing shows in the space, its size
// or its etag. The whole file's checksum comes with a chunk that is not
// the completing one.
func TestChunkV1(t *testing.T) {
	e := newEnv(t, withChunks)
	content := "hello chunked world"
	chunks := []string{"hello ", "chunked ", "world"}
	hdr := []string{"OC-Total-Length", "19", "X-OC-Mtime", "1700000000"}
	before := rootState(t, e, "einstein")
	for _, i := range []int{1, 2} {
		extra := hdr
		if i == 2 {
			extra = append(extra, "OC-Checksum", sha1Header(content))
		}
		rec := e.v1Put("einstein", "/remote.php/webdav", "big.bin", 3, i, chunks[i], extra...)
		wantStatus(t, rec, http.StatusCreated)
		for _, name := range []string{"ETag", "OC-ETag", "OC-FileId", "X-OC-Mtime"} {
			wantHeader(t, rec, name, "")
		}
		if after := rootState(t, e, "einstein"); after.ETag != before.ETag || after.Size != 0 {
			t.Fatalf("chunk %d changed the root: %+v", i, after)
		}
		wantTree(t, personalTree(t, e, "einstein"))
	}
	rec := e.v1Put("einstein", "/remote.php/webdav", "big.bin", 3, 0, chunks[0], hdr...)
	wantStatus(t, rec, http.StatusCreated)
	for _, name := range []string{"ETag", "OC-ETag", "OC-FileId"} {
		if rec.Header().Get(name) == "" {
			t.Fatalf("the completing chunk has no %s", name)
		}
	}
	wantHeader(t, rec, "X-OC-Mtime", "accepted")
	wantHeader(t, rec, "OC-Perm", "RDNVWZP")
	wantContent(t, e, "/webdav/big.bin", content)
	wantHeader(t, e.do("einstein", http.MethodGet, "/webdav/big.bin", ""), "Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT")
	wantTree(t, personalTree(t, e, "einstein"), "big.bin")
	wantV1UploadGone(t, e, "einstein", "/webdav/big.bin", 3)

	// A new transfer replaces the file: 204.
	wantStatus(t, e.v1Put("einstein", "/webdav", "big.bin", 2, 1, "two", "If-Match", rec.Header().Get("ETag")), http.StatusCreated)
	wantStatus(t, e.v1Put("einstein", "/webdav", "big.bin", 2, 0, "one", "If-Match", rec.Header().Get("ETag")), http.StatusNoContent)
	wantContent(t, e, "/webdav/big.bin", "onetwo")

	// Without OC-Chunked, the name is an ordinary file's.
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/a-chunking-1-2-0", "plain"), http.StatusCreated)
	wantContent(t, e, "/webdav/a-chunking-1-2-0", "plain")
}

// wantV1UploadGone checks that the store keeps no chunks of a file's
// transfer 4711 any more.
func wantV1UploadGone(t testing.TB, e *env, user, file string, count int) {
	t.Helper()
	u := storage.User{ID: user}
	dp, _, _ := parseDAVPath(file)
	target, err := e.h.resolve(context.Background(), u, dp)
	if err != nil {
		t.Fatal(err)
	}
	id := v1UploadID(u, target, v1Chunk{file: target.name, transfer: "4711", count: count})
	if _, err := e.h.chunks.ChunkedUpload(context.Background(), id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("upload %s: %v, want it gone", id, err)
	}
}

// TestChunkV1Parallel: chunks sent at once, in any order, make one file,
// and exactly one answer carries its ETag.
func TestChunkV1Parallel(t *testing.T) {
	const count = 16
	e := newEnv(t, withChunks)
	parts := make([]string, count)
	for i := range parts {
		parts[i] = strings.Repeat(strconv.Itoa(i%10), 1000+i)
	}
	content := strings.Join(parts, "")
	recs := make([]*httptest.ResponseRecorder, count)
	var wg sync.WaitGroup
	for i := range count {
		// The order a resuming client uses: from the middle, wrapping.
		index := (i + 7) % count
		wg.Go(func() {
			recs[i] = e.v1Put("einstein", "/webdav", "par.bin", count, index, parts[index],
				"OC-Total-Length", strconv.Itoa(len(content)), "OC-Checksum", sha1Header(content))
		})
	}
	wg.Wait()
	withETag := 0
	for i, rec := range recs {
		wantStatus(t, rec, http.StatusCreated)
		if rec.Header().Get("ETag") != "" {
			withETag++
		} else if rec.Header().Get("OC-FileId") != "" {
			t.Fatalf("answer %d has an OC-FileId but no ETag", i)
		}
	}
	if withETag != 1 {
		t.Fatalf("%d answers carry an ETag, want 1", withETag)
	}
	wantContent(t, e, "/webdav/par.bin", content)
	wantTree(t, personalTree(t, e, "einstein"), "par.bin")
	wantV1UploadGone(t, e, "einstein", "/webdav/par.bin", count)
}

// TestChunkV1Refusals: each bad chunk is a clear error and leaves nothing
// visible; a refused assembly drops the chunks (the client starts anew).
func TestChunkV1Refusals(t *testing.T) {
	tests := []struct {
		name string
		// send sends the chunks; the last answer is checked.
		send   func(e *env) *httptest.ResponseRecorder
		status int
	}{
		{"index not below count", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 2, "x")
		}, http.StatusBadRequest},
		{"count 0", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav", "f.bin", 0, 0, "x")
		}, http.StatusBadRequest},
		{"name of no chunk", func(e *env) *httptest.ResponseRecorder {
			return e.do("einstein", http.MethodPut, "/webdav/f.bin", "x", "OC-Chunked", "1")
		}, http.StatusBadRequest},
		{"bad file name", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav", "a\\b", 2, 0, "x")
		}, http.StatusBadRequest},
		{"chunk past OC-Total-Length", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc", "OC-Total-Length", "4"), http.StatusCreated)
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 1, "de", "OC-Total-Length", "4")
		}, http.StatusBadRequest},
		{"chunks short of OC-Total-Length", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc", "OC-Total-Length", "9"), http.StatusCreated)
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 1, "de", "OC-Total-Length", "9")
		}, http.StatusBadRequest},
		{"wrong checksum, sent on an earlier chunk", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 1, "de", "OC-Checksum", sha1Header("other")), http.StatusCreated)
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc")
		}, http.StatusBadRequest},
		{"wrong checksum on the completing chunk", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 1, "de"), http.StatusCreated)
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc", "OC-Checksum", sha1Header("other"))
		}, http.StatusBadRequest},
		{"malformed checksum", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc", "OC-Checksum", "SHA1:zz")
		}, http.StatusBadRequest},
		{"If-Match fails", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav", "existing.txt", 2, 0, "abc", "If-Match", `"nope"`)
		}, http.StatusPreconditionFailed},
		{"If-Match fails at assembly", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", "/webdav", "existing.txt", 2, 1, "de"), http.StatusCreated)
			wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/existing.txt", "changed"), http.StatusNoContent)
			return e.v1Put("einstein", "/webdav", "existing.txt", 2, 0, "abc", "If-Match", `"nope"`)
		}, http.StatusPreconditionFailed},
		{"quota announced", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", physicsPath, "f.bin", 2, 0, "abc", "OC-Total-Length", "11")
		}, http.StatusInsufficientStorage},
		// A v1 upload reserves its chunk count times its largest chunk:
		// three chunks of 6 bytes cannot fit 10.
		{"quota exceeded by the chunks", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", physicsPath, "f.bin", 3, 0, "abcdef")
		}, http.StatusInsufficientStorage},
		{"quota exceeded by a larger chunk", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", physicsPath, "f.bin", 3, 0, "abc"), http.StatusCreated)
			return e.v1Put("einstein", physicsPath, "f.bin", 3, 1, "defghi")
		}, http.StatusInsufficientStorage},
		{"quota lowered meanwhile", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", physicsPath, "f.bin", 2, 0, "abcde"), http.StatusCreated)
			setQuota(t, e, 5)
			return e.v1Put("einstein", physicsPath, "f.bin", 2, 1, "fghij")
		}, http.StatusInsufficientStorage},
		// The first chunk reserved the whole file: nobody else can take it.
		{"a PUT into the chunks' reservation", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", physicsPath, "f.bin", 2, 0, "abcde"), http.StatusCreated)
			return e.do("einstein", http.MethodPut, physicsPath+"/other.txt", "12345")
		}, http.StatusInsufficientStorage},
		{"viewer", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("richard", physicsPath, "f.bin", 2, 0, "abc")
		}, http.StatusForbidden},
		{"another user's space", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("marie", "/dav/files/einstein", "f.bin", 2, 0, "abc")
		}, http.StatusNotFound},
		{"missing folder", func(e *env) *httptest.ResponseRecorder {
			return e.v1Put("einstein", "/webdav/missing", "f.bin", 2, 0, "abc")
		}, http.StatusConflict},
		{"another user's chunks complete nothing", func(e *env) *httptest.ResponseRecorder {
			wantStatus(t, e.v1Put("einstein", physicsPath, "f.bin", 2, 0, "abc"), http.StatusCreated)
			return e.v1Put("marie", physicsPath, "f.bin", 2, 1, "de")
		}, http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withChunks)
			setQuota(t, e, 10)
			wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/existing.txt", "old"), http.StatusCreated)
			rec := tt.send(e)
			wantStatus(t, rec, tt.status)
			wantHeader(t, rec, "ETag", "")
			wantHeader(t, rec, "OC-FileId", "")
			wantTree(t, personalTree(t, e, "einstein"), "existing.txt")
			physics := tree(t, e, "physics")
			if tt.name == "quota used up meanwhile" {
				wantTree(t, physics, "other.txt")
			} else {
				wantTree(t, physics)
			}
		})
	}
}

// TestChunkV1Locked: a chunk of a locked file needs the lock's token.
func TestChunkV1Locked(t *testing.T) {
	e := newEnv(t, withLocks, withChunks)
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/f.txt", "f"), http.StatusCreated)
	token := e.lock("einstein", "/webdav/f.txt", lockExclusive)
	rec := e.v1Put("einstein", "/webdav", "f.txt", 2, 0, "abc")
	wantStatus(t, rec, http.StatusLocked)
	wantCondition(t, rec, "lock-token-submitted", "/webdav/f.txt")
	wantStatus(t, e.v1Put("einstein", "/webdav", "f.txt", 2, 0, "abc", "Lock-Token", "<"+token+">"), http.StatusCreated)
	rec = e.v1Put("einstein", "/webdav", "f.txt", 2, 1, "de")
	wantStatus(t, rec, http.StatusLocked)
	wantContent(t, e, "/webdav/f.txt", "f")
	wantStatus(t, e.v1Put("einstein", "/webdav", "f.txt", 2, 1, "de", "If", "(<"+token+">)"), http.StatusNoContent)
	wantContent(t, e, "/webdav/f.txt", "abcde")
}

// TestChunkV1NotOffered: without a chunk store, v1 chunks are refused,
// never stored as files.
func TestChunkV1NotOffered(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.v1Put("einstein", "/webdav", "f.bin", 2, 0, "abc"), http.StatusNotImplemented)
	wantTree(t, personalTree(t, e, "einstein"))
}
