// Package preview makes thumbnails: it decodes an image (PNG, JPEG, GIF,
// BMP, TIFF, WebP) or renders the first lines of a plain text file, scales
// the picture into a box of one of the configured sizes and encodes it, all
// within limits on pixels, time and concurrency, so that no file and no
// burst of requests can take the server's memory or CPU.
package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"runtime"
	"time"

	"golang.org/x/sync/semaphore"
)

// The errors Render returns, each answered with its own status by the
// protocol handlers.
var (
	// ErrUnsupported: there is no preview for files of this kind.
	ErrUnsupported = errors.New("no preview for this type of file")
	// ErrNotAsNamed: the content cannot be read as the kind its name or
	// content type says.
	ErrNotAsNamed = errors.New("the content is not what its name says")
	// ErrTooLarge: the image has more pixels than the limit, found before
	// anything is decoded.
	ErrTooLarge = errors.New("the image has too many pixels for a preview")
	// ErrBusy: the previews being made use every slot or the whole pixel
	// budget; the client may retry.
	ErrBusy = errors.New("too many previews are being made")
	// ErrTimeout: making the preview took longer than the time limit.
	ErrTimeout = errors.New("making the preview took too long")
)

// DefaultSizes are the edge lengths a requested box is snapped to.
var DefaultSizes = []int{36, 48, 64, 128, 256, 512, 1024, 1920}

const (
	// DefaultMaxPixels is the largest image, in pixels, that is decoded.
	DefaultMaxPixels = 50_000_000
	// DefaultTimeout bounds the decoding, scaling and encoding of one preview.
	DefaultTimeout = 10 * time.Second
	// textLimit is how much of a text file is read to render its first lines.
	textLimit = 16 << 10
)

// Options are a Generator's limits; the zero value of each field means its
// default.
type Options struct {
	// Sizes are the allowed edge lengths: a requested width or height is
	// snapped up to the next one, or down to the largest.
	Sizes []int
	// MaxPixels refuses larger images before decoding (ErrTooLarge); it is
	// also the budget of pixels decoded at once over all requests.
	MaxPixels int64
	// MaxConcurrent bounds the previews made at once; more get ErrBusy.
	// Default: the number of CPUs.
	MaxConcurrent int
	// Timeout bounds the making of one preview.
	Timeout time.Duration
}

// Request is what a client asks for: a box, and how to fit the picture.
type Request struct {
	Width, Height int
	// KeepAspect fits the whole picture inside the box; otherwise the
	// picture covers the box and is cropped to it.
	KeepAspect bool
	// ScaleUp lets a picture smaller than the box grow to it.
	ScaleUp bool
}

// Preview is an encoded thumbnail.
type Preview struct {
	Data        []byte
	ContentType string
}

// Generator makes previews within its limits. It is safe for concurrent use.
type Generator struct {
	sizes     []int
	maxPixels int64
	timeout   time.Duration
	slots     *semaphore.Weighted
	pixels    *semaphore.Weighted
}

// New returns a Generator with opts' limits.
func New(opts Options) *Generator {
	g := &Generator{
		sizes:     opts.Sizes,
		maxPixels: opts.MaxPixels,
		timeout:   opts.Timeout,
	}
	if len(g.sizes) == 0 {
		g.sizes = DefaultSizes
	}
	if g.maxPixels <= 0 {
		g.maxPixels = DefaultMaxPixels
	}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	concurrent := opts.MaxConcurrent
	if concurrent <= 0 {
		concurrent = runtime.NumCPU()
	}
	g.slots = semaphore.NewWeighted(int64(concurrent))
	g.pixels = semaphore.NewWeighted(g.maxPixels)
	return g
}

// Sizes returns the edge lengths boxes are snapped to.
func (g *Generator) Sizes() []int { return g.sizes }

// Render makes the preview of src, a file of the given kind, for req. It
// takes src over and closes it. When the time limit passes, Render returns
// ErrTimeout at once while the work, which cannot be stopped halfway, goes
// on holding its slot and its pixels until it ends.
func (g *Generator) Render(ctx context.Context, src io.ReadSeekCloser, kind Kind, req Request) (Preview, error) {
	if kind == Unsupported {
		src.Close()
		return Preview{}, ErrUnsupported
	}
	if req.Width <= 0 || req.Height <= 0 {
		src.Close()
		return Preview{}, fmt.Errorf("preview box %dx%d: width and height must be positive", req.Width, req.Height)
	}
	if !g.slots.TryAcquire(1) {
		src.Close()
		return Preview{}, ErrBusy
	}
	type result struct {
		p   Preview
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := g.render(src, kind, req)
		// Closed and released before the answer, which the caller may
		// act on at once: the source is closed when Render returns.
		src.Close()
		g.slots.Release(1)
		done <- result{p, err}
	}()
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.p, r.err
	case <-timer.C:
		return Preview{}, ErrTimeout
	case <-ctx.Done():
		return Preview{}, ctx.Err()
	}
}

// render decodes, scales and encodes; it runs in its own goroutine.
func (g *Generator) render(src io.ReadSeeker, kind Kind, req Request) (Preview, error) {
	pic, err := g.decode(src, kind)
	if err != nil {
		return Preview{}, err
	}
	defer pic.release()
	thumb := fit(pic.img, box(req, g.sizes), req)
	var buf bytes.Buffer
	contentType, err := encode(&buf, thumb, kind)
	if err != nil {
		return Preview{}, fmt.Errorf("encoding preview: %w", err)
	}
	return Preview{Data: buf.Bytes(), ContentType: contentType}, nil
}

// picture is a decoded image and the pixels it holds of the budget.
type picture struct {
	img     image.Image
	release func()
}

// Snap returns req with its box snapped to the allowed sizes, the box a
// preview of req is made for.
func (g *Generator) Snap(req Request) Request {
	b := box(req, g.sizes)
	req.Width, req.Height = b.X, b.Y
	return req
}
