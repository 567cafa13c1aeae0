package davhandler

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/preview"
	"github.com/davspaces/davspaces/storage"
)

// Previews: GET or HEAD of a file with ?preview=1&x=W&y=H[&a=1]
// [&scalingup=1][&c=etag], as the ownCloud apps and ownCloud Web ask for
// them, on every WebDAV base path and on public links.

const (
	msgNoPreview       = "No preview is available for this file"
	msgPreviewMismatch = "The file's content is not what its name says: no preview can be made"
	msgPreviewTooLarge = "The image is too large for a preview"
	msgPreviewBusy     = "Too many previews are being made: retry shortly"
	msgPreviewTimeout  = "Making the preview took too long"
	// maxPreviewEdge bounds x and y before they are snapped.
	maxPreviewEdge = 1 << 16
	// previewRetryAfter is the Retry-After of a 429 when every preview
	// slot is taken: previews are short work.
	previewRetryAfter = 1
)

// wantsPreview reports whether r asks for a preview rather than the file.
func wantsPreview(r *http.Request) bool {
	return r.URL.Query().Get("preview") == "1"
}

// servePreview answers a preview request for t, an existing node the user
// may read.
func (h *Handler) servePreview(w http.ResponseWriter, r *http.Request, t *target) error {
	req, err := previewRequest(r.URL.Query())
	if err != nil {
		return err
	}
	kind := preview.KindOf(t.node.Name, t.node.ContentType)
	if h.previews == nil || t.node.IsFolder() || kind == preview.Unsupported {
		return errorf(http.StatusNotFound, msgNoPreview)
	}
	req = h.previews.Snap(req)
	hdr := w.Header()
	hdr.Set("ETag", quoteETag(t.node.ETag))
	hdr.Set("Cache-Control", "private, no-cache")
	if inm, present, err := etagListHeader(r, "If-None-Match"); err != nil {
		return err
	} else if present && inm.matches(t.node.ETag, false) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	p, err := h.makePreview(r, t, kind, req)
	if err != nil {
		hdr.Del("ETag")
		hdr.Del("Cache-Control")
		return previewError(err)
	}
	hdr.Set("Content-Type", p.ContentType)
	hdr.Set("Content-Length", strconv.Itoa(len(p.Data)))
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(p.Data)
	}
	return nil
}

// makePreview returns the preview of t's content, from the cache when the
// store keeps one, made and kept otherwise.
func (h *Handler) makePreview(r *http.Request, t *target, kind preview.Kind, req preview.Request) (preview.Preview, error) {
	ctx := r.Context()
	key := storage.PreviewKey{SHA1: t.node.Checksums.SHA1, Width: req.Width, Height: req.Height, KeepAspect: req.KeepAspect, ScaleUp: req.ScaleUp}
	cache := h.previewCache
	if !key.Valid() {
		cache = nil
	}
	if cache != nil {
		data, contentType, err := cache.CachedPreview(ctx, key)
		if err == nil {
			return preview.Preview{Data: data, ContentType: contentType}, nil
		}
		if !errors.Is(err, storage.ErrNotFound) {
			h.logger.Warn("reading a cached preview", zap.Error(err))
		}
	}
	_, content, err := h.store.Open(ctx, t.space.ID, t.node.ID)
	if err != nil {
		return preview.Preview{}, err
	}
	var keep func(preview.Preview)
	if cache != nil {
		// Also called when the preview is made after the request timed
		// out, so that the client's retry finds it: the request's
		// context may be gone by then.
		keepCtx := context.WithoutCancel(ctx)
		keep = func(p preview.Preview) {
			if err := cache.KeepPreview(keepCtx, key, p.Data, p.ContentType); err != nil {
				h.logger.Warn("keeping a preview", zap.Error(err))
			}
		}
	}
	return h.previews.Render(ctx, content, kind, req, keep)
}

// previewRequest reads the box and fit of a preview request: x and y
// (default: the smallest size), a=1 to keep the aspect, scalingup=1 to
// let a small picture grow. c, the etag the client has, only busts caches.
func previewRequest(q url.Values) (preview.Request, error) {
	var req preview.Request
	var err error
	if req.Width, err = previewEdge(q, "x"); err != nil {
		return req, err
	}
	if req.Height, err = previewEdge(q, "y"); err != nil {
		return req, err
	}
	req.KeepAspect = q.Get("a") == "1" || q.Get("a") == "true"
	req.ScaleUp = q.Get("scalingup") == "1" || q.Get("scalingup") == "true"
	return req, nil
}

func previewEdge(q url.Values, name string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > maxPreviewEdge {
		return 0, errorf(http.StatusBadRequest, "The preview %s must be a number of pixels from 1 to %d", name, maxPreviewEdge)
	}
	return n, nil
}

// previewError maps the preview package's refusals to their answers.
func previewError(err error) error {
	switch {
	case errors.Is(err, preview.ErrUnsupported):
		return errorf(http.StatusNotFound, msgNoPreview)
	case errors.Is(err, preview.ErrNotAsNamed):
		return &davError{status: http.StatusUnsupportedMediaType, message: msgPreviewMismatch, cause: err}
	case errors.Is(err, preview.ErrTooLarge):
		return &davError{status: http.StatusRequestEntityTooLarge, message: msgPreviewTooLarge, cause: err}
	case errors.Is(err, preview.ErrBusy):
		return &davError{status: http.StatusTooManyRequests, message: msgPreviewBusy, retryAfter: previewRetryAfter, reason: "preview slots"}
	case errors.Is(err, preview.ErrTimeout):
		return &davError{status: http.StatusServiceUnavailable, message: msgPreviewTimeout, cause: err, retryAfter: previewRetryAfter}
	}
	return err
}
