package davhandler

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// inlineDigestsStore records the digests each upload is asked to compute
// inline (storage.HashInline).
type inlineDigestsStore struct {
	storage.Store
	mu    sync.Mutex
	asked [][]checksum.Algorithm
}

func (s *inlineDigestsStore) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	up, err := s.Store.NewUpload(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	return &inlineDigestsUpload{Upload: up, s: s}, nil
}

// AwaitDigests keeps the store's own (storage.DigestWaiter).
func (s *inlineDigestsStore) AwaitDigests(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	return s.Store.(storage.DigestWaiter).AwaitDigests(ctx, spaceID, nodeID)
}

type inlineDigestsUpload struct {
	storage.Upload
	s *inlineDigestsStore
}

func (u *inlineDigestsUpload) HashInline(algs ...checksum.Algorithm) {
	u.s.mu.Lock()
	u.s.asked = append(u.s.asked, algs)
	u.s.mu.Unlock()
	storage.HashInline(u.Upload, algs...)
}

// TestPutHashesOnlyTheAnnouncedDigest: a PUT has its store compute while
// the body streams only the digest its client announced (none without
// OC-Checksum), checks it as before, and its file shows every digest once
// they are known; GET's OC-Checksum is a right one meanwhile.
func TestPutHashesOnlyTheAnnouncedDigest(t *testing.T) {
	content := strings.Repeat("digests off the critical path ", 10_000) // past the inline limit
	sums, err := checksum.Compute(strings.NewReader(content), checksum.Algorithms()...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		header   []string
		status   int
		asked    []checksum.Algorithm
		complete bool
	}{
		{"none", nil, http.StatusCreated, nil, true},
		{"MD5", []string{"OC-Checksum", "MD5:" + sums.MD5}, http.StatusCreated, []checksum.Algorithm{checksum.MD5}, true},
		{"adler32", []string{"OC-Checksum", "adler32:" + sums.Adler32}, http.StatusCreated, []checksum.Algorithm{checksum.Adler32}, true},
		{"wrong SHA1", []string{"OC-Checksum", "SHA1:" + sums.MD5 + "00000000"}, http.StatusBadRequest, []checksum.Algorithm{checksum.SHA1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &inlineDigestsStore{}
			e := newEnv(t, func(c *Config) { s.Store, c.Store = c.Store, s })
			path := "/webdav/" + tt.name + ".bin"
			wantStatus(t, e.do("einstein", http.MethodPut, path, content, tt.header...), tt.status)
			if len(s.asked) != 1 || !slices.Equal(s.asked[0], tt.asked) {
				t.Fatalf("the PUT asked its upload for the inline digests %v, want [%v]", s.asked, tt.asked)
			}
			get := e.do("einstein", http.MethodGet, path, "")
			if !tt.complete {
				wantStatus(t, get, http.StatusNotFound)
				return
			}
			if got := get.Header().Get("OC-Checksum"); got != "" && !strings.Contains(sums.String(), got) {
				t.Errorf("GET's OC-Checksum %q is none of %s", got, sums)
			}
			res := parseMultistatus(t, e.do("einstein", "PROPFIND", path, `<?xml version="1.0"?>`+
				`<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>`, "Depth", "0"))
			if len(res) != 1 || res[0].Props["http://owncloud.org/ns checksums"] != "<oc:checksum>"+sums.String()+"</oc:checksum>" {
				t.Fatalf("oc:checksums = %+v, want %s", res, sums)
			}
		})
	}
}
