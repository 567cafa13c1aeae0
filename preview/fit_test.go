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
