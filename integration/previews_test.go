package integration

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestPreviews: previews through the real Caddy of pictures einstein puts
// over WebDAV, on his own paths and through a public link; the second
// request answered from the store's cache; a preview gone with its file
// once the trash is emptied; a decompression bomb refused at once.
func TestPreviews(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	pngFile := encodePNG(t, picture(600, 400), png.BestSpeed)
	jpegFile := encodeJPEG(t, picture(800, 600))
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/Pictures", "")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/Pictures/drawing.png", string(pngFile))
	einstein.expect(http.StatusCreated, "PUT", "/webdav/Pictures/photo.jpg", string(jpegFile))

	t.Run("webdav", func(t *testing.T) {
		resp, body := einstein.expect(http.StatusOK, "GET", "/webdav/Pictures/drawing.png?preview=1&x=64&y=64&a=1&c=x", "")
		wantPicture(t, resp, body, "image/png", 64, 43)
		etag := einstein.prop("/webdav/Pictures/drawing.png", "DAV:", "getetag")
		if resp.Header.Get("ETag") != etag {
			t.Fatalf("preview ETag %q, want the file's %q", resp.Header.Get("ETag"), etag)
		}
		einstein.expect(http.StatusNotModified, "GET", "/webdav/Pictures/drawing.png?preview=1&x=64&y=64&a=1", "", "If-None-Match", etag)
		ref := personalSpaceRef(t, s, "einstein")
		resp, body = einstein.expect(http.StatusOK, "GET", "/dav/spaces/"+escapeID(ref)+"/Pictures/photo.jpg?preview=1&x=48&y=48", "")
		wantPicture(t, resp, body, "image/jpeg", 48, 48)
	})

	t.Run("cache", func(t *testing.T) {
		// The first request makes the preview and keeps it in the data
		// directory; the second is answered from there: a preview put in
		// its place comes back, where making it again could not.
		path := "/webdav/Pictures/drawing.png?preview=1&x=100&y=100"
		resp, body := einstein.expect(http.StatusOK, "GET", path, "")
		wantPicture(t, resp, body, "image/png", 128, 128)
		cached := cachedPreviews(t, s, pngFile)
		if len(cached) == 0 {
			t.Fatal("no preview in the cache after the first request")
		}
		marker := encodePNG(t, image.NewGray(image.Rect(0, 0, 7, 7)), png.BestSpeed)
		for _, name := range cached {
			replaceFile(t, name, append([]byte("image/png\n"), marker...))
		}
		resp, body = einstein.expect(http.StatusOK, "GET", path, "")
		if !bytes.Equal([]byte(body), marker) || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("the second request was not answered from the cache: %d bytes of %s", len(body), resp.Header.Get("Content-Type"))
		}
	})

	t.Run("public link", func(t *testing.T) {
		link := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
			"path": {"/Pictures/"}, "shareType": {"3"}, "name": {"Pictures"}})
		anon := newClient(t, s.URL, "")
		resp, body := anon.expect(http.StatusOK, "GET", "/dav/public-files/"+link.Token+"/photo.jpg?preview=1&x=128&y=128&a=1", "")
		wantPicture(t, resp, body, "image/jpeg", 128, 96)
		anon.expect(http.StatusNotFound, "GET", "/dav/public-files/"+link.Token+"/missing.jpg?preview=1&x=128&y=128", "")
	})

	t.Run("gone with its file", func(t *testing.T) {
		if len(cachedPreviews(t, s, pngFile)) == 0 {
			t.Fatal("no preview of the drawing in the cache")
		}
		einstein.expect(http.StatusNoContent, "DELETE", "/webdav/Pictures/drawing.png", "")
		einstein.expect(http.StatusNotFound, "GET", "/webdav/Pictures/drawing.png?preview=1&x=64&y=64", "")
		ref := personalSpaceRef(t, s, "einstein")
		einstein.expect(http.StatusNoContent, "DELETE", "/dav/spaces/trash-bin/"+escapeID(ref), "")
		if left := cachedPreviews(t, s, pngFile); len(left) > 0 {
			t.Fatalf("previews left in the cache after the trash was emptied: %v", left)
		}
		if len(cachedPreviews(t, s, jpegFile)) == 0 {
			t.Fatal("the photo's previews went with the drawing")
		}
	})

	t.Run("decompression bomb", func(t *testing.T) {
		bomb := pngBomb(t, 100_000, 100_000)
		einstein.expect(http.StatusCreated, "PUT", "/webdav/Pictures/bomb.png", string(bomb))
		before := peakRSS(t, s)
		start := time.Now()
		einstein.expect(http.StatusRequestEntityTooLarge, "GET", "/webdav/Pictures/bomb.png?preview=1&x=64&y=64", "")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the bomb took %v to refuse", took)
		}
		if grew := peakRSS(t, s) - before; grew > 16<<20 {
			t.Errorf("the server's peak memory grew by %d MiB refusing a bomb of %d bytes", grew>>20, len(bomb))
		}
	})
}

// TestPreviewBurst: 200 concurrent preview requests of two 20-megapixel
// pictures, in boxes the cache cannot answer yet, with two preview slots.
// Each answer is a preview or a 429 with Retry-After, and the Caddy
// process's peak memory stays under 600 MB: each preview holds, of the
// memory budget (max_memory, 192 MiB by default), what its header says
// decoding and scaling take (81 MB as RGBA, a halving of 20 MB and the
// preview), so one is made at a time, and the collector runs before a
// large share of the budget is given back. Without the budget and the
// slots, 200 decodes would need 16 GB.
func TestPreviewBurst(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{davspaces: []string{
		"previews {",
		"	max_concurrent 2",
		// A busy machine may take seconds per decode: a timeout would be
		// another answer than the ones this test is about.
		"	timeout 2m",
		"}",
	}})
	einstein := newClient(t, s.URL, "einstein")
	einstein.http.Timeout = 3 * time.Minute
	large := encodePNG(t, picture(4500, 4500), png.BestSpeed)
	// A second content of the same picture (PNG decoders stop at IEND).
	other := append(bytes.Clone(large), "another content"...)
	einstein.expect(http.StatusCreated, "PUT", "/webdav/large-1.png", string(large))
	einstein.expect(http.StatusCreated, "PUT", "/webdav/large-2.png", string(other))
	const limit = 600 << 20
	rss := peakRSS(t, s)
	t.Logf("peak memory of the server before the burst: %d MiB (pictures of %d bytes)", rss>>20, len(large))
	if rss > limit/2 {
		t.Fatalf("the server's peak memory is %d MiB before any preview", rss>>20)
	}

	sizes := []int{36, 48, 64, 128, 256, 512, 1024, 1920}
	type answer struct {
		code       int
		retryAfter string
		err        error
	}
	answers := make([]answer, 200)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			edge := sizes[i%len(sizes)]
			p := fmt.Sprintf("/webdav/large-%d.png?preview=1&x=%d&y=%d&a=%d&scalingup=%d", 1+i/len(sizes)%2, edge, edge, i/16%2, i/32%2)
			resp, _, err := einstein.try("GET", p, nil, nil)
			if err != nil {
				answers[i] = answer{err: err}
				return
			}
			answers[i] = answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		}()
	}
	close(start)
	wg.Wait()
	counts := map[int]int{}
	for i, a := range answers {
		switch {
		case a.err != nil:
			t.Fatalf("request %d: %v", i, a.err)
		case a.code == http.StatusTooManyRequests && a.retryAfter == "":
			t.Fatalf("request %d: 429 without Retry-After", i)
		case a.code != http.StatusOK && a.code != http.StatusTooManyRequests:
			t.Fatalf("request %d: status %d", i, a.code)
		}
		counts[a.code]++
	}
	t.Logf("answers: %v", counts)
	if counts[http.StatusOK] == 0 || counts[http.StatusTooManyRequests] == 0 {
		t.Fatalf("answers %v: want previews and 429 beyond the two slots", counts)
	}
	rss = peakRSS(t, s)
	t.Logf("peak memory of the server: %d MiB", rss>>20)
	if rss > limit {
		t.Fatalf("the server's peak memory reached %d MiB, over %d MiB", rss>>20, limit>>20)
	}
}

// picture is an opaque w×h RGBA picture of smooth gradients, which PNG
// compresses well and decodes to 4 bytes a pixel.
func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		row := img.Pix[y*img.Stride:]
		for x := range w {
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = uint8(x*255/w), uint8(y*255/h), 128, 255
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image, level png.CompressionLevel) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: level}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngBomb is a 1×1 PNG whose header declares w×h pixels, its CRC
// corrected: a decoder that trusted it would allocate w×h pixels.
func pngBomb(t *testing.T, w, h uint32) []byte {
	t.Helper()
	b := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)), png.BestSpeed)
	// The signature (8 bytes), then IHDR: length (4), type (4), width,
	// height, 5 more bytes, CRC over type and data.
	ihdr := b[8+4 : 8+4+4+13]
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	binary.BigEndian.PutUint32(b[8+4+4+13:], crc32.ChecksumIEEE(ihdr))
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != int(w) {
		t.Fatalf("the bomb's header: %+v, %v", cfg, err)
	}
	return b
}

// wantPicture checks that a preview answer is a picture of contentType and
// of w×h pixels.
func wantPicture(t *testing.T, resp *http.Response, body, contentType string, w, h int) {
	t.Helper()
	if got := resp.Header.Get("Content-Type"); got != contentType {
		t.Fatalf("preview of type %q, want %q", got, contentType)
	}
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("Content-Length %q for %d bytes", resp.Header.Get("Content-Length"), len(body))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader([]byte(body)))
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("preview %dx%d, %v; want %dx%d", cfg.Width, cfg.Height, err, w, h)
	}
}

// cachedPreviews lists the files of the bolt store's preview cache made
// of content.
func cachedPreviews(t *testing.T, s *server, content []byte) []string {
	t.Helper()
	sum := sha1.Sum(content)
	hexSum := hex.EncodeToString(sum[:])
	names, err := filepath.Glob(filepath.Join(s.Root, "previews", hexSum[:2], hexSum+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// replaceFile puts b in the place of the file name at once, as the cache
// writes its files.
func replaceFile(t *testing.T, name string, b []byte) {
	t.Helper()
	tmp := name + ".test"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// TestPreviewsCluster: with store postgres, the nodes share one preview
// cache in the database and the bucket: a preview made on one node is
// answered from the cache (its row, whose content type the test marks)
// on either, and its row goes when the file is deleted and the trash
// emptied.
func TestPreviewsCluster(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	db := connectClusterDB(t, c)
	einstein := newClient(t, c.lb.URL, "einstein")
	drawing := encodePNG(t, picture(300, 200), png.BestSpeed)
	sum := sha1.Sum(drawing)
	hexSum := hex.EncodeToString(sum[:])
	einstein.expect(http.StatusCreated, "PUT", "/webdav/drawing.png", string(drawing))
	const path = "/webdav/drawing.png?preview=1&x=64&y=64&a=1"
	resp, body := einstein.expect(http.StatusOK, "GET", path, "")
	wantPicture(t, resp, body, "image/png", 64, 43)
	sqlExec(t, db, "UPDATE previews SET content_type = 'image/x-cached' WHERE sha1 = '"+hexSum+"'")
	for range clusterSize { // the load balancer takes turns
		resp, got := einstein.expect(http.StatusOK, "GET", path, "")
		if resp.Header.Get("Content-Type") != "image/x-cached" || got != body {
			t.Fatalf("a second request was not answered from the cache: %s", resp.Header.Get("Content-Type"))
		}
	}
	einstein.expect(http.StatusNoContent, "DELETE", "/webdav/drawing.png", "")
	ref := personalSpaceRef(t, c.lb, "einstein")
	einstein.expect(http.StatusNoContent, "DELETE", "/dav/spaces/trash-bin/"+escapeID(ref), "")
	if n := sqlString(t, db, "SELECT count(*)::text FROM previews WHERE sha1 = '"+hexSum+"'"); n != "0" {
		t.Fatalf("%s previews of the drawing left after the trash was emptied", n)
	}
}
