package preview

import (
	"image"
	"math"

	"golang.org/x/image/draw"
)

// box is the requested box with each side snapped up to the next allowed
// size, or down to the largest.
func box(req Request, sizes []int) image.Point {
	return image.Pt(snap(req.Width, sizes), snap(req.Height, sizes))
}

func snap(n int, sizes []int) int {
	for _, s := range sizes {
		if n <= s {
			return s
		}
	}
	return sizes[len(sizes)-1]
}

// fit scales src into the box: whole and with its aspect kept when
// req.KeepAspect, otherwise covering the box and cropped to its middle.
// Without req.ScaleUp a picture is never enlarged, so a small one stays
// small (and a covering crop is no larger than the picture).
func fit(src image.Image, boxSize image.Point, req Request) image.Image {
	sb := src.Bounds()
	crop, out, scaled := fitting(sb, boxSize, req)
	if !scaled {
		return src
	}
	src, crop = halve(src, crop, out)
	// RGBA, which draw has fast paths into: into NRGBA, ApproxBiLinear
	// sets each pixel through a boxed colour, garbage of 8 bytes a pixel.
	dst := image.NewRGBA(image.Rect(0, 0, out.X, out.Y))
	scaler := draw.Interpolator(draw.BiLinear)
	if kernelSize(out, crop) > maxKernelBuffer {
		scaler = draw.ApproxBiLinear
	}
	scaler.Scale(dst, dst.Bounds(), src, crop, draw.Src, nil)
	return dst
}

// fitting is the part of a picture of bounds sb that fit scales, and the
// size it scales it to; scaled is false when the picture is left as it is.
func fitting(sb image.Rectangle, boxSize image.Point, req Request) (crop image.Rectangle, out image.Point, scaled bool) {
	sw, sh := float64(sb.Dx()), float64(sb.Dy())
	scaleW, scaleH := float64(boxSize.X)/sw, float64(boxSize.Y)/sh
	scale := math.Max(scaleW, scaleH)
	if req.KeepAspect {
		scale = math.Min(scaleW, scaleH)
	}
	if !req.ScaleUp {
		scale = math.Min(scale, 1)
	}
	size := image.Pt(atLeastOne(sw*scale), atLeastOne(sh*scale))
	out = size
	if !req.KeepAspect {
		out = image.Pt(min(size.X, boxSize.X), min(size.Y, boxSize.Y))
	}
	if size == sb.Size() && out == size {
		return sb, out, false
	}
	// The part of src that, scaled, fills out: its middle.
	crop = image.Rect(0, 0, atLeastOne(float64(out.X)/scale), atLeastOne(float64(out.Y)/scale))
	crop = crop.Add(sb.Min).Add(image.Pt((sb.Dx()-crop.Dx())/2, (sb.Dy()-crop.Dy())/2)).Intersect(sb)
	return crop, out, true
}

// fitBytes is what fit allocates for a picture of size into boxSize,
// following the same steps: the halvings, the preview and BiLinear's
// kernel buffer.
func fitBytes(size, boxSize image.Point, req Request) int64 {
	crop, out, scaled := fitting(image.Rectangle{Max: size}, boxSize, req)
	if !scaled {
		return 0
	}
	var total int64
	for w, h := crop.Dx(), crop.Dy(); w >= 2*out.X && h >= 2*out.Y; {
		w, h = w/2, h/2
		total += 4 * int64(w) * int64(h)
		crop = image.Rect(0, 0, w, h)
	}
	total += 4 * int64(out.X) * int64(out.Y)
	if k := kernelSize(out, crop); k <= maxKernelBuffer {
		total += k
	}
	return total
}

// kernelSize is the intermediate image draw.BiLinear makes to scale crop
// to out.
func kernelSize(out image.Point, crop image.Rectangle) int64 {
	return int64(out.X) * int64(crop.Dy()) * kernelBytes
}

const (
	// kernelBytes is what draw.BiLinear keeps for each pixel of its
	// intermediate image, out's width by the source's height: four
	// float64s. For a large preview of a large picture that is more than
	// the picture itself (1920 x 5000 x 32 bytes: 307 MB), outside the
	// pixel budget.
	kernelBytes = 32
	// maxKernelBuffer is the intermediate image draw.BiLinear may have;
	// a larger preview is made with draw.ApproxBiLinear, which has none,
	// from a source halved to less than twice its size, where it loses
	// little.
	maxKernelBuffer = 16 << 20
)

// halve halves the crop of src, each halving the average of 2x2 pixels
// (draw.ApproxBiLinear at a ratio of two), while it stays at least twice
// out, and returns the picture and crop left: a mipmap's step, so that
// the last scaling is a small one and its buffer small. Each halving
// costs a quarter of the memory of the one before.
func halve(src image.Image, crop image.Rectangle, out image.Point) (image.Image, image.Rectangle) {
	for crop.Dx() >= 2*out.X && crop.Dy() >= 2*out.Y {
		half := image.NewRGBA(image.Rect(0, 0, crop.Dx()/2, crop.Dy()/2))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), src, crop, draw.Src, nil)
		src, crop = half, half.Bounds()
	}
	return src, crop
}

func atLeastOne(f float64) int { return max(1, int(math.Round(f))) }
