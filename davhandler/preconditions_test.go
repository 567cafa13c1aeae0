package davhandler

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// transferRecorder passes COPY and MOVE to the store and keeps what the
// handler asked for.
type transferRecorder struct {
	storage.Store
	transfers []storage.Transfer
}

func (s *transferRecorder) Move(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	s.transfers = append(s.transfers, t)
	return s.Store.Move(ctx, spaceID, t)
}

func (s *transferRecorder) Copy(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	s.transfers = append(s.transfers, t)
	return s.Store.Copy(ctx, spaceID, t)
}

func TestCopyMovePreconditions(t *testing.T) {
	const past = "Mon, 02 Jan 2006 15:04:05 GMT"
	tests := []struct {
		name, method string
		hdr          []string // {{etag}} stands for the source's ETag
		status       int
		want         storage.Conditions
	}{
		{"MOVE If-Match other", "MOVE", []string{"If-Match", `"does-not-match"`}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"MOVE If-Match weak", "MOVE", []string{"If-Match", "W/{{etag}}"}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"MOVE If-None-Match star", "MOVE", []string{"If-None-Match", "*"}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"MOVE If-Unmodified-Since past", "MOVE", []string{"If-Unmodified-Since", past}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"MOVE If-Match malformed", "MOVE", []string{"If-Match", "nope"}, http.StatusBadRequest, storage.Conditions{}},
		{"COPY If-None-Match star", "COPY", []string{"If-None-Match", "*"}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"COPY If-None-Match etag", "COPY", []string{"If-None-Match", "{{etag}}"}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"COPY If-Match other", "COPY", []string{"If-Match", `"does-not-match"`}, http.StatusPreconditionFailed, storage.Conditions{}},
		{"MOVE If-Match", "MOVE", []string{"If-Match", "{{etag}}"}, http.StatusCreated, storage.Conditions{IfMatch: "{{etag}}"}},
		{"COPY If-Match", "COPY", []string{"If-Match", `"x", {{etag}}`}, http.StatusCreated, storage.Conditions{IfMatch: "{{etag}}"}},
		{"COPY If-None-Match other", "COPY", []string{"If-None-Match", `"x"`}, http.StatusCreated, storage.Conditions{}},
		{"MOVE unconditional", "MOVE", nil, http.StatusCreated, storage.Conditions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := &transferRecorder{Store: e.store}
			e.h.store = rec
			wantStatus(t, e.do("einstein", "PUT", "/webdav/src.txt", "content"), http.StatusCreated)
			etag := e.do("einstein", "HEAD", "/webdav/src.txt", "").Header().Get("ETag")
			hdr := []string{"Destination", "/webdav/dst.txt"}
			for _, h := range tt.hdr {
				hdr = append(hdr, strings.ReplaceAll(h, "{{etag}}", etag))
			}
			wantStatus(t, e.do("einstein", tt.method, "/webdav/src.txt", "", hdr...), tt.status)
			dst := e.do("einstein", "HEAD", "/webdav/dst.txt", "").Code
			if tt.status >= 400 {
				if len(rec.transfers) != 0 || dst != http.StatusNotFound {
					t.Fatalf("a refused %s reached the store (%d) or made the destination (%d)", tt.method, len(rec.transfers), dst)
				}
				if got := e.do("einstein", "HEAD", "/webdav/src.txt", "").Header().Get("ETag"); got != etag {
					t.Fatalf("the source changed: %s, was %s", got, etag)
				}
				return
			}
			want := tt.want
			want.IfMatch = strings.Trim(strings.ReplaceAll(want.IfMatch, "{{etag}}", etag), `"`)
			if len(rec.transfers) != 1 || rec.transfers[0].Conditions != want {
				t.Fatalf("transfers %+v, want one with conditions %+v", rec.transfers, want)
			}
		})
	}
}

func TestProppatchPreconditions(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "content"), http.StatusCreated)
	etag := e.do("einstein", "HEAD", "/webdav/f.txt", "").Header().Get("ETag")
	const set = `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>v</x:p></d:prop></d:set></d:propertyupdate>`
	for _, hdr := range [][]string{
		{"If-Match", `"does-not-match"`},
		{"If-Match", "W/" + etag},
		{"If-None-Match", "*"},
		{"If-None-Match", etag},
		{"If-Unmodified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"},
	} {
		wantError(t, e.do("einstein", "PROPPATCH", "/webdav/f.txt", set, hdr...), http.StatusPreconditionFailed, "PreconditionFailed", "precondition failed")
	}
	query := strings.Replace(propfindBody, "%s", `<x:p xmlns:x="urn:x"/>`, 1)
	if res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", query, "Depth", "0")); len(res[0].NotFound) != 1 {
		t.Fatalf("a refused PROPPATCH was applied: %+v", res[0])
	}
	parseMultistatus(t, e.do("einstein", "PROPPATCH", "/webdav/f.txt", set, "If-Match", etag))
	if res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", query, "Depth", "0")); res[0].Props["urn:x p"] != "v" {
		t.Fatalf("PROPPATCH with the right If-Match was not applied: %+v", res[0])
	}
}
