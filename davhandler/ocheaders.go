package davhandler

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// The ownCloud headers of a file: what a client sends with its content
// (OC-Checksum, X-OC-Mtime) and what describes the file in an answer
// (ETag, OC-ETag, OC-FileId, OC-Perm, X-OC-Mtime: accepted).

const msgChecksumMismatch = "The computed checksum does not match the one received from the client."

// setCommittedHeaders describes a file just written: its entity tags, id,
// modification time and permissions, and whether the client's mtime was
// applied.
func (h *Handler) setCommittedHeaders(ctx context.Context, w http.ResponseWriter, t *target, node storage.Node, mtime time.Time) {
	h.setNodeHeaders(ctx, w, node)
	w.Header().Set("OC-Perm", permissions(t.access, false))
	if !mtime.IsZero() {
		w.Header().Set("X-OC-Mtime", "accepted")
	}
}

// parseExpectedChecksum reads OC-Checksum, if present.
func parseExpectedChecksum(r *http.Request) (*checksum.Expected, error) {
	v := r.Header.Get("OC-Checksum")
	if v == "" {
		return nil, nil
	}
	e, err := checksum.ParseOCChecksum(v)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "OC-Checksum: %v", err)
	}
	return &e, nil
}

// inlineDigests are the digests a PUT computes while its body streams:
// the one its client announced, to be checked before the commit. A store
// that can computes the others after the commit (storage.LaterDigests),
// so that the answer waits for no digest nobody asked for.
func inlineDigests(expected *checksum.Expected) []checksum.Algorithm {
	if expected == nil {
		return nil
	}
	return []checksum.Algorithm{expected.Algorithm}
}

// setChecksumHeader sets OC-Checksum to the first digest of n known so
// far, SHA1 when it is: the desktop clients check a download against the
// algorithm it names, whichever of SHA1, MD5 and ADLER32. A file whose
// digests are still being computed may have none yet; the header is then
// left out, which the clients take as nothing to check.
func setChecksumHeader(hdr http.Header, n storage.Node) {
	if alg, digest, ok := n.Checksums.First(); ok {
		hdr.Set("OC-Checksum", string(alg)+":"+digest)
	}
}

// parseMtime reads X-OC-Mtime: Unix seconds from 1970 to the end of year
// 9999, optionally with a decimal fraction. It is read as decimal text, not
// as a float, so NaN, infinities, exponents and hex floats never pass and
// nanoseconds come out exact.
func parseMtime(r *http.Request) (time.Time, error) {
	return parseMtimeValue("X-OC-Mtime", r.Header.Get("X-OC-Mtime"))
}

// parseMtimeValue reads a modification time in Unix seconds from what
// names it (a header, or the TUS metadata key mtime); "" is no time.
func parseMtimeValue(what, v string) (time.Time, error) {
	const maxSeconds = 253402300799 // 9999-12-31T23:59:59Z, the last HTTP-date
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	invalid := errorf(http.StatusBadRequest, "%s must be Unix seconds up to %d, got %q", what, maxSeconds, v)
	whole, frac, hasFrac := strings.Cut(v, ".")
	secs, err := strconv.ParseUint(whole, 10, 64)
	if err != nil || secs > maxSeconds {
		return time.Time{}, invalid
	}
	if !hasFrac {
		return time.Unix(int64(secs), 0).UTC(), nil
	}
	if frac == "" || strings.TrimLeft(frac, "0123456789") != "" {
		return time.Time{}, invalid
	}
	// Digits past nanoseconds are dropped; the others scale to nanoseconds.
	frac = (frac + "00000000")[:9]
	nanos, err := strconv.ParseUint(frac, 10, 32)
	if err != nil {
		return time.Time{}, invalid
	}
	return time.Unix(int64(secs), int64(nanos)).UTC(), nil
}

// setNodeHeaders sets the entity headers every response about a node
// carries; ctx is the request's, which names the node as its caller sees
// it (clientResourceID).
func (h *Handler) setNodeHeaders(ctx context.Context, w http.ResponseWriter, n storage.Node) {
	hdr := w.Header()
	etag := quoteETag(n.ETag)
	hdr.Set("ETag", etag)
	hdr.Set("OC-ETag", etag)
	hdr.Set("OC-FileId", clientResourceID(ctx, h.store.StorageID(), n))
	hdr.Set("Last-Modified", n.ModTime.UTC().Format(http.TimeFormat))
}
