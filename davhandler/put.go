package davhandler

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

const msgChecksumMismatch = "The computed checksum does not match the one received from the client."

func (h *Handler) handlePut(w http.ResponseWriter, r *http.Request, req *request) error {
	if r.Header.Get("Content-Range") != "" {
		return errorf(http.StatusBadRequest, "Content-Range is not allowed on PUT: upload the whole content")
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
	parentID, name, err := uploadPlace(t)
	if err != nil {
		return err
	}
	cond, err := checkPreconditions(r, t)
	if err != nil {
		return err
	}
	up, err := h.store.NewUpload(r.Context(), t.space.ID)
	if err != nil {
		return err
	}
	defer up.Discard()
	if _, err := io.Copy(up, r.Body); err != nil {
		return errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	if expected != nil && !expected.Matches(up.Checksums()) {
		return errorf(http.StatusBadRequest, msgChecksumMismatch)
	}
	node, created, err := up.Commit(r.Context(), storage.Commit{
		ParentID:    parentID,
		Name:        name,
		ModTime:     mtime,
		ContentType: storedContentType(r.Header.Get("Content-Type")),
		Conditions:  cond,
	})
	if err != nil {
		return err
	}
	h.setNodeHeaders(w, node)
	if !mtime.IsZero() {
		w.Header().Set("X-OC-Mtime", "accepted")
	}
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// uploadPlace returns the folder and name a PUT writes to.
func uploadPlace(t *target) (parentID, name string, err error) {
	switch {
	case t.exists && t.node.IsFolder():
		return "", "", errorf(http.StatusConflict, "%s is a collection: PUT needs a file name", displayNameOf(t))
	case t.exists && t.isBase:
		// PUT to a file id replaces that file.
		parentID, name = t.node.ParentID, t.node.Name
	case !t.hasParent:
		return "", "", errorf(http.StatusConflict, "The parent collection of %s does not exist", t.name)
	default:
		parentID, name = t.parent.ID, t.name
	}
	if !t.canWrite() {
		return "", "", errReadOnly
	}
	return parentID, name, nil
}

func displayNameOf(t *target) string {
	if t.name != "" {
		return t.name
	}
	return "the target"
}

// storedContentType keeps a meaningful client type; the generic one is
// dropped so the type is guessed from the name instead.
func storedContentType(ct string) string {
	ct = strings.TrimSpace(ct)
	if ct == "application/octet-stream" {
		return ""
	}
	return ct
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

// parseMtime reads X-OC-Mtime: Unix seconds from 1970 to the end of year
// 9999, optionally with a decimal fraction. It is read as decimal text, not
// as a float, so NaN, infinities, exponents and hex floats never pass and
// nanoseconds come out exact.
func parseMtime(r *http.Request) (time.Time, error) {
	const maxSeconds = 253402300799 // 9999-12-31T23:59:59Z, the last HTTP-date
	v := strings.TrimSpace(r.Header.Get("X-OC-Mtime"))
	if v == "" {
		return time.Time{}, nil
	}
	invalid := errorf(http.StatusBadRequest, "X-OC-Mtime must be Unix seconds up to %d, got %q", maxSeconds, v)
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
