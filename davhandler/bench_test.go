package davhandler

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// discardWriter is a ResponseWriter that counts and drops the body, like a
// fast client would.
type discardWriter struct {
	header http.Header
	status int
	n      int64
}

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) WriteHeader(s int)   { d.status = s }
func (d *discardWriter) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}

func (d *discardWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(io.Discard, r)
	d.n += n
	return n, err
}

// benchEnv is a handler over a store; durable selects fsync.
func benchEnv(b *testing.B, durable bool) (*Handler, *boltstore.Store) {
	b.Helper()
	store, err := boltstore.Open(b.TempDir(), boltstore.Options{StorageID: testStorageID, NoSync: !durable})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	h, err := New(Config{Store: store, User: basicAuthUser})
	if err != nil {
		b.Fatal(err)
	}
	return h, store
}

func serveBench(b *testing.B, h *Handler, method, path string, body io.Reader, hdr ...string) *discardWriter {
	return serveSized(b, h, method, path, body, -1, hdr...)
}

// serveSized sends a body of n bytes with its Content-Length, as clients
// send files; n < 0 leaves the length to the body's type.
func serveSized(b *testing.B, h *Handler, method, path string, body io.Reader, n int64, hdr ...string) *discardWriter {
	req := httptest.NewRequest(method, path, body)
	if n >= 0 {
		req.ContentLength = n
	}
	req.SetBasicAuth("einstein", "x")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	return w
}

// clientProps is what ownCloud desktop clients ask for when they sync.
const clientProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/><oc:id/><oc:fileid/>` +
	`<oc:permissions/><oc:size/><oc:checksums/><oc:favorite/><oc:share-types/></d:prop></d:propfind>`

// BenchmarkPropfindDepth1_10000 lists a folder of 10,000 files with the
// properties a sync client asks for. Memory per op stays flat with the
// folder size because the multistatus is streamed page by page.
func BenchmarkPropfindDepth1_10000(b *testing.B) { benchFolderListing(b, 10000, "1") }

// BenchmarkPropfindDepth1_1000 lists a folder of 1,000 files: a listing
// that fits in two pages.
func BenchmarkPropfindDepth1_1000(b *testing.B) { benchFolderListing(b, 1000, "1") }

// BenchmarkPropfindDepth1_200 lists a folder of 200 files, the listing of
// the bench's sync mix: a folder of a synced tree, two pages.
func BenchmarkPropfindDepth1_200(b *testing.B) { benchFolderListing(b, 200, "1") }

// BenchmarkPropfindDepth0 asks for the folder alone, as clients poll for
// changes: its cost must not grow with the folder's size.
func BenchmarkPropfindDepth0(b *testing.B) { benchFolderListing(b, 1000, "0") }

// benchFolderListing times PROPFINDs of a folder of files entries, at
// depth, with the sync client's properties.
func benchFolderListing(b *testing.B, files int, depth string) {
	h, store := benchEnv(b, false)
	fillBigFolder(b, store, files)
	b.ReportAllocs()
	b.ResetTimer()
	benchPropfind(b, h, clientProps, depth)
}

// lockProps are the sync client's properties and the lock properties.
var lockProps = strings.Replace(clientProps, "</d:prop>", "<d:lockdiscovery/><d:supportedlock/></d:prop>", 1)

// BenchmarkPropfindDepth1_10000WithLocks lists the same folder with the lock
// properties, first with no lock in the space, then with 20 locks held
// elsewhere in it (on other files, some Deep on other folders): locks
// elsewhere must not make the listing measurably slower.
func BenchmarkPropfindDepth1_10000WithLocks(b *testing.B) {
	store, err := boltstore.Open(b.TempDir(), boltstore.Options{StorageID: testStorageID, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	h, err := New(Config{Store: store, Locks: store, User: basicAuthUser})
	if err != nil {
		b.Fatal(err)
	}
	space := fillBigFolder(b, store, 10000)
	b.Run("no locks", func(b *testing.B) {
		b.ReportAllocs()
		benchPropfind(b, h, lockProps, "1")
	})
	holdLocksElsewhere(b, store, space, 20)
	b.Run("20 locks", func(b *testing.B) {
		b.ReportAllocs()
		benchPropfind(b, h, lockProps, "1")
	})
}

// fillBigFolder puts n small files into the folder "big" of einstein's
// personal space and returns the space.
func fillBigFolder(b *testing.B, store *boltstore.Store, n int) storage.Space {
	b.Helper()
	ctx := context.Background()
	space, err := store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		b.Fatal(err)
	}
	folder, err := store.Mkdir(ctx, space.ID, space.ID, "big")
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		putBenchFile(b, store, space.ID, folder.ID, fmt.Sprintf("file-%05d.txt", i))
	}
	return space
}

func putBenchFile(b *testing.B, store *boltstore.Store, spaceID, parentID, name string) storage.Node {
	b.Helper()
	ctx := context.Background()
	up, err := store.NewUpload(ctx, spaceID)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(up, "content of %s", name)
	n, _, err := up.Commit(ctx, storage.Commit{ParentID: parentID, Name: name})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// holdLocksElsewhere takes n locks in space outside the folder "big": every
// fourth a Deep lock on a folder of its own, the others on files.
func holdLocksElsewhere(b *testing.B, store *boltstore.Store, space storage.Space, n int) {
	b.Helper()
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("other-%02d", i)
		l := storage.Lock{SpaceID: space.ID, Root: "/" + name, Scope: storage.LockExclusive,
			Owner: "<d:href>mailto:einstein@example.org</d:href>", User: "einstein", UserName: "Albert Einstein", Timeout: time.Hour}
		if i%4 == 0 {
			folder, err := store.Mkdir(ctx, space.ID, space.ID, name)
			if err != nil {
				b.Fatal(err)
			}
			putBenchFile(b, store, space.ID, folder.ID, "inside.txt")
			l.NodeID, l.Deep = folder.ID, true
		} else {
			l.NodeID = putBenchFile(b, store, space.ID, space.ID, name+".txt").ID
			l.Root += ".txt"
		}
		if _, err := store.CreateLock(ctx, l, storage.LockLimits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPropfind asks for props of "big" with depth, b.N times, and reports
// the CPU time per listing (garbage collection included) beside the wall
// time.
func benchPropfind(b *testing.B, h *Handler, props, depth string) {
	cpuBefore, measured := processCPUTime()
	for b.Loop() {
		w := serveBench(b, h, "PROPFIND", "/webdav/big", strings.NewReader(props), "Depth", depth)
		if w.status != http.StatusMultiStatus {
			b.Fatalf("status %d", w.status)
		}
		b.SetBytes(w.n)
	}
	if cpuAfter, _ := processCPUTime(); measured {
		b.ReportMetric(float64((cpuAfter-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkPutSmall stores durable 4 KiB files.
func BenchmarkPutSmall(b *testing.B) {
	h, _ := benchEnv(b, true)
	body := bytes.Repeat([]byte("x"), 4<<10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w := serveBench(b, h, "PUT", fmt.Sprintf("/webdav/f%d", i), bytes.NewReader(body))
		if w.status != http.StatusCreated {
			b.Fatalf("status %d", w.status)
		}
		i++
	}
}

// BenchmarkPutSmallClients stores durable small files from concurrent
// clients, each its own file, as sync clients push a folder: 4 KiB files
// from 1 and 16 clients and 64-byte ones from 8, the workloads of the
// comparison with Apache. PUT/s is the figure to compare.
func BenchmarkPutSmallClients(b *testing.B) {
	for _, tc := range []struct{ size, clients int }{{4 << 10, 1}, {4 << 10, 16}, {64, 8}} {
		b.Run(fmt.Sprintf("size=%d/clients=%d", tc.size, tc.clients), func(b *testing.B) {
			benchPutConcurrent(b, tc.size, tc.clients)
		})
	}
}

// benchPutConcurrent stores b.N durable files of size bytes with clients
// concurrent PUTs, and the CPU time per PUT (fsyncs and garbage collection
// included).
func benchPutConcurrent(b *testing.B, size, clients int) {
	h, _ := benchEnv(b, true)
	body := bytes.Repeat([]byte("x"), size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpuBefore, measured := processCPUTime()
	for range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				w := serveSized(b, h, "PUT", fmt.Sprintf("/webdav/f%d", i), bytes.NewReader(body), int64(size))
				if w.status != http.StatusCreated {
					b.Errorf("PUT f%d: status %d", i, w.status)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PUT/s")
	if cpuAfter, _ := processCPUTime(); measured {
		b.ReportMetric(float64((cpuAfter-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

const largeSize = 64 << 20

// BenchmarkPutLarge stores a durable 64 MiB file, computing all three
// checksums on the way.
func BenchmarkPutLarge(b *testing.B) {
	h, _ := benchEnv(b, true)
	body := bytes.Repeat([]byte("0123456789abcdef"), largeSize/16)
	b.SetBytes(largeSize)
	for b.Loop() {
		w := serveBench(b, h, "PUT", "/webdav/large", bytes.NewReader(body))
		if w.status != http.StatusCreated && w.status != http.StatusNoContent {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkGetLarge reads a 64 MiB file.
func BenchmarkGetLarge(b *testing.B) {
	h, _ := benchEnv(b, false)
	body := bytes.Repeat([]byte("0123456789abcdef"), largeSize/16)
	if w := serveBench(b, h, "PUT", "/webdav/large", bytes.NewReader(body)); w.status != http.StatusCreated {
		b.Fatalf("status %d", w.status)
	}
	b.SetBytes(largeSize)
	b.ReportAllocs()
	for b.Loop() {
		w := serveBench(b, h, "GET", "/webdav/large", nil)
		if w.status != http.StatusOK || w.n != largeSize {
			b.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
}

const gib = 1 << 30

// patternReader yields n bytes of a 64 KiB random block, repeated: a large
// body that takes no memory of its size and does not compress.
type patternReader struct {
	block []byte
	left  int64
	pos   int
}

func newPatternReader(b *testing.B, n int64) *patternReader {
	b.Helper()
	block := make([]byte, 64<<10)
	if _, err := rand.Read(block); err != nil {
		b.Fatal(err)
	}
	return &patternReader{block: block, left: n}
}

func (p *patternReader) Read(buf []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	buf = buf[:min(int64(len(buf)), p.left)]
	n := copy(buf, p.block[p.pos:])
	p.pos = (p.pos + n) % len(p.block)
	p.left -= int64(n)
	return n, nil
}

// BenchmarkPut1GiB stores a durable 1 GiB file with one PUT: the floor for
// BenchmarkTusUpload1GiB, which runs beside it (-bench 1GiB).
func BenchmarkPut1GiB(b *testing.B) {
	h := tusBenchEnv(b)
	b.SetBytes(gib)
	for b.Loop() {
		putOnce(b, h, gib)
	}
}

// BenchmarkTusUpload1GiB stores the same durable 1 GiB with TUS: a POST,
// then 16 PATCHes of 64 MiB, the last of which commits the file. The
// checksums are carried from PATCH to PATCH, so it should stay close to the
// single PUT.
func BenchmarkTusUpload1GiB(b *testing.B) {
	h := tusBenchEnv(b)
	b.SetBytes(gib)
	for b.Loop() {
		tusOnce(b, h, gib, 64<<20)
	}
}

// BenchmarkTusVsPut1GiB alternates the two uploads in one loop and reports
// their throughput and ratio: on a shared disk, whose speed drifts from
// second to second, a paired run compares them more fairly than two
// benchmarks run one after the other.
func BenchmarkTusVsPut1GiB(b *testing.B) {
	h := tusBenchEnv(b)
	var put, tus time.Duration
	i := 0
	for b.Loop() {
		// Alternate which goes first, so neither always finds a disk the
		// other has just filled with dirty pages.
		first, second := func() { put += timed(func() { putOnce(b, h, gib) }) }, func() { tus += timed(func() { tusOnce(b, h, gib, 64<<20) }) }
		if i%2 == 1 {
			first, second = second, first
		}
		first()
		second()
		i++
	}
	mbps := func(d time.Duration) float64 { return float64(i) * gib / 1e6 / d.Seconds() }
	b.ReportMetric(mbps(put), "put-MB/s")
	b.ReportMetric(mbps(tus), "tus-MB/s")
	b.ReportMetric(put.Seconds()/tus.Seconds(), "tus/put-speed")
}

func timed(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}

// tusBenchEnv is a handler over a durable store that keeps the uploads.
func tusBenchEnv(b *testing.B) *Handler {
	b.Helper()
	store, err := boltstore.Open(b.TempDir(), boltstore.Options{StorageID: testStorageID})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	h, err := New(Config{Store: store, Uploads: store, User: basicAuthUser})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// putOnce stores n bytes at /webdav/large with one PUT.
func putOnce(b *testing.B, h *Handler, n int64) {
	w := serveSized(b, h, "PUT", "/webdav/large", newPatternReader(b, n), n)
	if w.status != http.StatusCreated && w.status != http.StatusNoContent {
		b.Fatalf("PUT: status %d", w.status)
	}
}

// tusOnce stores n bytes at /webdav/large-tus with TUS: a POST, then
// PATCHes of chunk bytes.
func tusOnce(b *testing.B, h *Handler, n, chunk int64) {
	w := serveBench(b, h, "POST", "/webdav/", nil, "Tus-Resumable", "1.0.0",
		"Upload-Length", strconv.FormatInt(n, 10), "Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("large-tus")))
	if w.status != http.StatusCreated {
		b.Fatalf("POST: status %d", w.status)
	}
	loc, err := url.Parse(w.header.Get("Location"))
	if err != nil {
		b.Fatalf("Location %q: %v", w.header.Get("Location"), err)
	}
	for off := int64(0); off < n; off += chunk {
		w := serveSized(b, h, "PATCH", loc.Path, newPatternReader(b, chunk), chunk, "Tus-Resumable", "1.0.0",
			"Upload-Offset", strconv.FormatInt(off, 10), "Content-Type", "application/offset+octet-stream")
		if w.status != http.StatusNoContent {
			b.Fatalf("PATCH at %d: status %d", off, w.status)
		}
	}
}

// BenchmarkGet1GiBLoopback downloads a 1 GiB file over loopback TCP
// through Caddy's write idle timeout wrapper, which limits every ReadFrom
// to 64 KiB as Caddy does by default: the path a real GET takes, where the
// body must still reach the kernel's sendfile (BenchmarkGetLarge, with no
// connection, cannot tell).
func BenchmarkGet1GiBLoopback(b *testing.B) {
	h, _ := benchEnv(b, false)
	putOnceAt(b, h, "/webdav/large", gib)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.SetBasicAuth("einstein", "x")
		h.ServeHTTP(&caddyhttp.IdleTimeoutWriter{
			ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
			Ctrl:                  http.NewResponseController(w),
			Deadline:              caddyhttp.IdleDeadline{Timeout: time.Minute},
			Logger:                zap.NewNop(),
		}, r)
	}))
	defer srv.Close()
	b.SetBytes(gib)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Get(srv.URL + "/webdav/large")
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n != gib {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
}

// putOnceAt stores n bytes at path.
func putOnceAt(b *testing.B, h *Handler, path string, n int64) {
	w := serveSized(b, h, "PUT", path, newPatternReader(b, n), n)
	if w.status != http.StatusCreated && w.status != http.StatusNoContent {
		b.Fatalf("PUT: status %d", w.status)
	}
}
