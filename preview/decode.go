package preview

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders registered with package image
	_ "image/jpeg"
	_ "image/png"
	"io"
	"runtime"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"
)

// plan is what a preview will take, known from the header, and how its
// picture is decoded.
type plan struct {
	kind Kind
	// cost is the memory, in bytes, that decoding and scaling allocate.
	cost int64
	// decode reads the picture from src, which is at its start.
	decode func(src *readRecorder) (image.Image, error)
}

// plan reads the header of src, a file of kind, and refuses what is over
// the pixel limit or the whole memory budget.
func (g *Generator) plan(src *readRecorder, kind Kind, boxSize image.Point, req Request) (plan, error) {
	if kind == Text {
		decodeText := func(src *readRecorder) (image.Image, error) { return renderText(src) }
		return plan{kind: kind, cost: textCost(boxSize, req), decode: decodeText}, nil
	}
	cfg, format, err := image.DecodeConfig(src)
	if err != nil {
		return plan{}, notAsNamed(src, err)
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return plan{}, fmt.Errorf("%w: %dx%d pixels", ErrNotAsNamed, cfg.Width, cfg.Height)
	}
	if pixels > g.maxPixels {
		return plan{}, fmt.Errorf("%w: %dx%d is over %d pixels", ErrTooLarge, cfg.Width, cfg.Height, g.maxPixels)
	}
	size, err := src.Seek(0, io.SeekEnd)
	if err != nil {
		return plan{}, fmt.Errorf("reading the image's size: %w", err)
	}
	cost, err := imageCost(src, format, cfg, size, boxSize, req)
	if err != nil {
		return plan{}, notAsNamed(src, err)
	}
	if cost > g.maxMemory {
		return plan{}, fmt.Errorf("%w: a %dx%d %s takes %d bytes of memory, over the budget of %d",
			ErrTooLarge, cfg.Width, cfg.Height, format, cost, g.maxMemory)
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return plan{}, fmt.Errorf("reading the image again: %w", err)
	}
	return plan{kind: kind, cost: cost, decode: decodeImage}, nil
}

func decodeImage(src *readRecorder) (image.Image, error) {
	img, _, err := image.Decode(src)
	if err != nil {
		return nil, notAsNamed(src, err)
	}
	return img, nil
}

// reserve takes cost bytes of the memory budget, waiting for them until
// wait ends.
func (g *Generator) reserve(wait context.Context, cost int64) error {
	// Tried first without waiting, which succeeds even when wait has
	// ended: the work of a request that timed out still gets made.
	if g.memory.TryAcquire(cost) {
		return nil
	}
	if err := g.memory.Acquire(wait, cost); err != nil {
		return fmt.Errorf("%w: waiting for %d bytes of memory: %v", ErrBusy, cost, err)
	}
	return nil
}

// giveBack returns cost bytes to the budget, once the picture they were
// for is garbage. When they are a large share of it, the collector runs
// first: otherwise the next preview, which may take them at once, would
// grow the heap beside the garbage not yet collected, and the process
// could reach twice the budget.
func (g *Generator) giveBack(cost int64) {
	if cost >= g.maxMemory/collectShare {
		runtime.GC()
	}
	g.memory.Release(cost)
}

// collectShare: a preview that held at least this fraction of the budget
// has the collector run before its memory is given back.
const collectShare = 8

// notAsNamed says that content could not be decoded, unless reading it
// failed: a read error of the store is the server's, not the file's.
func notAsNamed(src *readRecorder, err error) error {
	if src.err != nil {
		return fmt.Errorf("reading the file: %w", src.err)
	}
	return fmt.Errorf("%w: %v", ErrNotAsNamed, err)
}

// readRecorder keeps the first error of its reader other than io.EOF,
// which tells a store's failure from a decoder's refusal.
type readRecorder struct {
	r   io.ReadSeeker
	err error
}

func (r *readRecorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && r.err == nil {
		r.err = err
	}
	return n, err
}

func (r *readRecorder) Seek(offset int64, whence int) (int64, error) {
	return r.r.Seek(offset, whence)
}
