package integration

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	bombs := map[string][]byte{
		"lossless.webp": solidWebP(7000, 7000),
		"deep.png":      deepPNG(t, 7000, 7000),
		"flat.gif":      flatGIF(t, 7000, 7000),
		"budget.webp":   solidWebP(4400, 4400),
		"budget.png":    deepPNG(t, 4400, 4400),
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

// solidWebP is a lossless WebP (VP8L) of w×h black pixels in a few dozen
// bytes: five prefix codes of one symbol each, so that the pixels take no
// bits at all.
func solidWebP(w, h int) []byte {
	var bits webpBits
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	bits.write(1, 1) // alpha is used
	bits.write(0, 3) // version
	bits.write(0, 1) // no transform
	bits.write(0, 1) // no colour cache
	bits.write(0, 1) // no meta prefix codes
	for range 4 {    // green, red, blue, alpha: one 8-bit symbol, 0
		bits.write(1, 1)
		bits.write(0, 1)
		bits.write(1, 1)
		bits.write(0, 8)
	}
	bits.write(1, 1) // the distance code: one 1-bit symbol, 0
	bits.write(0, 1)
	bits.write(0, 1)
	bits.write(0, 1)
	data := append([]byte{0x2f}, bits.buf...)
	if len(data)%2 == 1 {
		data = append(data, 0)
	}
	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	chunk = append(chunk, data...)
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	out = append(out, "WEBP"...)
	return append(out, chunk...)
}

// webpBits writes bits least significant first, as VP8L reads them.
type webpBits struct {
	buf   []byte
	nbits uint
}

func (b *webpBits) write(v uint32, n uint) {
	for i := range n {
		if b.nbits%8 == 0 {
			b.buf = append(b.buf, 0)
		}
		b.buf[len(b.buf)-1] |= byte((v>>i)&1) << (b.nbits % 8)
		b.nbits++
	}
}

// deepPNG is a 16-bit RGBA PNG of w×h zero pixels, which deflate packs a
// thousandfold and Go decodes to 8 bytes a pixel; its rows are written one
// at a time.
func deepPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits, RGBA, deflate, no filter, not interlaced
	pngChunk(&out, "IHDR", ihdr)
	var idat bytes.Buffer
	z, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 1+8*w)
	for range h {
		if _, err := z.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	pngChunk(&out, "IDAT", idat.Bytes())
	pngChunk(&out, "IEND", nil)
	return out.Bytes()
}

func pngChunk(w *bytes.Buffer, kind string, data []byte) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	w.WriteString(kind)
	w.Write(data)
	w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
}

// flatGIF is a GIF of w×h pixels of one colour: some tens of kilobytes.
func flatGIF(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
