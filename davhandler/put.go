package davhandler

import (
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

func (h *Handler) handlePut(w http.ResponseWriter, r *http.Request, req *request) error {
	if r.Header.Get("Content-Range") != "" {
		return errorf(http.StatusBadRequest, "Content-Range is not allowed on PUT: upload the whole content")
	}
	if isV1Chunk(r) {
		return h.handleV1Chunk(w, r, req)
	}
	expected, err := parseExpectedChecksum(r)
	if err != nil {
		return err
	}
	mtime, err := parseMtime(r)
	if err != nil {
		return err
	}
	t, err := h.resolve(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	place, err := h.checkWrite(r, req, t, r.ContentLength)
	if err != nil {
		return err
	}
	return h.commitFile(w, r, t, place, fileContent{
		fill: func(up storage.Upload) error {
			storage.HashInline(up, inlineDigests(expected)...)
			return receiveBody(up, r.Body)
		},
		expected:    expected,
		mtime:       mtime,
		contentType: storedContentType(r.Header.Get("Content-Type")),
	})
}
