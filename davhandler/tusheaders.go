package davhandler

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// TUS headers: those an upload request sends (Upload-Metadata,
// Upload-Checksum), and those that advertise TUS to ownCloud clients in
// the answers to OPTIONS and a collection's PROPFIND.

// tusMetadata is what an upload's Upload-Metadata says about its file.
type tusMetadata struct {
	// segments name the file below the folder the POST was sent to: one
	// name, or the path of the ownCloud desktop client.
	segments    []string
	mtime       time.Time
	expected    *checksum.Expected
	contentType string
}

// contentTypeKeys name the file's media type in the metadata of the clients
// in use (tus-js-client examples, Uppy and the ownCloud web client), first
// found wins.
var contentTypeKeys = []string{"content-type", "filetype", "type"}

// parseTusMetadata reads Upload-Metadata: filename (required: a name a PUT
// would accept, or a relative path of such names), mtime (Unix seconds, as
// X-OC-Mtime), checksum of the whole file ("<ALG> <hex>" or "<ALG>:<hex>")
// and the media type. Other keys are the client's own and ignored.
func parseTusMetadata(header string) (tusMetadata, error) {
	var m tusMetadata
	pairs, err := parseMetadataPairs(header)
	if err != nil {
		return m, err
	}
	if m.segments, err = metadataPath(pairs["filename"]); err != nil {
		return m, err
	}
	if m.mtime, err = parseMtimeValue("Upload-Metadata mtime", pairs["mtime"]); err != nil {
		return m, err
	}
	if m.expected, err = metadataChecksum(pairs["checksum"]); err != nil {
		return m, err
	}
	m.contentType, err = metadataContentType(pairs)
	return m, err
}

// parseMetadataPairs splits Upload-Metadata into its keys and decoded
// values: comma-separated pairs of a key and an optional base64 value.
// Keys are unique and contain neither spaces nor commas.
func parseMetadataPairs(header string) (map[string]string, error) {
	pairs := map[string]string{}
	for pair := range strings.SplitSeq(header, ",") {
		pair = strings.Trim(pair, " \t")
		if pair == "" {
			continue
		}
		key, encoded, _ := strings.Cut(pair, " ")
		if !validMetadataKey(key) {
			return nil, errorf(http.StatusBadRequest, "Upload-Metadata: invalid key %q", key)
		}
		if _, dup := pairs[key]; dup {
			return nil, errorf(http.StatusBadRequest, "Upload-Metadata: key %q appears twice", key)
		}
		value, err := decodeBase64(strings.Trim(encoded, " \t"))
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "Upload-Metadata: the value of %q is not base64", key)
		}
		pairs[key] = value
	}
	return pairs, nil
}

// validMetadataKey: printable ASCII without space or comma.
func validMetadataKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f || c == ',' {
			return false
		}
	}
	return true
}

// decodeBase64 decodes standard base64, with or without its padding.
func decodeBase64(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil && len(s)%4 != 0 {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	return string(b), err
}

// metadataPath splits the filename of an upload into the names below the
// folder the POST was sent to. The ownCloud desktop client POSTs every
// upload to the root it syncs with and names the file by its path below
// that root ("/a/b/big.bin"), so one leading slash is allowed; every name
// is validated as a path segment is, and an empty one (a//b, a/) refused
// rather than collapsed, since it is no path a client means.
func metadataPath(filename string) ([]string, error) {
	if filename == "" {
		return nil, errorf(http.StatusBadRequest, "Upload-Metadata must name the file: filename <base64 name>")
	}
	if err := pathSizeError(filename, http.StatusBadRequest); err != nil {
		err.header = "Upload-Metadata"
		return nil, err
	}
	segments := strings.Split(strings.TrimPrefix(filename, "/"), "/")
	for _, name := range segments {
		if name == "" {
			return nil, errorf(http.StatusBadRequest, "Upload-Metadata filename %q: empty names are not allowed", filename)
		}
		if err := validateName(name); err != nil {
			return nil, err
		}
	}
	return segments, nil
}

// metadataChecksum reads the checksum of the whole file, "<ALG> <hex>" or
// "<ALG>:<hex>".
func metadataChecksum(v string) (*checksum.Expected, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	alg, digest, ok := strings.Cut(v, " ")
	if !ok {
		alg, digest, _ = strings.Cut(v, ":")
	}
	e, err := checksum.ParseOCChecksum(alg + ":" + digest)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Upload-Metadata checksum: %v", err)
	}
	return &e, nil
}

// metadataContentType returns the media type the metadata names, "" when
// none (it is then guessed from the name, as for a PUT).
func metadataContentType(pairs map[string]string) (string, error) {
	for _, key := range contentTypeKeys {
		v := strings.TrimSpace(pairs[key])
		if v == "" {
			continue
		}
		if _, _, err := mime.ParseMediaType(v); err != nil {
			return "", errorf(http.StatusBadRequest, "Upload-Metadata %s: %q is no media type", key, v)
		}
		return storedContentType(v), nil
	}
	return "", nil
}

// parseUploadChecksum reads Upload-Checksum, "<algorithm> <base64 digest>"
// (the TUS checksum extension). A hex digest is accepted too, as the
// ownCloud acceptance tests send it; the two never look alike, since
// base64 of these digest sizes decodes to the size only when it is base64.
func parseUploadChecksum(v string) (*checksum.Expected, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	alg, digest, ok := strings.Cut(v, " ")
	digest = strings.TrimSpace(digest)
	if !ok || digest == "" {
		return nil, errorf(http.StatusBadRequest, "Upload-Checksum must be <algorithm> <base64 digest>, got %q", v)
	}
	if raw, err := base64.StdEncoding.DecodeString(digest); err == nil {
		if e, err := checksum.ParseOCChecksum(alg + ":" + hex.EncodeToString(raw)); err == nil {
			return &e, nil
		}
	}
	e, err := checksum.ParseOCChecksum(alg + ":" + digest)
	switch {
	case errors.Is(err, checksum.ErrUnsupported):
		return nil, errorf(http.StatusBadRequest, "Upload-Checksum: algorithm %q is not supported; use one of %s", alg, tusChecksumAlgorithms)
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "Upload-Checksum: the %s digest is not base64 of the right length", alg)
	}
	return &e, nil
}

// setTusDiscovery advertises TUS in the headers of OPTIONS and of a
// collection's PROPFIND, where ownCloud clients look for it.
func setTusDiscovery(hdr http.Header) {
	hdr.Set("Tus-Resumable", tusVersion)
	hdr.Set("Tus-Version", tusVersion)
	hdr.Set("Tus-Extension", tusExtensions)
	hdr.Set("Tus-Checksum-Algorithm", tusChecksumAlgorithms)
}

// setTusMaxSize advertises the largest upload the space can take, its free
// quota, when it has a quota.
func (h *Handler) setTusMaxSize(ctx context.Context, hdr http.Header, space storage.Space) error {
	free, limited, err := h.freeQuota(ctx, space)
	if err != nil || !limited {
		return err
	}
	hdr.Set("Tus-Max-Size", strconv.FormatInt(free, 10))
	return nil
}

// setOptionsMaxSize adds Tus-Max-Size to an OPTIONS answer. It tells how
// full a space is, so it is only sent to a member: OPTIONS is answered
// without authentication, and then it is left out.
func (h *Handler) setOptionsMaxSize(r *http.Request, hdr http.Header, dp davPath) {
	user, ok := h.user(r)
	if !ok || user.ID == "" || dp.kind == baseUploads {
		return
	}
	t, err := h.resolve(r.Context(), user, dp)
	if err != nil {
		// OPTIONS answers anyway; whatever failed is no business of it.
		return
	}
	if err := h.setTusMaxSize(r.Context(), hdr, t.space); err != nil {
		h.logger.Debug("reading the free quota for OPTIONS", zap.Error(err))
	}
}

const (
	tusVersion = "1.0.0"
	// tusExtensions are the extensions served; creation-defer-length is
	// not, so every upload announces its length.
	tusExtensions = "creation,creation-with-upload,checksum,expiration,termination"
	// tusChecksumAlgorithms are those Upload-Checksum accepts: the ones
	// every stored file is summed with.
	tusChecksumAlgorithms = "sha1,md5,adler32"
	// tusContentType marks a request body that is upload bytes.
	tusContentType = "application/offset+octet-stream"
	// statusChecksumMismatch is the TUS checksum extension's status for
	// bytes that do not match their checksum.
	statusChecksumMismatch = 460
)
