package preview

import (
	"bytes"
	"context"
	"errors"
	"image"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
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
			p, err := g.Render(context.Background(), src, kind, tc.req)
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
	p, err := New(Options{}).Render(context.Background(), newFile(encoded(t, PNG, src)), PNG, Request{Width: 64, Height: 64})
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
	p, err := g.Render(context.Background(), newFile([]byte("# notes\n\tindented\nünïcode ✓\n"+strings.Repeat("x", 200)+"\n")), Text, Request{Width: 256, Height: 256, KeepAspect: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := decodedSize(t, p); got.X > 256 || got.Y > 256 || got.X < 200 {
		t.Errorf("text preview is %v, want within 256×256 and most of its width", got)
	}
	_, err = g.Render(context.Background(), newFile([]byte("PK\x03\x04\x00\x00binary")), Text, Request{Width: 64, Height: 64})
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
		{"webp bomb", solidWebP(16384, 16384, gradient(1, 1).NRGBAAt(0, 0)), WebP, ErrTooLarge},
		{"no preview kind", []byte("%PDF-1.7"), Unsupported, ErrUnsupported},
	} {
		src := newFile(tc.content)
		start := time.Now()
		_, err := g.Render(context.Background(), src, tc.kind, Request{Width: 64, Height: 64})
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

// stalled is content whose reads wait until released.
type stalled struct {
	io.ReadSeeker
	release chan struct{}
}

func (s *stalled) Read(p []byte) (int, error) {
	<-s.release
	return s.ReadSeeker.Read(p)
}

func (s *stalled) Close() error { return nil }

func TestBusyAndTimeout(t *testing.T) {
	g := New(Options{MaxConcurrent: 2, Timeout: 50 * time.Millisecond})
	release := make(chan struct{})
	content := encoded(t, PNG, gradient(10, 10))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.Render(context.Background(), &stalled{bytes.NewReader(content), release}, PNG, Request{Width: 36, Height: 36})
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("stalled preview: %v, want ErrTimeout", err)
			}
		}()
	}
	wg.Wait()
	// Both timed out, but their work still holds the two slots.
	if _, err := g.Render(context.Background(), newFile(content), PNG, Request{Width: 36, Height: 36}); !errors.Is(err, ErrBusy) {
		t.Errorf("third preview while two are stuck: %v, want ErrBusy", err)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := g.Render(context.Background(), newFile(content), PNG, Request{Width: 36, Height: 36})
		if err == nil {
			break
		}
		if !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			t.Fatalf("after the stuck previews ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPixelBudgetSharedByRequests(t *testing.T) {
	g := New(Options{MaxPixels: 10_000})
	if !g.pixels.TryAcquire(9_000) {
		t.Fatal("budget taken")
	}
	_, err := g.Render(context.Background(), newFile(encoded(t, PNG, gradient(50, 50))), PNG, Request{Width: 36, Height: 36})
	if !errors.Is(err, ErrBusy) {
		t.Errorf("2,500 pixels with 1,000 of the budget left: %v, want ErrBusy", err)
	}
	g.pixels.Release(9_000)
	if _, err := g.Render(context.Background(), newFile(encoded(t, PNG, gradient(50, 50))), PNG, Request{Width: 36, Height: 36}); err != nil {
		t.Errorf("with the budget free: %v", err)
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
