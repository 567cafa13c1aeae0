package storetest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// stallTests pin that a store holds nothing another call needs while it
// reads a client's body: a body that stalls delays its own call only.
var stallTests = []conformanceTest{
	{"StalledBodiesHoldNothing", testStalledBodiesHoldNothing},
}

// Each kind of body a store reads, this many at once, stalls: more than
// any connection pool a store opens by default, so that a store holding
// a connection, a write transaction or a store-wide lock while it reads
// cannot serve the calls that follow.
const stalledPerKind = 24

// How long the test waits for the stalled calls to be reading their
// bodies, and for each of the calls made meanwhile: long enough for a
// loaded machine, far shorter than a stall, which lasts until released.
const (
	stallReachWait = 30 * time.Second
	stallCallWait  = 30 * time.Second
)

// stalledBody sends first and then blocks until release is closed, when
// it ends; reading reports, once, that its reader reached the stall.
type stalledBody struct {
	first   io.Reader
	reached func()
	release <-chan struct{}
	once    sync.Once
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if n, _ := b.first.Read(p); n > 0 {
		return n, nil
	}
	b.once.Do(b.reached)
	<-b.release
	return 0, io.EOF
}

// A TUS append, a PUT and a chunk part whose bodies stall, many of each at
// once, take nothing other calls need: while they wait, every other call
// of the store answers, and once released each stalled call keeps what it
// received.
func testStalledBodiesHoldNothing(t *testing.T, f *fixture) {
	const sent = "one hundred bytes or so of a body whose sender then stalls, as a slow or hostile client does...."
	release := make(chan struct{})
	var (
		reached sync.WaitGroup
		done    sync.WaitGroup
		mu      sync.Mutex
		errs    []error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	body := func() io.Reader {
		reached.Add(1)
		return &stalledBody{first: strings.NewReader(sent), reached: reached.Done, release: release}
	}
	stall := func(call func() error) {
		done.Add(1)
		go func() {
			defer done.Done()
			if err := call(); err != nil {
				fail(err)
			}
		}()
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			close(release)
			done.Wait()
		}
	}
	t.Cleanup(stop)

	// Every session and upload exists before the first body stalls.
	sessions := make([]storage.UploadSession, stalledPerKind)
	chunkedUploads := make([]string, stalledPerKind)
	for i := range stalledPerKind {
		sessions[i] = f.newSession(t, fmt.Sprintf("tus-%d", i), 10<<20)
		chunkedUploads[i] = f.newChunkedUpload(t, fmt.Sprintf("stalled-%d", i)).ID
	}
	for i := range stalledPerKind {
		us, chunked := sessions[i], chunkedUploads[i]
		tusBody, putBody, chunkBody := body(), body(), body()
		stall(func() error {
			got, err := f.s.AppendSession(f.ctx, us.ID, 0, tusBody, nil)
			if err == nil && got.Offset != int64(len(sent)) {
				err = fmt.Errorf("stalled append kept %d bytes, want %d", got.Offset, len(sent))
			}
			return err
		})
		stall(func() error { return f.putStalled(fmt.Sprintf("put-%d", i), putBody, sent) })
		stall(func() error {
			c, err := f.s.PutChunk(f.ctx, chunked, "00000", chunkBody)
			if err == nil && c.Size != int64(len(sent)) {
				err = fmt.Errorf("stalled part kept %d bytes, want %d", c.Size, len(sent))
			}
			return err
		})
	}
	if !waitGroupWithin(&reached, stallReachWait) {
		t.Fatalf("not all %d stalled bodies were being read at once after %v: the store serialises calls that wait for a client",
			3*stalledPerKind, stallReachWait)
	}

	for _, c := range f.callsBesideStalls() {
		ctx, cancel := context.WithTimeout(f.ctx, stallCallWait)
		start := time.Now()
		err := c.run(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s while %d bodies stall: %v after %v", c.name, 3*stalledPerKind, err, time.Since(start).Round(time.Millisecond))
		}
	}

	stop()
	if len(errs) > 0 {
		t.Fatalf("stalled calls, once released: %v", errs)
	}
}

// putStalled uploads body as file name, which must then hold want.
func (f *fixture) putStalled(name string, body io.Reader, want string) error {
	up, err := f.s.NewUpload(f.ctx, f.space.ID)
	if err != nil {
		return err
	}
	defer up.Discard()
	if _, err := io.Copy(up, body); err != nil {
		return err
	}
	n, _, err := up.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: name})
	if err == nil && n.Size != int64(len(want)) {
		err = fmt.Errorf("stalled PUT stored %d bytes, want %d", n.Size, len(want))
	}
	return err
}

// callsBesideStalls are the calls of other users' requests: a listing, a
// PUT, a GET, and the start and end of each kind of upload.
func (f *fixture) callsBesideStalls() []struct {
	name string
	run  func(ctx context.Context) error
} {
	put := func(ctx context.Context, name, content string) (storage.Node, error) {
		up, err := f.s.NewUpload(ctx, f.space.ID)
		if err != nil {
			return storage.Node{}, err
		}
		defer up.Discard()
		if _, err := io.Copy(up, strings.NewReader(content)); err != nil {
			return storage.Node{}, err
		}
		n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: name})
		return n, err
	}
	return []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"ReadDirProps", func(ctx context.Context) error {
			_, err := f.s.ReadDirProps(ctx, f.space.ID, f.root(), user.ID, "", 100)
			return err
		}},
		{"PUT and GET", func(ctx context.Context) error {
			n, err := put(ctx, "beside", "content beside the stalls")
			if err != nil {
				return err
			}
			_, c, err := f.s.Open(ctx, f.space.ID, n.ID)
			if err != nil {
				return err
			}
			defer c.Close()
			b, err := io.ReadAll(c)
			if err == nil && string(b) != "content beside the stalls" {
				err = fmt.Errorf("read %q", b)
			}
			return err
		}},
		{"a whole TUS upload", func(ctx context.Context) error {
			us, err := f.s.CreateSession(ctx, f.sessionFor("tus-beside", 3))
			if err == nil {
				_, err = f.s.AppendSession(ctx, us.ID, 0, strings.NewReader("abc"), nil)
			}
			if err == nil {
				_, _, err = f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
			}
			return err
		}},
		{"a chunk part", func(ctx context.Context) error {
			_, err := f.s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "beside", User: user.ID, Expires: time.Now().Add(chunkTTL)})
			if err == nil {
				_, err = f.s.PutChunk(ctx, "beside", "00000", strings.NewReader("abc"))
			}
			return err
		}},
	}
}

// waitGroupWithin waits for wg at most d and reports whether it was done.
func waitGroupWithin(wg *sync.WaitGroup, d time.Duration) bool {
	ok := make(chan struct{})
	go func() {
		wg.Wait()
		close(ok)
	}()
	select {
	case <-ok:
		return true
	case <-time.After(d):
		return false
	}
}
