package davhandler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// Finding 4 of issue 17: unfinished uploads of all three kinds reserve
// against the quota from their creation, so a space with a small quota
// cannot be made to keep many times its quota on disk, and what the quota
// leaves (Tus-Max-Size, quota-available-bytes) subtracts the reservations.
func TestUnfinishedUploadsReserveQuota(t *testing.T) {
	e := newEnv(t, withUploads, withChunks)
	e.store.SetPersonalQuota(1000)
	e.tusStart("einstein", "/webdav/", "a", 600)
	wantStatus(t, e.tusCreate("einstein", "/webdav/", "b", 600), http.StatusInsufficientStorage)
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "t1"), "", "OC-Total-Length", "500"), http.StatusInsufficientStorage)

	// An NG upload without a total counts its parts.
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "t2"), ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", "t2", "1"), strings.Repeat("x", 300)), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", "t2", "2"), strings.Repeat("x", 200)), http.StatusInsufficientStorage)
	// v1 chunks reserve count × the largest chunk.
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/v-chunking-42-4-0", strings.Repeat("v", 50), "OC-Chunked", "1"), http.StatusInsufficientStorage)

	u, err := e.store.Usage(context.Background(), personalSpaceID(t, e, "einstein"))
	if err != nil || u.Reserved != 900 {
		t.Fatalf("usage = %+v, %v; want 900 reserved", u, err)
	}
	rec := e.do("einstein", "PROPFIND", "/webdav/", `<d:propfind xmlns:d="DAV:"><d:prop><d:quota-available-bytes/></d:prop></d:propfind>`, "Depth", "0")
	if !strings.Contains(rec.Body.String(), ">100</d:quota-available-bytes>") {
		t.Fatalf("quota-available-bytes without the reservations: %s", rec.Body)
	}
}

// An NG upload belongs to the space its MKCOL named: a part naming a
// space without a quota in its Destination is still checked against it.
func TestNGPartsCheckedAgainstTheUploadsSpace(t *testing.T) {
	e := newEnv(t, withChunks)
	e.store.SetPersonalQuota(100)
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "t"), ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", "t", "1"), strings.Repeat("x", 200),
		"Destination", "http://example.com/remote.php/dav/spaces/"+testStorageID+"$physics/big"), http.StatusInsufficientStorage)
}

// Open uploads per user are capped, also where there is no quota.
func TestOpenUploadsCapped(t *testing.T) {
	e := newEnv(t, withUploads, withChunks, func(c *Config) { c.MaxOpenUploads = 2 })
	e.tusStart("einstein", "/webdav/", "a", 10)
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "t"), ""), http.StatusCreated)
	wantError(t, e.tusCreate("einstein", "/webdav/", "b", 10), http.StatusInsufficientStorage, "InsufficientStorage", msgTooManyUploads)
	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "u"), ""), http.StatusInsufficientStorage)
	e.tusStart("marie", "/webdav/", "a", 10) // another user's own cap
}

// Finding 5: dead properties count against the quota; a PROPPATCH past it
// is 507 and changes nothing.
func TestDeadPropertiesCountAgainstQuota(t *testing.T) {
	e := newEnv(t)
	e.store.SetPersonalQuota(1000)
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/f", ""), http.StatusCreated)
	patch := func(value string) *httptest.ResponseRecorder {
		return e.do("einstein", "PROPPATCH", "/webdav/f", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>`+
			value+`</x:p></d:prop></d:set></d:propertyupdate>`)
	}
	wantStatus(t, patch(strings.Repeat("v", 600)), http.StatusMultiStatus)
	wantStatus(t, patch(strings.Repeat("w", 2000)), http.StatusInsufficientStorage)
	u, err := e.store.Usage(context.Background(), personalSpaceID(t, e, "einstein"))
	if err != nil || u.Props != storage.PropBytes(storage.PropName{Space: "urn:x", Local: "p"}, strings.Repeat("v", 600)) {
		t.Fatalf("usage = %+v, %v", u, err)
	}
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/g", strings.Repeat("g", 500)), http.StatusInsufficientStorage)
}

func personalSpaceID(t *testing.T, e *env, user string) string {
	t.Helper()
	s, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// A TUS upload replacing a file reserves only its growth: a nearly full
// space can still replace its files.
func TestTusReplacingInAFullSpace(t *testing.T) {
	e := newEnv(t, withUploads)
	e.store.SetPersonalQuota(1000)
	wantStatus(t, e.do("einstein", http.MethodPut, "/webdav/f", strings.Repeat("o", 900)), http.StatusCreated)
	url := e.tusStart("einstein", "/webdav/", "f", 950)
	rec := e.do("einstein", http.MethodPatch, url, strings.Repeat("n", 950), "Tus-Resumable", "1.0.0",
		"Upload-Offset", "0", "Content-Type", "application/offset+octet-stream")
	wantStatus(t, rec, http.StatusNoContent)
	if got := e.do("einstein", http.MethodGet, "/webdav/f", "").Body.String(); got != strings.Repeat("n", 950) {
		t.Fatalf("file not replaced: %d bytes", len(got))
	}
}

// A viewer cannot start an NG upload into a space it may only read: the
// upload would reserve that space's quota.
func TestNGUploadIntoAReadOnlySpaceRefused(t *testing.T) {
	e := newEnv(t, withChunks)
	wantStatus(t, e.do("richard", "MKCOL", ngPath("richard", "t"), "", "OC-Total-Length", "100",
		"Destination", "http://example.com/remote.php/dav/spaces/"+testStorageID+"$physics/f"), http.StatusForbidden)
	wantStatus(t, e.do("marie", "MKCOL", ngPath("marie", "t"), "", "OC-Total-Length", "100",
		"Destination", "http://example.com/remote.php/dav/spaces/"+testStorageID+"$physics/f"), http.StatusCreated)
}
