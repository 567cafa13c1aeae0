package graph

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"go.uber.org/zap"
)

// writeJSON answers v as JSON with status. It encodes before writing so
// that an encoding failure can still be a clean 500.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		h.logger.Error("graph: encoding an answer", zap.String("path", r.URL.Path), zap.Error(err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	// The answers are per user and change with every write.
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}
