package davhandler

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

const (
	gibibyte      = 1 << 30
	tusBenchChunk = 64 << 20
	benchBigFile  = "/webdav/big.bin"
)

// BenchmarkUpload1GiB compares a durable 1 GiB PUT with the same file sent
// by TUS in 64 MiB PATCHes, in the same run (the target: TUS within 15%).
func BenchmarkUpload1GiB(b *testing.B) {
	b.Run("PUT", func(b *testing.B) {
		h, _ := benchEnv(b, true)
		b.SetBytes(gibibyte)
		for b.Loop() {
			w := serveBench(b, h, http.MethodPut, benchBigFile, io.LimitReader(zeros{}, gibibyte))
			if w.status != http.StatusCreated && w.status != http.StatusNoContent {
				b.Fatalf("status %d", w.status)
			}
		}
	})
	b.Run("TUS-64MiB", func(b *testing.B) {
		h, store := benchEnv(b, true)
		h.uploads = storage.UploadSessions(store)
		b.SetBytes(gibibyte)
		for b.Loop() {
			tusUploadBench(b, h, gibibyte, tusBenchChunk)
		}
	})
}

// tusUploadBench uploads size zero bytes in chunks of chunk bytes.
func tusUploadBench(b *testing.B, h *Handler, size, chunk int64) {
	w := serveBench(b, h, http.MethodPost, "/webdav/", nil, "Tus-Resumable", tusVersion,
		"Upload-Length", strconv.FormatInt(size, 10), "Upload-Metadata", tusMeta("filename", "big.bin"))
	if w.status != http.StatusCreated {
		b.Fatalf("POST: status %d", w.status)
	}
	loc := w.header.Get("Location")
	for off := int64(0); off < size; off += chunk {
		n := min(chunk, size-off)
		w := serveBench(b, h, "PATCH", loc, io.LimitReader(zeros{}, n), "Tus-Resumable", tusVersion,
			"Content-Type", tusContentType, "Upload-Offset", strconv.FormatInt(off, 10))
		if w.status != http.StatusNoContent {
			b.Fatalf("PATCH at %d: status %d", off, w.status)
		}
	}
}
