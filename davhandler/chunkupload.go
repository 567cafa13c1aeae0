package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// What chunking NG and v1 chunks share: an upload's ownership and the
// errors of starting and changing it, its parts and their order, and the
// limits a new part must keep.

// createChunkedError answers an upload the store would not start: its ID,
// built from the user's and the client's names, is too long.
func createChunkedError(id string, err error) error {
	err = fmt.Errorf("starting chunked upload %.64q: %w", id, err)
	if errors.Is(err, storage.ErrInvalid) {
		return &davError{status: http.StatusBadRequest, message: "The upload's name is too long", cause: err}
	}
	return err
}

var errAssembling = errorf(http.StatusConflict, "The upload is being assembled: it takes no more changes")

// assemblingError answers a change the store refused because the upload
// has been claimed meanwhile.
func assemblingError(err error) *davError {
	return &davError{status: errAssembling.status, message: errAssembling.message, cause: err}
}

// ownChunkedUpload loads upload id if the user started it.
func (h *Handler) ownChunkedUpload(ctx context.Context, req *request, id string) (storage.ChunkedUpload, error) {
	u, err := h.chunks.ChunkedUpload(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return u, errNotFound
	case err != nil:
		return u, fmt.Errorf("reading chunked upload %s: %w", id, err)
	case u.User != req.user.ID:
		return u, errNotFound
	}
	return u, nil
}

// parseTotalLength reads OC-Total-Length, the size of the whole file;
// -1 when absent.
func parseTotalLength(r *http.Request) (int64, error) {
	v := r.Header.Get("OC-Total-Length")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || v[0] < '0' || v[0] > '9' {
		return 0, errorf(http.StatusBadRequest, "OC-Total-Length must be a non-negative integer, got %q", v)
	}
	return n, nil
}

// partLimit is the most bytes a part may hold, and the answer to one that
// holds more.
type partLimit struct {
	max     int64 // negative: no limit
	refusal *davError
}

var noPartLimit = partLimit{max: -1}

// tighter returns the stricter of two limits.
func (l partLimit) tighter(o partLimit) partLimit {
	if l.max < 0 || (o.max >= 0 && o.max < l.max) {
		return o
	}
	return l
}

// partLimit bounds a part so that it and the stored bytes of the other
// parts fit the announced total, when there is one, and the free quota of
// space, where the file will replace replaced bytes, beside the length
// the upload reserved there (negative: an upload that reserves nothing).
// Parts stored in parallel may each pass it; the store refuses a part
// that takes the reservation past the quota, and the assembly checks the
// quota again.
func (h *Handler) partLimit(ctx context.Context, space storage.Space, replaced, total, stored, reserved int64) (partLimit, error) {
	limit := noPartLimit
	if total >= 0 {
		limit = limit.tighter(partLimit{max: max(total-stored, 0), refusal: errorf(http.StatusBadRequest,
			"The parts would exceed OC-Total-Length, %d bytes", total)})
	}
	free, limited, err := h.freeQuota(ctx, space)
	if err != nil {
		return noPartLimit, err
	}
	if limited {
		room := free + replaced - stored // an upload from before reservations
		if reserved >= 0 {
			// The free quota is net of the upload's own reservation,
			// which is its to fill: what it reserved beyond its parts.
			room = free + max(reserved-stored, 0)
		}
		limit = limit.tighter(partLimit{max: max(room, 0), refusal: &davError{
			status: http.StatusInsufficientStorage, message: msgQuotaExceeded,
			cause: fmt.Errorf("%d bytes free, %d in parts", free, stored)}})
	}
	return limit, nil
}

// listParts lists the parts of upload id.
func (h *Handler) listParts(ctx context.Context, id string) ([]storage.Chunk, error) {
	parts, err := h.chunks.Chunks(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("listing the parts of chunked upload %s: %w", id, err)
	}
	return parts, nil
}

// storedBesides is the size of the parts but the one called name, which a
// new part of that name replaces.
func storedBesides(parts []storage.Chunk, name string) int64 {
	return partsSize(parts) - sizeOfPart(parts, name)
}

func partsSize(parts []storage.Chunk) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}

func sizeOfPart(parts []storage.Chunk, name string) int64 {
	for _, p := range parts {
		if p.Name == name {
			return p.Size
		}
	}
	return 0
}

// putPart streams the request body into part name of upload id. A body
// past its limit, or not matching check, fails: the store keeps none of it.
func (h *Handler) putPart(r *http.Request, id, name string, limit partLimit, check *checksum.Verifier) error {
	if limit.max >= 0 && r.ContentLength > limit.max {
		return limit.refusal
	}
	src := &partReader{body: bodyReader{r: r.Body}, limit: limit, check: check}
	_, err := h.chunks.PutChunkAfter(r.Context(), id, name, h.partBefore(r.Context(), id, name), src)
	if err == nil {
		return nil
	}
	if de, ok := errors.AsType[*davError](err); ok {
		return de
	}
	if src.body.err != nil {
		return bodyReadError(src.body.err)
	}
	return putPartError(err)
}

// partBefore names the part that part name follows in the file as the
// parts stand now ("" when none does), so that the store can hash it
// after that one as it arrives. A guess that proves wrong at the assembly
// (a part missing between them) only costs a second read of the parts.
func (h *Handler) partBefore(ctx context.Context, id, name string) string {
	parts, err := h.chunks.Chunks(ctx, id)
	if err != nil {
		return "" // PutChunkAfter meets the same error
	}
	prev := ""
	for _, p := range parts {
		if p.Name != v1ChecksumPart && naturalCompare(p.Name, name) < 0 && (prev == "" || naturalCompare(p.Name, prev) > 0) {
			prev = p.Name
		}
	}
	return prev
}

// putPartError answers a part the store refused.
func putPartError(err error) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrConflict):
		return assemblingError(err)
	case errors.Is(err, storage.ErrInvalid):
		return &davError{status: http.StatusBadRequest, cause: err, message: fmt.Sprintf(
			"A part name must be at most %d bytes, and an upload hold at most %d parts",
			storage.MaxChunkNameBytes, storage.MaxChunksPerUpload)}
	}
	return storeWriteError(err)
}

// partReader passes a part's body on, failing once it exceeds its limit
// or, at its end, when it does not match its checksum.
type partReader struct {
	body  bodyReader
	limit partLimit
	n     int64
	check *checksum.Verifier
}

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.body.Read(b)
	p.n += int64(n)
	if p.limit.max >= 0 && p.n > p.limit.max {
		return n, p.limit.refusal
	}
	if p.check == nil {
		return n, err
	}
	p.check.Write(b[:n])
	if err == io.EOF && !p.check.Matches() {
		return n, errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	return n, err
}

// sortParts puts parts in the order they make the file: the natural order
// of their names.
func sortParts(parts []storage.Chunk) {
	slices.SortFunc(parts, func(x, y storage.Chunk) int { return naturalCompare(x.Name, y.Name) })
}

// naturalCompare orders part names as people count: runs of digits by
// their value, whatever their padding, the rest byte by byte; names equal
// so far are ordered by their text.
func naturalCompare(a, b string) int {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if isDigit(a[i]) && isDigit(b[j]) {
			na, nb := digitRun(a[i:]), digitRun(b[j:])
			if c := compareNumbers(na, nb); c != 0 {
				return c
			}
			i, j = i+len(na), j+len(nb)
			continue
		}
		if a[i] != b[j] {
			return int(a[i]) - int(b[j])
		}
		i, j = i+1, j+1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitRun is the run of digits s starts with.
func digitRun(s string) string {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return s[:n]
}

// compareNumbers compares decimal numbers of any length by value.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
