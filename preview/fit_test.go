package preview

import (
	"image"
	"runtime"
	"testing"
)

// A large preview of a large picture does without draw.BiLinear's buffer
// (out width x source height x 32 bytes, 184 MB here): it allocates some
// 25 MB (a halving and the preview), under half that buffer even with
// the race detector's overhead and the other tests' renders still going.
func TestFitLargePreviewMemory(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 4000, 3000)) // 48 MB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := fit(src, image.Pt(1920, 1920), Request{KeepAspect: true})
	runtime.ReadMemStats(&after)
	if got := out.Bounds().Size(); got != image.Pt(1920, 1440) {
		t.Fatalf("preview of %v, want 1920x1440", got)
	}
	const bilinearBuffer = 1920 * 3000 * kernelBytes
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bilinearBuffer/2 {
		t.Fatalf("fit allocated %d MB for a picture of %d MB", alloc>>20, len(src.Pix)>>20)
	}
}

// TestFitBytesCoversFit: what fit allocates is what fitBytes says, give or
// take draw's own small buffers.
func TestFitBytesCoversFit(t *testing.T) {
	for _, tc := range []struct {
		src image.Point
		req Request
	}{
		{image.Pt(3000, 2000), Request{Width: 64, Height: 64}},
		{image.Pt(3000, 2000), Request{Width: 1920, Height: 1920, KeepAspect: true}},
		{image.Pt(2500, 2500), Request{Width: 1024, Height: 1024}},
		{image.Pt(300, 200), Request{Width: 256, Height: 256, KeepAspect: true}},
		{image.Pt(200, 100), Request{Width: 512, Height: 512, KeepAspect: true, ScaleUp: true}},
		{image.Pt(20, 10), Request{Width: 64, Height: 64}},
	} {
		src := image.NewRGBA(image.Rectangle{Max: tc.src})
		boxSize := box(tc.req, DefaultSizes)
		want := fitBytes(tc.src, boxSize, tc.req)
		before := totalAlloc()
		fit(src, boxSize, tc.req)
		allocated := int64(totalAlloc() - before)
		if allocated > want+64<<10 || want > allocated+64<<10 {
			t.Errorf("%v into %v: fit allocated %d bytes, fitBytes says %d", tc.src, tc.req, allocated, want)
		}
	}
}
