package preview

import (
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders registered with package image
	_ "image/jpeg"
	_ "image/png"
	"io"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"
)

// decode reads src as kind, within the pixel limit and budget.
func (g *Generator) decode(r io.ReadSeeker, kind Kind) (picture, error) {
	src := &readRecorder{r: r}
	if kind == Text {
		img, err := renderText(src)
		if err != nil {
			return picture{}, err
		}
		return picture{img: img, release: func() {}}, nil
	}
	cfg, _, err := image.DecodeConfig(src)
	if err != nil {
		return picture{}, notAsNamed(src, err)
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return picture{}, fmt.Errorf("%w: %dx%d pixels", ErrNotAsNamed, cfg.Width, cfg.Height)
	}
	if pixels > g.maxPixels {
		return picture{}, fmt.Errorf("%w: %dx%d is over %d pixels", ErrTooLarge, cfg.Width, cfg.Height, g.maxPixels)
	}
	if !g.pixels.TryAcquire(pixels) {
		return picture{}, ErrBusy
	}
	release := func() { g.pixels.Release(pixels) }
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		release()
		return picture{}, fmt.Errorf("reading the image again: %w", err)
	}
	img, _, err := image.Decode(src)
	if err != nil {
		release()
		return picture{}, notAsNamed(src, err)
	}
	return picture{img: img, release: release}, nil
}

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
