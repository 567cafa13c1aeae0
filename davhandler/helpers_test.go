package davhandler

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

const testStorageID = "storage-1"

// env is a handler over a fresh embedded store with a project space
// "Physics": einstein manager, marie editor, richard viewer.
type env struct {
	t       testing.TB
	h       *Handler
	store   *boltstore.Store
	physics storage.Space
}

// newEnv opens its store without fsyncs: the handler's tests are about
// the protocol, not durability, which boltstore's own tests hold to.
func newEnv(t testing.TB, opts ...func(*Config)) *env {
	t.Helper()
	return newEnvWith(t, boltstore.Options{NoSync: true}, opts...)
}

// newEnvWith is newEnv over a store opened with so (its StorageID is the
// test's).
func newEnvWith(t testing.TB, so boltstore.Options, opts ...func(*Config)) *env {
	t.Helper()
	so.StorageID = testStorageID
	store, err := boltstore.Open(t.TempDir(), so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	physics, err := store.PutSpace(context.Background(), storage.Space{
		ID: "physics", Type: storage.SpaceProject, Name: "Physics", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleEditor, "richard": storage.RoleViewer},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: store, User: basicAuthUser, Spaces: storage.NewSpacePolicy([]string{physics.ID})}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, h: h, store: store, physics: physics}
}

// basicAuthUser trusts the Basic user name; authentication is Caddy's job.
func basicAuthUser(r *http.Request) (storage.User, bool) {
	u, _, ok := r.BasicAuth()
	return storage.User{ID: u}, ok
}

// do sends a request as user ("" for none); hdr holds header name/value
// pairs. A path without "%" is escaped first.
func (e *env) do(user, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	if !strings.Contains(path, "%") {
		path = escapePath(path)
	}
	req := httptest.NewRequest(method, path, rd)
	if user != "" {
		req.SetBasicAuth(user, "x")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// spaceRoot is the /dav/spaces path of a user's personal space.
func (e *env) personalSpacePath(user string) string {
	e.t.Helper()
	s, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user})
	if err != nil {
		e.t.Fatal(err)
	}
	return "/dav/spaces/" + testStorageID + "$" + s.ID
}

func wantStatus(t testing.TB, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body:\n%s", rec.Code, status, rec.Body.String())
	}
}

// wantError checks the status and the Sabre error body.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, exception, message string) {
	t.Helper()
	wantStatus(t, rec, status)
	var body struct {
		XMLName   xml.Name `xml:"DAV: error"`
		Exception string   `xml:"http://sabredav.org/ns exception"`
		Message   string   `xml:"http://sabredav.org/ns message"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not the DAV error shape: %v\n%s", err, rec.Body.String())
	}
	if body.Exception != `Sabre\DAV\Exception\`+exception {
		t.Fatalf("exception %q, want %s", body.Exception, exception)
	}
	if !strings.Contains(body.Message, message) {
		t.Fatalf("message %q does not contain %q", body.Message, message)
	}
}

// msResponse is one d:response of a multistatus, flattened.
type msResponse struct {
	Href     string
	Props    map[string]string // "ns local" → inner XML, status 200
	NotFound []string          // "ns local", status 404
	Statuses map[string]string // "ns local" → status line
}

// parseMultistatus decodes a 207 body.
func parseMultistatus(t testing.TB, rec *httptest.ResponseRecorder) []msResponse {
	t.Helper()
	wantStatus(t, rec, http.StatusMultiStatus)
	var ms struct {
		Responses []struct {
			Href      string `xml:"DAV: href"`
			Propstats []struct {
				Status string `xml:"DAV: status"`
				Prop   struct {
					Inner []struct {
						XMLName xml.Name
						Inner   string `xml:",innerxml"`
					} `xml:",any"`
				} `xml:"DAV: prop"`
			} `xml:"DAV: propstat"`
		} `xml:"DAV: response"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
		t.Fatalf("malformed multistatus: %v\n%s", err, rec.Body.String())
	}
	var out []msResponse
	for _, r := range ms.Responses {
		res := msResponse{Href: r.Href, Props: map[string]string{}, Statuses: map[string]string{}}
		for _, ps := range r.Propstats {
			for _, p := range ps.Prop.Inner {
				key := p.XMLName.Space + " " + p.XMLName.Local
				res.Statuses[key] = ps.Status
				if strings.Contains(ps.Status, " 200 ") {
					res.Props[key] = p.Inner
				} else if strings.Contains(ps.Status, " 404 ") {
					res.NotFound = append(res.NotFound, key)
				}
			}
		}
		out = append(out, res)
	}
	return out
}

const propfindBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>%s</d:prop></d:propfind>`

var etagPattern = regexp.MustCompile(`^"[a-z0-9]{1,32}"$`)
