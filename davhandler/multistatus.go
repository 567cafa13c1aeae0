package davhandler

import (
	"net/http"
	"strconv"

	"go.uber.org/zap"
)

// The 207 itself is written by davxml.Multistatus; what is left here is
// the handler's part of it.

// endMultistatus logs the failure of a multistatus whose 207 has gone
// out: all that is left is to cut the document short, which clients
// detect as malformed.
func (h *Handler) endMultistatus(r *http.Request, err error) error {
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		h.logger.Debug("multistatus abandoned by the client", zap.String("uri", r.RequestURI), zap.Error(err))
	default:
		h.logger.Error("streaming multistatus", zap.String("uri", r.RequestURI), zap.Error(err))
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
