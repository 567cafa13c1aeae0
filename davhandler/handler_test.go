package davhandler

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRoute(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		path   string
		routed bool
		status int // of PROPFIND Depth 0 as einstein, when routed
	}{
		{"/webdav/", true, http.StatusMultiStatus},
		{"/remote.php/dav/files/einstein/", true, http.StatusMultiStatus},
		{"/dav/spaces/physics", true, http.StatusMultiStatus},
		{"/dav/nothing", true, http.StatusNotFound},
		{"/webdav/%2e%2e/x", true, http.StatusBadRequest},
		{"/", false, 0},
		{"/remote.phpx/webdav/", false, 0},
		{"/index.html", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			req := httptest.NewRequest("PROPFIND", tt.path, nil)
			req.SetBasicAuth("einstein", "x")
			req.Header.Set("Depth", "0")
			route, ok := e.h.Route(req)
			if ok != tt.routed {
				t.Fatalf("routed %v, want %v", ok, tt.routed)
			}
			if !ok {
				return
			}
			rec := httptest.NewRecorder()
			route.ServeHTTP(rec, req)
			wantStatus(t, rec, tt.status)
		})
	}
}
