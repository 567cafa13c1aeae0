package davhandler

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/adler32"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/checksum"
)

// TestUploadDigests: whichever way a file arrives (one PUT, TUS PATCHes,
// NG or v1 chunks in order or not), oc:checksums gives the digests of its
// bytes, computed here with the standard library alone.
func TestUploadDigests(t *testing.T) {
	// Sizes of the parts of a big file, and of one the store keeps inline.
	sizeSets := map[string][]int{"big": {70 << 10, 1, 130<<10 + 7, 64 << 10}, "small": {3, 1, 5, 2}}
	tests := []struct {
		name   string
		upload func(e *env, parts []string) string // returns the file's path
	}{
		{"PUT", func(e *env, parts []string) string {
			wantStatus(t, e.do("einstein", http.MethodPut, "/remote.php/webdav/put.bin", strings.Join(parts, "")), http.StatusCreated)
			return "/remote.php/webdav/put.bin"
		}},
		{"TUS", func(e *env, parts []string) string {
			loc := e.tusStart("einstein", "/remote.php/dav/files/einstein", "tus.bin", len(strings.Join(parts, "")))
			offset := 0
			for _, p := range parts {
				wantStatus(t, e.tusPatch("einstein", loc, offset, p), http.StatusNoContent)
				offset += len(p)
			}
			return "/remote.php/webdav/tus.bin"
		}},
		{"NG in order", ngDigestUpload("ng.bin", []int{0, 1, 2, 3})},
		{"NG out of order", ngDigestUpload("ng-shuffled.bin", []int{2, 0, 3, 1})},
		{"NG last first", ngDigestUpload("ng-last.bin", []int{3, 0, 1, 2})},
		{"v1 in order", v1DigestUpload("v1.bin", []int{0, 1, 2, 3})},
		{"v1 backwards", v1DigestUpload("v1-back.bin", []int{3, 2, 1, 0})},
	}
	for _, tt := range tests {
		for set, sizes := range sizeSets {
			t.Run(tt.name+"/"+set, func(t *testing.T) {
				e := newEnv(t, withChunks, withUploads)
				rng := rand.New(rand.NewPCG(3, 4))
				parts := make([]string, len(sizes))
				for i, n := range sizes {
					parts[i] = string(randomContent(rng, n))
				}
				path := tt.upload(e, parts)
				res := parseMultistatus(t, e.do("einstein", "PROPFIND", path, `<?xml version="1.0"?>`+
					`<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>`, "Depth", "0"))
				want := stdlibSums([]byte(strings.Join(parts, "")))
				if len(res) != 1 || !strings.Contains(res[0].Props["http://owncloud.org/ns checksums"], want) {
					t.Fatalf("oc:checksums of %s = %+v, want %s", path, res, want)
				}
				if got := e.do("einstein", http.MethodGet, path, "").Body.String(); got != strings.Join(parts, "") {
					t.Fatalf("GET %s gives %d bytes, not the %d sent", path, len(got), len(strings.Join(parts, "")))
				}
			})
		}
	}
}

// ngDigestUpload sends the parts as chunking NG, in the order given by
// their indexes, and assembles them.
func ngDigestUpload(name string, order []int) func(e *env, parts []string) string {
	return func(e *env, parts []string) string {
		upload := ngPath("einstein", "t-"+name)
		wantStatus(e.t, e.do("einstein", "MKCOL", upload, ""), http.StatusCreated)
		for _, i := range order {
			// Numbered from 1 and padded as Nextcloud's client does.
			wantStatus(e.t, e.do("einstein", http.MethodPut, upload+"/"+strconv.Itoa(100001 + i)[1:], parts[i]), http.StatusCreated)
		}
		dst := "http://example.com/remote.php/dav/files/einstein/" + name
		wantStatus(e.t, e.do("einstein", "MOVE", upload+"/.file", "", "Destination", dst), http.StatusCreated)
		return "/remote.php/webdav/" + name
	}
}

// v1DigestUpload sends the parts as ownCloud v1 chunks in the order given.
func v1DigestUpload(name string, order []int) func(e *env, parts []string) string {
	return func(e *env, parts []string) string {
		total := strconv.Itoa(len(strings.Join(parts, "")))
		for _, i := range order {
			e.v1Put("einstein", "/remote.php/webdav", name, len(parts), i, parts[i], "OC-Total-Length", total)
		}
		return "/remote.php/webdav/" + name
	}
}

func randomContent(rng *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+8)
	for len(b) < n {
		b = binary.LittleEndian.AppendUint64(b, rng.Uint64())
	}
	return b[:n]
}

// stdlibSums formats the digests of b as oc:checksums does.
func stdlibSums(b []byte) string {
	s1, m5 := sha1.Sum(b), md5.Sum(b)
	a := binary.BigEndian.AppendUint32(nil, adler32.Checksum(b))
	return "SHA1:" + hex.EncodeToString(s1[:]) + " MD5:" + hex.EncodeToString(m5[:]) + " ADLER32:" + hex.EncodeToString(a)
}

// TestChunkedRequestsAskOnlyTheAnnouncedDigest: the request that makes a
// file of chunked or TUS bytes asks its upload for only the digest its
// client announced: nextcloud/desktop's propagateuploadng.cpp sends
// OC-Checksum on the MOVE alone, owncloud/client's
// propagateuploadtus.cpp the checksum in the Upload-Metadata of the POST
// that carries the whole file. The file shows every digest all the same.
func TestChunkedRequestsAskOnlyTheAnnouncedDigest(t *testing.T) {
	content := strings.Repeat("one pass over the bytes ", 10_000)
	sums, err := checksum.Compute(strings.NewReader(content), checksum.Algorithms()...)
	if err != nil {
		t.Fatal(err)
	}
	half := len(content) / 2
	tests := []struct {
		name   string
		upload func(e *env) string // returns the file's path
		asked  []checksum.Algorithm
	}{
		{"NG announced SHA1", ngAnnounced("ng-sha1.bin", content[:half], content[half:], "SHA1:"+sums.SHA1), []checksum.Algorithm{checksum.SHA1}},
		{"NG announced nothing", ngAnnounced("ng-none.bin", content[:half], content[half:], ""), nil},
		{"TUS announced MD5", func(e *env) string {
			meta := tusMeta("filename", "tus.bin", "checksum", "MD5 "+sums.MD5)
			wantStatus(e.t, e.do("einstein", http.MethodPost, "/remote.php/dav/files/einstein", content,
				"Tus-Resumable", "1.0.0", "Upload-Length", strconv.Itoa(len(content)), "Upload-Metadata", meta,
				"Content-Type", tusContentType), http.StatusCreated)
			return "/remote.php/webdav/tus.bin"
		}, []checksum.Algorithm{checksum.MD5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &inlineDigestsStore{}
			e := newEnv(t, withChunks, withUploads, func(c *Config) { s.Store, c.Store = c.Store, s })
			path := tt.upload(e)
			if len(s.asked) != 1 || !slices.Equal(s.asked[0], tt.asked) {
				t.Fatalf("the upload was asked for the inline digests %v, want [%v]", s.asked, tt.asked)
			}
			res := parseMultistatus(t, e.do("einstein", "PROPFIND", path, `<?xml version="1.0"?>`+
				`<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>`, "Depth", "0"))
			if want := stdlibSums([]byte(content)); len(res) != 1 || !strings.Contains(res[0].Props["http://owncloud.org/ns checksums"], want) {
				t.Fatalf("oc:checksums of %s = %+v, want %s", path, res, want)
			}
		})
	}
}

// ngAnnounced uploads two NG parts in order and assembles them with the
// OC-Checksum given ("": none), as Nextcloud's client does.
func ngAnnounced(name, first, second, ocChecksum string) func(e *env) string {
	return func(e *env) string {
		upload := ngPath("einstein", "t-"+name)
		wantStatus(e.t, e.do("einstein", "MKCOL", upload, ""), http.StatusCreated)
		wantStatus(e.t, e.do("einstein", http.MethodPut, upload+"/00001", first), http.StatusCreated)
		wantStatus(e.t, e.do("einstein", http.MethodPut, upload+"/00002", second), http.StatusCreated)
		hdr := []string{"Destination", "http://example.com/remote.php/dav/files/einstein/" + name}
		if ocChecksum != "" {
			hdr = append(hdr, "OC-Checksum", ocChecksum)
		}
		wantStatus(e.t, e.do("einstein", "MOVE", upload+"/.file", "", hdr...), http.StatusCreated)
		return "/remote.php/webdav/" + name
	}
}
