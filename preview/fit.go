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
	sw, sh := float64(sb.Dx()), float64(sb.Dy())
	scaleW, scaleH := float64(boxSize.X)/sw, float64(boxSize.Y)/sh
	scale := math.Max(scaleW, scaleH)
	if req.KeepAspect {
		scale = math.Min(scaleW, scaleH)
	}
	if !req.ScaleUp {
		scale = math.Min(scale, 1)
	}
	scaled := image.Pt(atLeastOne(sw*scale), atLeastOne(sh*scale))
	out := scaled
	if !req.KeepAspect {
		out = image.Pt(min(scaled.X, boxSize.X), min(scaled.Y, boxSize.Y))
	}
	if scaled == sb.Size() && out == scaled {
		return src
	}
	// The part of src that, scaled, fills out: its middle.
	crop := image.Rect(0, 0, atLeastOne(float64(out.X)/scale), atLeastOne(float64(out.Y)/scale))
	crop = crop.Add(sb.Min).Add(image.Pt((sb.Dx()-crop.Dx())/2, (sb.Dy()-crop.Dy())/2)).Intersect(sb)
	dst := image.NewNRGBA(image.Rect(0, 0, out.X, out.Y))
	draw.BiLinear.Scale(dst, dst.Bounds(), src, crop, draw.Src, nil)
	return dst
}

func atLeastOne(f float64) int { return max(1, int(math.Round(f))) }
