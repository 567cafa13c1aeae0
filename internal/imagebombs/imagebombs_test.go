package imagebombs

import (
	"bytes"
	"compress/zlib"
	"image"
	"image/color"
	"image/png"
	"io"
	"testing"

	_ "golang.org/x/image/webp"
)

// TestDeepPNGDecodes: the stream built from one repeated row decodes to
// every zero pixel the header declares, its checksum included.
func TestDeepPNGDecodes(t *testing.T) {
	for _, size := range []struct{ w, h int }{{1, 1}, {1, 2}, {3, 2}, {2, 3}, {100, 70}, {5000, 3}, {4100, 9}} {
		img, err := png.Decode(bytes.NewReader(DeepPNG(size.w, size.h)))
		if err != nil {
			t.Fatalf("%dx%d: %v", size.w, size.h, err)
		}
		deep, ok := img.(*image.NRGBA64)
		if !ok || deep.Bounds() != image.Rect(0, 0, size.w, size.h) {
			t.Fatalf("%dx%d: decoded %T of %v", size.w, size.h, img, img.Bounds())
		}
		for _, b := range deep.Pix {
			if b != 0 {
				t.Fatalf("%dx%d: a pixel is not zero", size.w, size.h)
			}
		}
	}
}

// TestZeroRowsIsAValidStream reads the whole stream of a large bomb,
// checksum included, as the decoder of a preview would.
func TestZeroRowsIsAValidStream(t *testing.T) {
	const rowLen, rows = 1 + 8*7000, 700
	z, err := zlib.NewReader(bytes.NewReader(zeroRows(rowLen, rows)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, z)
	if err != nil || n != rowLen*rows {
		t.Fatalf("read %d bytes, %v; want %d", n, err, rowLen*rows)
	}
}

func TestDeepPNGIsSmall(t *testing.T) {
	if n := len(DeepPNG(7000, 7000)); n > 1<<20 {
		t.Fatalf("a 7000x7000 bomb of %d bytes", n)
	}
}

func TestSolidWebPDeclaresItsSize(t *testing.T) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(SolidWebP(7000, 6000, color.NRGBA{A: 255})))
	if err != nil || format != "webp" || cfg.Width != 7000 || cfg.Height != 6000 {
		t.Fatalf("%s %+v %v", format, cfg, err)
	}
}
