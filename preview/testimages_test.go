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

	"github.com/davspaces/davspaces/internal/imagebombs"

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
		return imagebombs.SolidWebP(img.Bounds().Dx(), img.Bounds().Dy(), img.NRGBAAt(0, 0))
	default:
		t.Fatalf("no image encoding for kind %d", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

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

// gifBomb is a GIF of one colour, w×h pixels.
func gifBomb(t testing.TB, w, h int) []byte {
	t.Helper()
	b, err := imagebombs.FlatGIF(w, h)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	imagebombs.Chunk(&out, "IHDR", ihdr)
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
	imagebombs.Chunk(&out, "IDAT", idat.Bytes())
	imagebombs.Chunk(&out, "IEND", nil)
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
