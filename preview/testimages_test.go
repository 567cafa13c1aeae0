package preview

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// The images the tests decode, made here in each format.

// gradient is a w×h picture whose colour changes across it, so that a
// crop and a scale can be told apart.
func gradient(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(255 * x / w), G: uint8(255 * y / h), B: 128, A: 255})
		}
	}
	return img
}

// encoded returns img in kind's format; WebP, which Go only decodes, is a
// solid picture of img's size.
func encoded(t testing.TB, kind Kind, img *image.NRGBA) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch kind {
	case PNG:
		err = png.Encode(&b, img)
	case JPEG:
		err = jpeg.Encode(&b, img, nil)
	case GIF:
		err = gif.Encode(&b, img, nil)
	case BMP:
		err = bmp.Encode(&b, img)
	case TIFF:
		err = tiff.Encode(&b, img, nil)
	case WebP:
		return solidWebP(img.Bounds().Dx(), img.Bounds().Dy(), img.NRGBAAt(0, 0))
	default:
		t.Fatalf("no image encoding for kind %d", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// solidWebP is a lossless WebP (VP8L) of one colour: five prefix codes of
// one symbol each, so that the pixels themselves take no bits at all.
func solidWebP(w, h int, c color.NRGBA) []byte {
	var bits bitWriter
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	bits.write(1, 1) // alpha is used
	bits.write(0, 3) // version
	bits.write(0, 1) // no transform
	bits.write(0, 1) // no colour cache
	bits.write(0, 1) // no meta prefix codes
	for _, symbol := range []uint8{c.G, c.R, c.B, c.A} {
		bits.write(1, 1) // a simple code
		bits.write(0, 1) // of one symbol
		bits.write(1, 1) // of eight bits
		bits.write(uint32(symbol), 8)
	}
	bits.write(1, 1) // the distance code: simple, one symbol of one bit, 0
	bits.write(0, 1)
	bits.write(0, 1)
	bits.write(0, 1)
	data := append([]byte{0x2f}, bits.bytes()...)
	if len(data)%2 == 1 {
		data = append(data, 0)
	}
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(data)-(len(data)%2)))...)
	chunk = append(chunk, data...)
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	out = append(out, "WEBP"...)
	return append(out, chunk...)
}

// bitWriter writes bits least significant first, as VP8L reads them.
type bitWriter struct {
	buf   []byte
	nbits uint
}

func (b *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if b.nbits%8 == 0 {
			b.buf = append(b.buf, 0)
		}
		b.buf[len(b.buf)-1] |= byte((v>>i)&1) << (b.nbits % 8)
		b.nbits++
	}
}

func (b *bitWriter) bytes() []byte { return b.buf }

// pngBomb is a valid PNG header that declares w×h pixels; the pixels never
// follow.
func pngBomb(t testing.TB, w, h uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	// The signature (8 bytes), the IHDR chunk's length and type (8), then
	// width, height and the rest of IHDR (13) and its CRC.
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// png16Bomb is a 16-bit RGBA PNG of w×h pixels, all zero, which deflate
// packs a thousandfold: a few hundred kilobytes that decode to 8 bytes a
// pixel. The rows are written one at a time, never held whole.
func png16Bomb(t testing.TB, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits, RGBA, deflate, no filter, not interlaced
	writeChunk(&out, "IHDR", ihdr)
	var idat bytes.Buffer
	z, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 1+8*w) // filter byte 0, then the pixels
	for range h {
		if _, err := z.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

func writeChunk(w *bytes.Buffer, kind string, data []byte) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	w.WriteString(kind)
	w.Write(data)
	w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
}

// gifBomb is a GIF of one colour, w×h pixels.
func gifBomb(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// interlacedPNG is an Adam7-interlaced gray PNG of w×h pixels, which Go
// only decodes: each pass's rows of zeros, filter byte 0 first.
func interlacedPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 8, 0, 0, 0, 1) // 8 bits, gray, Adam7
	writeChunk(&out, "IHDR", ihdr)
	var idat bytes.Buffer
	z := zlib.NewWriter(&idat)
	passes := []struct{ x0, y0, dx, dy int }{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	for _, p := range passes {
		pw, ph := (w-p.x0+p.dx-1)/p.dx, (h-p.y0+p.dy-1)/p.dy
		if pw <= 0 || ph <= 0 {
			continue
		}
		row := make([]byte, 1+pw)
		for range ph {
			z.Write(row)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

func encodedPNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodedJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func toGray(src image.Image) *image.Gray {
	dst := image.NewGray(src.Bounds())
	draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
	return dst
}

func toNRGBA64(src image.Image) *image.NRGBA64 {
	dst := image.NewNRGBA64(src.Bounds())
	draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
	return dst
}
