// Package preview makes thumbnails: it decodes an image (PNG, JPEG, GIF,
// BMP, TIFF, WebP) or renders the first lines of a plain text file, scales
// the picture into a box of one of the configured sizes and encodes it, all
// within limits on pixels, memory, time and concurrency, so that no file
// and no burst of requests can take the server's memory or CPU.
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
	// ErrTooLarge: the image has more pixels than the limit, or needs more
	// memory than the whole budget, found before anything is decoded.
	ErrTooLarge = errors.New("the image is too large for a preview")
	// ErrBusy: the previews being made use every slot, or the memory
	// budget stayed taken while the preview waited for its share; the
	// client may retry.
	ErrBusy = errors.New("too many previews are being made")
	// ErrTimeout: making the preview took longer than the time limit.
	ErrTimeout = errors.New("making the preview took too long")
)

// DefaultSizes are the edge lengths a requested box is snapped to.
var DefaultSizes = []int{36, 48, 64, 128, 256, 512, 1024, 1920}

const (
	// DefaultMaxPixels is the largest image, in pixels, that is decoded.
	DefaultMaxPixels = 50_000_000
	// DefaultMaxMemory is the memory budget of all the previews being made
	// at once. The Go collector may let the heap grow to twice what is
	// live, so a burst of previews can make the process grow by twice the
	// budget.
	DefaultMaxMemory = 192 << 20
	// budgetWait bounds how long a preview waits for its share of the
	// memory budget before it is refused as busy.
	budgetWait = 2 * time.Second
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
	// MaxPixels refuses larger images before decoding (ErrTooLarge), which
	// bounds the time a decode takes.
	MaxPixels int64
	// MaxMemory is the budget, in bytes, of the previews being made at
	// once: each holds what its decoding and scaling allocate, known from
	// the image's header. An image that needs more than the whole budget
	// is refused (ErrTooLarge); one that finds too little of it left waits
	// briefly, then is refused as busy.
	MaxMemory int64
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
	maxMemory int64
	timeout   time.Duration
	slots     *semaphore.Weighted
	memory    *semaphore.Weighted
}

// New returns a Generator with opts' limits.
func New(opts Options) *Generator {
	g := &Generator{
		sizes:     opts.Sizes,
		maxPixels: opts.MaxPixels,
		maxMemory: opts.MaxMemory,
		timeout:   opts.Timeout,
	}
	if len(g.sizes) == 0 {
		g.sizes = DefaultSizes
	}
	if g.maxPixels <= 0 {
		g.maxPixels = DefaultMaxPixels
	}
	if g.maxMemory <= 0 {
		g.maxMemory = DefaultMaxMemory
	}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	concurrent := opts.MaxConcurrent
	if concurrent <= 0 {
		concurrent = runtime.NumCPU()
	}
	g.slots = semaphore.NewWeighted(int64(concurrent))
	g.memory = semaphore.NewWeighted(g.maxMemory)
	return g
}

// Sizes returns the edge lengths boxes are snapped to.
func (g *Generator) Sizes() []int { return g.sizes }

// Render makes the preview of src, a file of the given kind, for req. It
// takes src over and closes it. When the time limit passes, Render returns
// ErrTimeout at once, while the work, which cannot be stopped halfway,
// goes on holding its slot and its memory until it ends: the memory is
// taken until then, and the budget says so. keep, when not nil, is given
// every preview made, before Render returns it or, after a timeout, when
// the work ends: a cache that keeps it answers the client's retry.
func (g *Generator) Render(ctx context.Context, src io.ReadSeekCloser, kind Kind, req Request, keep func(Preview)) (Preview, error) {
	if kind == Unsupported {
		src.Close()
		return Preview{}, ErrUnsupported
	}
	if req.Width <= 0 || req.Height <= 0 {
		src.Close()
		return Preview{}, fmt.Errorf("preview box %dx%d: width and height must be positive", req.Width, req.Height)
	}
	// The work waits for its memory a short while at most, and not once
	// Render has returned: a request never waits past its timeout, and a
	// wait that ends before it is told apart (busy) from a timeout.
	wait, stopWaiting := context.WithTimeout(ctx, min(budgetWait, g.timeout/2))
	defer stopWaiting()
	type result struct {
		p   Preview
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := g.render(wait, src, kind, req)
		// Closed and released before the answer, which the caller may
		// act on at once: the source is closed when Render returns.
		src.Close()
		if err == nil && keep != nil {
			keep(p)
		}
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

// render reads the header, takes a slot and the memory the header says
// the preview needs, then decodes, scales and encodes; it runs in its own
// goroutine. wait bounds the wait for memory. An image over the limits is
// refused before it takes a slot, whatever the load, so that the answer
// says it is no use trying again.
func (g *Generator) render(wait context.Context, r io.ReadSeeker, kind Kind, req Request) (Preview, error) {
	src := &readRecorder{r: r}
	boxSize := box(req, g.sizes)
	plan, err := g.plan(src, kind, boxSize, req)
	if err != nil {
		return Preview{}, err
	}
	if !g.slots.TryAcquire(1) {
		return Preview{}, ErrBusy
	}
	defer g.slots.Release(1)
	if err := g.reserve(wait, plan.cost); err != nil {
		return Preview{}, err
	}
	p, err := g.produce(src, plan, boxSize, req)
	g.giveBack(plan.cost)
	return p, err
}

// produce decodes, scales and encodes src as plan says.
func (g *Generator) produce(src *readRecorder, plan plan, boxSize image.Point, req Request) (Preview, error) {
	img, err := plan.decode(src)
	if err != nil {
		return Preview{}, err
	}
	thumb := fit(img, boxSize, req)
	var buf bytes.Buffer
	contentType, err := encode(&buf, thumb, plan.kind)
	if err != nil {
		return Preview{}, fmt.Errorf("encoding preview: %w", err)
	}
	return Preview{Data: buf.Bytes(), ContentType: contentType}, nil
}

// Snap returns req with its box snapped to the allowed sizes, the box a
// preview of req is made for.
func (g *Generator) Snap(req Request) Request {
	b := box(req, g.sizes)
	req.Width, req.Height = b.X, b.Y
	return req
}
