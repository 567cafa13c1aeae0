package integration

import (
	"fmt"
	"image/color"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/imagebombs"
)

// TestPreviewBombBurst: einstein asks, all at once, for 40 previews of
// decompression bombs, each a few kilobytes that declare up to 49
// megapixels (under max_pixels): lossless WebP and 16-bit PNG, which
// decode to 8 bytes a pixel, GIF, and ones just under the memory budget,
// each in a box the cache cannot answer yet. Meanwhile marie lists her
// folder (PROPFIND Depth 1) in a loop. Her listings stay fast (p99 under
// 200 ms) and the server's peak resident set (VmHWM) stays under 300 MB,
// on the default settings: previews hold bytes of a budget, found from
// the headers, not pixels.
func TestPreviewBombBurst(t *testing.T) {
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	einstein.http.Timeout = 2 * time.Minute
	gif, err := imagebombs.FlatGIF(7000, 7000)
	if err != nil {
		t.Fatal(err)
	}
	black := color.NRGBA{A: 255}
	bombs := map[string][]byte{
		"lossless.webp": imagebombs.SolidWebP(7000, 7000, black),
		"deep.png":      imagebombs.DeepPNG(7000, 7000),
		"flat.gif":      gif,
		"budget.webp":   imagebombs.SolidWebP(4400, 4400, black),
		"budget.png":    imagebombs.DeepPNG(4400, 4400),
	}
	names := make([]string, 0, len(bombs))
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/bombs", "")
	for name, content := range bombs {
		einstein.expect(http.StatusCreated, "PUT", "/webdav/bombs/"+name, string(content))
		names = append(names, name)
		t.Logf("%s: %d bytes", name, len(content))
	}
	slices.Sort(names)
	marie := newClient(t, s.URL, "marie")
	marie.expect(http.StatusCreated, "MKCOL", "/webdav/notes", "")
	for i := range 20 {
		marie.expect(http.StatusCreated, "PUT", fmt.Sprintf("/webdav/notes/%02d.txt", i), "note")
	}
	settleAfterStart(t, s.cmd.Process.Pid)

	var (
		counts    sync.Map // status -> *atomic.Int64
		listings  []time.Duration
		stopLists = make(chan struct{})
		listsDone = make(chan struct{})
	)
	var hwmKB int
	hwmKB, _ = peakDuring(t, s.cmd.Process.Pid, func() {
		go func() {
			defer close(listsDone)
			listings = bystanderListings(t, marie, "/webdav/notes", stopLists)
		}()
		var wg sync.WaitGroup
		sizes := []int{36, 48, 64, 128, 256, 512, 1024, 1920}
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := names[i%len(names)]
				edge := sizes[i/len(names)]
				p := fmt.Sprintf("/webdav/bombs/%s?preview=1&x=%d&y=%d", name, edge, edge)
				resp, _, err := einstein.try("GET", p, nil, nil)
				status := 0
				switch {
				case err != nil:
					t.Errorf("%s: %v", p, err)
				case (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && resp.Header.Get("Retry-After") == "":
					t.Errorf("%s: %d without Retry-After", p, resp.StatusCode)
				default:
					status = resp.StatusCode
				}
				n, _ := counts.LoadOrStore(fmt.Sprintf("%s %d", name, status), new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}()
		}
		wg.Wait()
		// The work of a preview that timed out may go on: the peak is
		// read once it is over.
		time.Sleep(2 * time.Second)
		close(stopLists)
		<-listsDone
	})
	counts.Range(func(k, v any) bool {
		t.Logf("answers %s: %d", k, v.(*atomic.Int64).Load())
		return true
	})
	if len(listings) == 0 {
		t.Fatal("no listing ended")
	}
	p99 := percentile(listings, 99)
	t.Logf("%d listings of marie during the burst: median %v, p99 %v, max %v; server VmHWM %d kB",
		len(listings), percentile(listings, 50), p99, slices.Max(listings), hwmKB)
	if p99 > 200*time.Millisecond {
		t.Errorf("marie's listings took %v at p99, want under 200ms", p99)
	}
	if hwmKB > 300_000 {
		t.Errorf("the server's peak resident set was %d kB, want under 300 MB", hwmKB)
	}
}
