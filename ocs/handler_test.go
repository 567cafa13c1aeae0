package ocs

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// newTestHandler returns a handler whose user is the request's "X-User"
// header, standing in for Caddy's authentication.
func newTestHandler(t *testing.T, tus bool) *Handler {
	t.Helper()
	return newUploadsHandler(t, tus, false)
}

// newUploadsHandler is newTestHandler for a WebDAV handler that serves TUS,
// chunked uploads, both or neither.
func newUploadsHandler(t *testing.T, tus, chunked bool) *Handler {
	t.Helper()
	return newConfiguredHandler(t, func(cfg *Config) { cfg.TUS, cfg.ChunkedUploads = tus, chunked })
}

// newConfiguredHandler is a handler with the test's user and status, and
// what configure sets beside them.
func newConfiguredHandler(t *testing.T, configure func(*Config)) *Handler {
	t.Helper()
	cfg := Config{
		User: func(r *http.Request) (storage.User, bool) {
			id := r.Header.Get("X-User")
			return storage.User{ID: id, DisplayName: r.Header.Get("X-Name")}, id != ""
		},
		Email:  func(r *http.Request) string { return r.Header.Get("X-Email") },
		Status: DefaultStatus("1.2.3"),
	}
	configure(&cfg)
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h *Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestNewNeedsUser(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without User: no error")
	}
}

func TestRoute(t *testing.T) {
	h := newTestHandler(t, true)
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/status.php", true},
		{HealthPath, true},
		{"/ocs/v1.php/cloud/capabilities", true},
		{"/ocs/v2.php/cloud/user", true},
		{"/ocs/v2.php/apps/notifications/api/v2/notifications", true},
		{"/ocs/v1.php", true},
		{"/ocs/v3.php/cloud/user", false},
		{"/ocs/v1.phpx/cloud/user", false},
		{"/status.php/x", false},
		{"/remote.php/webdav/", false},
		{"/", false},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if _, ok := h.Route(r); ok != tc.want {
			t.Errorf("Route(%s) = %v, want %v", tc.path, ok, tc.want)
		}
	}
}

func TestStatus(t *testing.T) {
	h := newTestHandler(t, true)
	w := serve(h, http.MethodGet, "/status.php") // no user
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"installed": true, "maintenance": false, "needsDbUpgrade": false,
		"version": "10.11.0.0", "versionstring": "10.11.0", "edition": "Community",
		"productname": "davspaces", "product": "davspaces", "productversion": "1.2.3",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v, want those of %v", got, want)
	}
	if w := serve(h, http.MethodPost, "/status.php"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /status.php: %d, want 405", w.Code)
	}
}

// ocsJSON is the JSON envelope with the data left raw.
type ocsJSON struct {
	OCS struct {
		Meta meta            `json:"meta"`
		Data json.RawMessage `json:"data"`
	} `json:"ocs"`
}

func TestEnvelope(t *testing.T) {
	h := newTestHandler(t, true)
	auth := []string{"X-User", "einstein"}
	for _, tc := range []struct {
		name, method, target string
		hdr                  []string
		status, code         int
		metaStatus           string
	}{
		{"v1 capabilities", "GET", "/ocs/v1.php/cloud/capabilities?format=json", auth, 200, 100, "ok"},
		{"v2 capabilities", "GET", "/ocs/v2.php/cloud/capabilities?format=json", auth, 200, 200, "ok"},
		{"v1 user", "GET", "/ocs/v1.php/cloud/user?format=json", auth, 200, 100, "ok"},
		{"v2 user", "GET", "/ocs/v2.php/cloud/user?format=json", auth, 200, 200, "ok"},
		// Anyone may read the capabilities, as from oCIS: ownCloud Web
		// reads them for a public link's visitor.
		{"v1 capabilities no user", "GET", "/ocs/v1.php/cloud/capabilities?format=json", nil, 200, 100, "ok"},
		{"v2 capabilities no user", "GET", "/ocs/v2.php/cloud/capabilities?format=json", nil, 200, 200, "ok"},
		{"v2 capabilities post no user", "POST", "/ocs/v2.php/cloud/capabilities?format=json", nil, 405, 405, "failure"},
		{"v1 user no user", "GET", "/ocs/v1.php/cloud/user?format=json", nil, 401, 997, "failure"},
		{"v2 user no user", "GET", "/ocs/v2.php/cloud/user?format=json", nil, 401, 401, "failure"},
		{"v1 unknown", "GET", "/ocs/v1.php/cloud/users?format=json", auth, 404, 998, "failure"},
		{"v2 unknown", "GET", "/ocs/v2.php/apps/notifications/api/v2/notifications?format=json", auth, 404, 404, "failure"},
		{"v2 unknown no user", "GET", "/ocs/v2.php/nothing?format=json", nil, 404, 404, "failure"},
		{"v1 post", "POST", "/ocs/v1.php/cloud/user?format=json", auth, 405, 999, "failure"},
		{"v2 post", "POST", "/ocs/v2.php/cloud/capabilities?format=json", auth, 405, 405, "failure"},
		{"v2 trailing slash", "GET", "/ocs/v2.php/cloud/user/?format=json", auth, 200, 200, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, tc.method, tc.target, tc.hdr...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			var env ocsJSON
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatalf("%v: %s", err, w.Body)
			}
			if env.OCS.Meta.StatusCode != tc.code || env.OCS.Meta.Status != tc.metaStatus {
				t.Errorf("meta %+v, want statuscode %d status %s", env.OCS.Meta, tc.code, tc.metaStatus)
			}
			if tc.status != 200 && string(env.OCS.Data) != "[]" {
				t.Errorf("error data %s, want []", env.OCS.Data)
			}
		})
	}
}

func TestEnvelopeXML(t *testing.T) {
	h := newTestHandler(t, true)
	for _, tc := range []struct {
		target       string
		hdr          []string
		status, code int
	}{
		{"/ocs/v1.php/cloud/capabilities", []string{"X-User", "einstein"}, 200, 100},
		{"/ocs/v2.php/cloud/capabilities?format=xml", []string{"X-User", "einstein"}, 200, 200},
		{"/ocs/v1.php/cloud/user", []string{"X-User", "einstein"}, 200, 100},
		{"/ocs/v2.php/cloud/user", []string{"X-User", "einstein"}, 200, 200},
		{"/ocs/v1.php/cloud/user", nil, 401, 997},
		{"/ocs/v2.php/cloud/capabilities", nil, 200, 200},
		{"/ocs/v1.php/nothing", nil, 404, 998},
		{"/ocs/v2.php/nothing", nil, 404, 404},
	} {
		w := serve(h, http.MethodGet, tc.target, tc.hdr...)
		if w.Code != tc.status || w.Header().Get("Content-Type") != "application/xml; charset=utf-8" {
			t.Errorf("%s: status %d Content-Type %q, want %d XML", tc.target, w.Code, w.Header().Get("Content-Type"), tc.status)
			continue
		}
		var env struct {
			XMLName xml.Name `xml:"ocs"`
			Meta    meta     `xml:"meta"`
		}
		if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Errorf("%s: %v: %s", tc.target, err, w.Body)
			continue
		}
		if env.Meta.StatusCode != tc.code {
			t.Errorf("%s: statuscode %d, want %d", tc.target, env.Meta.StatusCode, tc.code)
		}
	}
}
