package preview

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/gif"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/imagebombs"
)

// file is test content as a store gives it.
type file struct {
	*bytes.Reader
	closed bool
}

func (f *file) Close() error { f.closed = true; return nil }

func newFile(b []byte) *file { return &file{Reader: bytes.NewReader(b)} }

func TestBoxSnapsToSizes(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want image.Point
	}{
		{30, 30, image.Pt(36, 36)},
		{36, 37, image.Pt(36, 48)},
		{100, 50, image.Pt(128, 64)},
		{1, 5000, image.Pt(36, 1920)},
	} {
		if got := box(Request{Width: tc.w, Height: tc.h}, DefaultSizes); got != tc.want {
			t.Errorf("box(%d, %d) = %v, want %v", tc.w, tc.h, got, tc.want)
		}
	}
}

func TestEveryFormatInEveryFit(t *testing.T) {
	g := New(Options{})
	for _, kind := range []Kind{PNG, JPEG, GIF, BMP, TIFF, WebP} {
		for _, tc := range []struct {
			name     string
			src      image.Point
			req      Request
			want     image.Point
			wantType string
		}{
			{"aspect kept", image.Pt(400, 200), Request{Width: 128, Height: 128, KeepAspect: true}, image.Pt(128, 64), ""},
			{"box covered", image.Pt(400, 200), Request{Width: 128, Height: 128}, image.Pt(128, 128), ""},
			{"tall, snapped box", image.Pt(100, 300), Request{Width: 60, Height: 60, KeepAspect: true}, image.Pt(21, 64), ""},
			{"small not enlarged", image.Pt(20, 10), Request{Width: 64, Height: 64, KeepAspect: true}, image.Pt(20, 10), ""},
			{"small cover not enlarged", image.Pt(20, 10), Request{Width: 64, Height: 64}, image.Pt(20, 10), ""},
			{"small enlarged when asked", image.Pt(20, 10), Request{Width: 64, Height: 64, KeepAspect: true, ScaleUp: true}, image.Pt(64, 32), ""},
		} {
			src := newFile(encoded(t, kind, gradient(tc.src.X, tc.src.Y)))
			p, err := g.Render(context.Background(), src, kind, tc.req, nil)
			if err != nil {
				t.Fatalf("kind %d, %s: %v", kind, tc.name, err)
			}
			if !src.closed {
				t.Errorf("kind %d, %s: the source was left open", kind, tc.name)
			}
			got := decodedSize(t, p)
			if got != tc.want {
				t.Errorf("kind %d, %s: %v from %v, want %v", kind, tc.name, got, tc.src, tc.want)
			}
			if want := map[bool]string{true: "image/jpeg", false: "image/png"}[kind == JPEG]; p.ContentType != want {
				t.Errorf("kind %d: content type %q, want %q", kind, p.ContentType, want)
			}
		}
	}
}

func decodedSize(t *testing.T, p Preview) image.Point {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(p.Data))
	if err != nil {
		t.Fatalf("the preview does not decode: %v", err)
	}
	return img.Bounds().Size()
}

func TestCoverKeepsTheMiddle(t *testing.T) {
	// Left half black, right half white: the middle crop of a wide picture
	// keeps both halves.
	src := gradient(300, 100)
	p, err := New(Options{}).Render(context.Background(), newFile(encoded(t, PNG, src)), PNG, Request{Width: 64, Height: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, _, _ := image.Decode(bytes.NewReader(p.Data))
	left, _, _, _ := img.At(1, 32).RGBA()
	right, _, _, _ := img.At(62, 32).RGBA()
	// The crop spans x 100..200 of 300: red from about a third to two thirds.
	if l, r := left>>8, right>>8; l < 70 || l > 110 || r < 150 || r > 190 {
		t.Errorf("crop edges have red %d and %d, want about 85 and 170", l, r)
	}
}

func TestText(t *testing.T) {
	g := New(Options{})
	p, err := g.Render(context.Background(), newFile([]byte("# notes\n\tindented\nünïcode ✓\n"+strings.Repeat("x", 200)+"\n")), Text, Request{Width: 256, Height: 256, KeepAspect: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodedSize(t, p); got.X > 256 || got.Y > 256 || got.X < 200 {
		t.Errorf("text preview is %v, want within 256×256 and most of its width", got)
	}
	_, err = g.Render(context.Background(), newFile([]byte("PK\x03\x04\x00\x00binary")), Text, Request{Width: 64, Height: 64}, nil)
	if !errors.Is(err, ErrNotAsNamed) {
		t.Errorf("binary content as text: %v, want ErrNotAsNamed", err)
	}
}

func TestRefusals(t *testing.T) {
	g := New(Options{MaxPixels: 1_000_000})
	for _, tc := range []struct {
		name    string
		content []byte
		kind    Kind
		want    error
	}{
		{"not an image", []byte("hello, I am text"), PNG, ErrNotAsNamed},
		{"truncated", encoded(t, PNG, gradient(50, 50))[:60], PNG, ErrNotAsNamed},
		{"bomb", pngBomb(t, 100_000, 100_000), PNG, ErrTooLarge},
		{"just over the limit", pngBomb(t, 1001, 1000), PNG, ErrTooLarge},
		{"webp bomb", imagebombs.SolidWebP(16384, 16384, gradient(1, 1).NRGBAAt(0, 0)), WebP, ErrTooLarge},
		{"no preview kind", []byte("%PDF-1.7"), Unsupported, ErrUnsupported},
	} {
		src := newFile(tc.content)
		start := time.Now()
		_, err := g.Render(context.Background(), src, tc.kind, Request{Width: 64, Height: 64}, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused after %v", tc.name, d)
		}
		if !src.closed {
			t.Errorf("%s: the source was left open", tc.name)
		}
	}
}

// stalled is content whose reads wait until released once its header has
// been read: the decoding, not the header, is what stalls.
type stalled struct {
	io.ReadSeeker
	release chan struct{}
	header  int
	read    int
}

// stalledFile stalls once the bytes that reading the header of content,
// of kind, takes have been read.
func stalledFile(t *testing.T, content []byte, kind Kind, release chan struct{}) *stalled {
	t.Helper()
	counted := &stalled{ReadSeeker: bytes.NewReader(content), header: math.MaxInt}
	if _, err := New(Options{}).plan(&readRecorder{r: counted}, kind, image.Pt(36, 36), Request{Width: 36, Height: 36}); err != nil {
		t.Fatal(err)
	}
	return &stalled{ReadSeeker: bytes.NewReader(content), release: release, header: counted.read}
}

func (s *stalled) Read(p []byte) (int, error) {
	if s.read >= s.header {
		<-s.release
	}
	n, err := s.ReadSeeker.Read(p)
	s.read += n
	return n, err
}

func (s *stalled) Close() error { return nil }

func TestBusyAndTimeout(t *testing.T) {
	g := New(Options{MaxConcurrent: 2, Timeout: 50 * time.Millisecond})
	release := make(chan struct{})
	content := encoded(t, PNG, gradient(10, 10))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		src := stalledFile(t, content, PNG, release)
		go func() {
			defer wg.Done()
			_, err := g.Render(context.Background(), src, PNG, Request{Width: 36, Height: 36}, nil)
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("stalled preview: %v, want ErrTimeout", err)
			}
		}()
	}
	wg.Wait()
	// Both timed out, but their work still holds the two slots.
	if _, err := g.Render(context.Background(), newFile(content), PNG, Request{Width: 36, Height: 36}, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("third preview while two are stuck: %v, want ErrBusy", err)
	}
	close(release)
	// Once released, the slots free up and a preview is made. On a busy
	// machine one under the race detector may itself pass the 50 ms
	// timeout: that too is tried again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := g.Render(context.Background(), newFile(content), PNG, Request{Width: 36, Height: 36}, nil)
		if err == nil {
			break
		}
		retry := errors.Is(err, ErrBusy) || errors.Is(err, ErrTimeout)
		if !retry || time.Now().After(deadline) {
			t.Fatalf("after the stuck previews ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMemoryBudgetSharedByRequests(t *testing.T) {
	content := encoded(t, PNG, gradient(50, 50))
	req := Request{Width: 36, Height: 36}
	cost := decoderState(50) + 4*50*50 + scaleBytes(image.Pt(50, 50), image.Pt(36, 36), req)
	g := New(Options{MaxMemory: 2 * cost, Timeout: 2 * time.Second})
	held := 2*cost - cost/2
	if !g.memory.TryAcquire(held) {
		t.Fatal("budget taken")
	}
	start := time.Now()
	_, err := g.Render(context.Background(), newFile(content), PNG, req, nil)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("%d bytes with %d of the budget left: %v, want ErrBusy", cost, 2*cost-held, err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond || waited > 1900*time.Millisecond {
		t.Errorf("refused as busy after %v, want after half the timeout", waited)
	}

	// Memory given back while a preview waits lets it through.
	go func() {
		time.Sleep(100 * time.Millisecond)
		g.memory.Release(held)
	}()
	if _, err := g.Render(context.Background(), newFile(content), PNG, req, nil); err != nil {
		t.Errorf("with the budget freed during the wait: %v", err)
	}
	if !g.memory.TryAcquire(2 * cost) {
		t.Error("the preview kept its memory after it was made")
	}
}

func TestOverTheWholeBudget(t *testing.T) {
	content := encoded(t, PNG, gradient(100, 100))
	req := Request{Width: 64, Height: 64}
	for _, tc := range []struct {
		budget int64
		want   error
	}{
		{decoderState(100) + 4*100*100 + scaleBytes(image.Pt(100, 100), image.Pt(64, 64), req), nil},
		{decoderState(100) + 4*100*100 + scaleBytes(image.Pt(100, 100), image.Pt(64, 64), req) - 1, ErrTooLarge},
	} {
		g := New(Options{MaxMemory: tc.budget})
		_, err := g.Render(context.Background(), newFile(content), PNG, req, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("budget %d: %v, want %v", tc.budget, err, tc.want)
		}
	}
}

// TestBombsRefusedFromTheirHeader: a few bytes that declare hundreds of
// megabytes are refused at once, without allocating them, and their cost
// is what their decoders would allocate.
func TestBombsRefusedFromTheirHeader(t *testing.T) {
	box, req := image.Pt(64, 64), Request{Width: 64, Height: 64}
	scale := decoderState(7000) + scaleBytes(image.Pt(7000, 7000), box, req)
	for _, tc := range []struct {
		name    string
		content []byte
		kind    Kind
		cost    int64
		want    error
	}{
		{"lossless webp, NRGBA and its transform", imagebombs.SolidWebP(7000, 7000, gradient(1, 1).NRGBAAt(0, 0)), WebP, 8*7000*7000 + scale, ErrTooLarge},
		{"16-bit png, NRGBA64", imagebombs.DeepPNG(7000, 7000), PNG, 8*7000*7000 + scale, ErrTooLarge},
		{"gif, its first frame paletted", gifBomb(t, 7000, 7000), GIF, 7000*7000 + scale, nil},
	} {
		src := newFile(tc.content)
		cfg, format, err := image.DecodeConfig(src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cost, err := imageCost(src, format, cfg, int64(len(tc.content)), box, req)
		if err != nil || cost != tc.cost {
			t.Errorf("%s: cost %d, %v; want %d", tc.name, cost, err, tc.cost)
		}
		if tc.want == nil {
			continue
		}
		before := totalAlloc()
		_, err = New(Options{}).Render(context.Background(), newFile(tc.content), tc.kind, req, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if grew := totalAlloc() - before; grew > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", tc.name, grew)
		}
	}
}

// TestDecodeCostCoversTheDecoder: for each format and colour model, what
// the decoder really allocates is within the cost found from the header,
// and not far below it.
func TestDecodeCostCoversTheDecoder(t *testing.T) {
	const w, h = 600, 400
	img := gradient(w, h)
	for _, tc := range []struct {
		name    string
		content []byte
	}{
		{"png nrgba", encoded(t, PNG, img)},
		{"png gray", encodedPNG(t, toGray(img))},
		{"png 16-bit", encodedPNG(t, toNRGBA64(img))},
		{"png paletted", encoded(t, GIF, img)}, // GIF's quantizing, as PNG below
		{"png interlaced", interlacedPNG(t, w, h)},
		{"jpeg 4:2:0", encoded(t, JPEG, img)},
		{"jpeg gray", encodedJPEG(t, toGray(img))},
		{"gif", encoded(t, GIF, img)},
		{"bmp", encoded(t, BMP, img)},
		{"tiff", encoded(t, TIFF, img)},
		{"webp lossless", encoded(t, WebP, img)},
	} {
		if tc.name == "png paletted" {
			pal, err := gif.Decode(bytes.NewReader(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			tc.content = encodedPNG(t, pal)
		}
		src := newFile(tc.content)
		cfg, format, err := image.DecodeConfig(src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cost, err := decodeBytes(src, format, cfg.ColorModel, int64(cfg.Width)*int64(cfg.Height), int64(len(tc.content)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cost += decoderState(cfg.Width)
		before := totalAlloc()
		if _, _, err := image.Decode(bytes.NewReader(tc.content)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		allocated := int64(totalAlloc() - before)
		t.Logf("%s: decoding allocated %d bytes, cost %d", tc.name, allocated, cost)
		if allocated > cost || cost > 3*allocated+512<<10 {
			t.Errorf("%s: decoding allocated %d bytes, cost %d", tc.name, allocated, cost)
		}
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func TestJPEGLayout(t *testing.T) {
	baseline := encoded(t, JPEG, gradient(64, 64))
	progressive := bytes.Clone(baseline)
	sof := bytes.Index(progressive, []byte{0xff, 0xc0})
	progressive[sof+1] = 0xc2
	for _, tc := range []struct {
		name    string
		content []byte
		want    jpegLayout
	}{
		{"baseline 4:2:0", baseline, jpegLayout{sampling: []int{4, 1, 1}}},
		{"gray", encodedJPEG(t, toGray(gradient(64, 64))), jpegLayout{sampling: []int{1}}},
		{"progressive", progressive, jpegLayout{progressive: true, sampling: []int{4, 1, 1}}},
	} {
		got, err := readJPEGLayout(newFile(tc.content))
		if err != nil || got.progressive != tc.want.progressive || !slices.Equal(got.sampling, tc.want.sampling) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := readJPEGLayout(newFile([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00})); err == nil {
		t.Error("a JPEG cut before its frame header has a layout")
	}
}

// TestTimedOutPreviewIsKept: a preview whose making outlasts the time
// limit answers ErrTimeout at once, holds its slot and memory until the
// work ends, and is then given to keep, for the client's retry.
func TestTimedOutPreviewIsKept(t *testing.T) {
	g := New(Options{MaxConcurrent: 1, Timeout: 50 * time.Millisecond})
	release := make(chan struct{})
	kept := make(chan Preview, 1)
	slow := stalledFile(t, gifBomb(t, 700, 700), GIF, release)
	start := time.Now()
	_, err := g.Render(context.Background(), slow, GIF, Request{Width: 64, Height: 64}, func(p Preview) { kept <- p })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("stalled GIF: %v, want ErrTimeout", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("timed out after %v", waited)
	}
	if g.slots.TryAcquire(1) || g.memory.TryAcquire(DefaultMaxMemory) {
		t.Error("the timed-out work gave its slot or memory back before it ended")
	}
	close(release)
	select {
	case p := <-kept:
		if got := decodedSize(t, p); got != image.Pt(64, 64) {
			t.Errorf("kept preview %v, want 64x64", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the preview was not kept once the work ended")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !g.slots.TryAcquire(1) || !g.memory.TryAcquire(DefaultMaxMemory) {
		if time.Now().After(deadline) {
			t.Fatal("slot or memory still held after the work ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		name, contentType string
		want              Kind
	}{
		{"a.PNG", "", PNG},
		{"photo.jpeg", "application/octet-stream", JPEG},
		{"noext", "image/webp", WebP},
		{"scan.tif", "", TIFF},
		{"README.md", "", Text},
		{"notes", "text/plain; charset=utf-8", Text},
		{"doc.pdf", "application/pdf", Unsupported},
		{"old.bmp", "", BMP},
	} {
		if got := KindOf(tc.name, tc.contentType); got != tc.want {
			t.Errorf("KindOf(%q, %q) = %d, want %d", tc.name, tc.contentType, got, tc.want)
		}
	}
}
