package preview

import (
	"image"
	"image/jpeg"
	"image/png"
	"io"
)

// jpegQuality is good enough for a thumbnail of a photo at a third of the
// size of a PNG.
const jpegQuality = 85

// encode writes img as JPEG for a photo, PNG for everything else, and
// returns the content type written.
func encode(w io.Writer, img image.Image, kind Kind) (string, error) {
	if kind == JPEG {
		return "image/jpeg", jpeg.Encode(w, img, &jpeg.Options{Quality: jpegQuality})
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return "image/png", enc.Encode(w, img)
}
