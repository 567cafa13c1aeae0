package davhandler

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTusVsPutSmall alternates a durable 4 KiB PUT with the upload the
// ownCloud desktop client makes of a small file, one TUS POST carrying the
// whole content (creation-with-upload), and reports their latencies and
// ratio: the client uploads every small file so.
func BenchmarkTusVsPutSmall(b *testing.B) {
	h := tusBenchEnv(b)
	body := bytes.Repeat([]byte("x"), 4<<10)
	var put, tus time.Duration
	i := 0
	for b.Loop() {
		put += timed(func() { putSmallOnce(b, h, fmt.Sprintf("/webdav/put-%d", i), body) })
		tus += timed(func() { tusSmallOnce(b, h, fmt.Sprintf("tus-%d", i), body) })
		i++
	}
	b.ReportMetric(float64(put.Microseconds())/float64(i), "put-µs")
	b.ReportMetric(float64(tus.Microseconds())/float64(i), "tus-µs")
	b.ReportMetric(tus.Seconds()/put.Seconds(), "tus/put-time")
}

func putSmallOnce(b *testing.B, h *Handler, path string, body []byte) {
	w := serveSized(b, h, "PUT", path, bytes.NewReader(body), int64(len(body)))
	if w.status != http.StatusCreated {
		b.Fatalf("PUT: status %d", w.status)
	}
}

// tusSmallOnce uploads body as name in one POST, with the headers the
// ownCloud desktop client sends.
func tusSmallOnce(b *testing.B, h *Handler, name string, body []byte) {
	n := strconv.Itoa(len(body))
	w := serveSized(b, h, "POST", "/webdav/", bytes.NewReader(body), int64(len(body)),
		"Tus-Resumable", "1.0.0", "Upload-Length", n, "Content-Type", tusContentType,
		"Upload-Offset", "0", "X-OC-Mtime", "1700000000",
		"Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte(name)))
	if w.status != http.StatusCreated {
		b.Fatalf("POST: status %d", w.status)
	}
}
