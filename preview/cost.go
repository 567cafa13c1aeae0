package preview

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
)

// The memory a preview takes is known before anything is decoded: the
// header gives the size and the colour model, and with them what the
// decoder allocates. That, and what scaling allocates, is what a preview
// holds of the generator's byte budget, so that no file, however small,
// makes the server allocate more than the budget: a few bytes of lossless
// WebP or of a 16-bit PNG may declare hundreds of megabytes of pixels.

// imageCost returns the bytes that decoding src, whose header is cfg and
// format one of image's format names, and making a preview of it for req
// in boxSize allocate at most. size is the length of src.
func imageCost(src io.ReadSeeker, format string, cfg image.Config, size int64, boxSize image.Point, req Request) (int64, error) {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	decoded, err := decodeBytes(src, format, cfg.ColorModel, pixels, size)
	if err != nil {
		return 0, err
	}
	return decoderState(cfg.Width) + decoded + scaleBytes(image.Pt(cfg.Width, cfg.Height), boxSize, req), nil
}

// decoderState is what a decoder keeps beside the image: its buffers,
// tables and inflater, and a row or two of up to 8 bytes a pixel.
func decoderState(width int) int64 {
	return 256<<10 + 16*int64(width)
}

// decodeBytes is what the decoder of format allocates for an image of
// pixels pixels of model.
func decodeBytes(src io.ReadSeeker, format string, model color.Model, pixels, size int64) (int64, error) {
	switch format {
	case "png":
		interlaced, err := pngInterlaced(src)
		if err != nil {
			return 0, err
		}
		if interlaced {
			// Each Adam7 pass is decoded into an image of its own, then
			// merged into the whole: the passes together are one more
			// image.
			return 2 * modelBytes(model, pixels), nil
		}
		return modelBytes(model, pixels), nil
	case "jpeg":
		layout, err := readJPEGLayout(src)
		if err != nil {
			return 0, err
		}
		return layout.bytes(model, pixels), nil
	case "webp":
		return webpBytes(model, pixels), nil
	case "tiff":
		// The decoder reads from a buffer of the whole file, since the
		// content is no io.ReaderAt, which grows by up to a quarter; and
		// one strip or tile at a time is decompressed into a buffer of
		// its own, at most the image's size.
		return 2*modelBytes(model, pixels) + size + size/4, nil
	}
	// gif (its first frame only, a paletted image), bmp: the image.
	return modelBytes(model, pixels), nil
}

// modelBytes is the size of the in-memory image of pixels pixels that the
// standard decoders return for model.
func modelBytes(model color.Model, pixels int64) int64 {
	switch model {
	case color.GrayModel, color.AlphaModel:
		return pixels
	case color.Gray16Model, color.Alpha16Model:
		return 2 * pixels
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4 * pixels
	case color.YCbCrModel:
		return 3 * pixels // 4:4:4; a JPEG's layout says better
	case color.NYCbCrAModel:
		return 4 * pixels
	}
	if _, ok := model.(color.Palette); ok {
		return pixels
	}
	return 8 * pixels // RGBA64, NRGBA64 and whatever else: the widest
}

// webpBytes: a lossless (VP8L) picture is decoded as NRGBA, and its
// colour-indexing transform expands it into a second buffer of that
// size; a lossy one (VP8) is YCbCr 4:2:0; with alpha, the alpha plane is
// decoded as a lossless picture of its own (as above) and copied into
// the plane.
func webpBytes(model color.Model, pixels int64) int64 {
	switch model {
	case color.YCbCrModel:
		return pixels * 3 / 2
	case color.NYCbCrAModel:
		return pixels*3/2 + pixels + 8*pixels
	}
	return 8 * pixels
}

// scaleBytes is what fit and encode allocate for a picture of size into
// boxSize: fit's steps, and the encoded preview, no larger than the
// pixels it encodes.
func scaleBytes(size, boxSize image.Point, req Request) int64 {
	out := 4 * int64(min(size.X, boxSize.X)) * int64(min(size.Y, boxSize.Y))
	if req.ScaleUp {
		out = 4 * int64(boxSize.X) * int64(boxSize.Y)
	}
	return fitBytes(size, boxSize, req) + out
}

// pngInterlaced reads the interlace method from the IHDR chunk of a PNG,
// which the PNG signature and the chunk's length and type precede.
func pngInterlaced(src io.ReadSeeker) (bool, error) {
	var head [8 + 8 + 13]byte
	if err := readAt(src, 0, head[:]); err != nil {
		return false, err
	}
	return head[28] != 0, nil
}

// jpegLayout is what the SOF segment of a JPEG says about its decoding.
type jpegLayout struct {
	progressive bool
	// sampling are the components' horizontal × vertical factors.
	sampling []int
}

// bytes is what Go's JPEG decoder allocates: a plane per component,
// subsampled by its factor against the largest; for a progressive image
// also the coefficients of every block, 64 int32 per 64 pixels of a
// plane; and for RGB or CMYK, the converted image.
func (l jpegLayout) bytes(model color.Model, pixels int64) int64 {
	largest := 1
	for _, s := range l.sampling {
		largest = max(largest, s)
	}
	var planes int64
	for _, s := range l.sampling {
		planes += pixels * int64(s) / int64(largest)
	}
	total := planes
	if l.progressive {
		total += 4 * planes
	}
	if model == color.RGBAModel || model == color.CMYKModel {
		total += 4 * pixels
	}
	// The planes are allocated in whole 16×16 blocks: up to 15 rows and
	// columns more, which a small image notices and a large one does not.
	return total + total/8 + 4096
}

var errNoSOF = errors.New("no frame header in the JPEG")

// readJPEGLayout finds the SOF segment of a JPEG, skipping the segments
// before it by their lengths.
func readJPEGLayout(src io.ReadSeeker) (jpegLayout, error) {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return jpegLayout{}, fmt.Errorf("reading the image's header: %w", err)
	}
	r := bufio.NewReaderSize(src, 4096)
	if _, err := r.Discard(2); err != nil { // SOI
		return jpegLayout{}, errNoSOF
	}
	for {
		marker, err := nextMarker(r)
		if err != nil {
			return jpegLayout{}, err
		}
		var lenBytes [2]byte
		if _, err := io.ReadFull(r, lenBytes[:]); err != nil {
			return jpegLayout{}, errNoSOF
		}
		n := int(binary.BigEndian.Uint16(lenBytes[:])) - 2
		if n < 0 {
			return jpegLayout{}, errNoSOF
		}
		if !isSOF(marker) {
			if _, err := r.Discard(n); err != nil {
				return jpegLayout{}, errNoSOF
			}
			continue
		}
		seg := make([]byte, n)
		if _, err := io.ReadFull(r, seg); err != nil || n < 6 {
			return jpegLayout{}, errNoSOF
		}
		comps := int(seg[5])
		if n < 6+3*comps {
			return jpegLayout{}, errNoSOF
		}
		l := jpegLayout{progressive: marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce}
		for i := range comps {
			f := seg[6+3*i+1]
			l.sampling = append(l.sampling, max(1, int(f>>4))*max(1, int(f&0x0f)))
		}
		return l, nil
	}
}

// nextMarker reads up to and past the next marker, 0xff then its code.
func nextMarker(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, errNoSOF
		}
		if b != 0xff {
			continue
		}
		for b == 0xff { // fill bytes
			if b, err = r.ReadByte(); err != nil {
				return 0, errNoSOF
			}
		}
		if b != 0 && (b < 0xd0 || b > 0xd8) && b != 0x01 { // not stuffing, RST, SOI or TEM
			return b, nil
		}
	}
}

// isSOF reports whether marker starts a frame: SOF0 to SOF15 but DHT
// (c4), JPG (c8) and DAC (cc).
func isSOF(marker byte) bool {
	return marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc
}

// readAt reads len(p) bytes of src from offset off.
func readAt(src io.ReadSeeker, off int64, p []byte) error {
	if _, err := src.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("reading the image's header: %w", err)
	}
	if _, err := io.ReadFull(src, p); err != nil {
		return fmt.Errorf("reading the image's header: %w", err)
	}
	return nil
}
