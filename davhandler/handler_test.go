package davhandler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/davspaces/davspaces/storage"
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

// TestFailureLogLevels: only the server's own faults reach the error log;
// anything a client can cause at will is logged at debug level.
func TestFailureLogLevels(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		fail                     failingStore
		status                   int
		level                    zapcore.Level
	}{
		{name: "unknown method", method: "PATCH", path: "/webdav/", status: http.StatusNotImplemented, level: zapcore.DebugLevel},
		{name: "lock", method: "LOCK", path: "/webdav/f.txt", status: http.StatusNotImplemented, level: zapcore.DebugLevel},
		{name: "cross-space move", method: "MOVE", path: "/webdav/f.txt", hdr: []string{"Destination", "/dav/spaces/physics/f.txt"}, status: http.StatusBadGateway, level: zapcore.DebugLevel},
		{name: "foreign destination host", method: "COPY", path: "/webdav/f.txt", hdr: []string{"Destination", "http://elsewhere.example/webdav/g.txt"}, status: http.StatusBadGateway, level: zapcore.DebugLevel},
		{name: "quota", method: "PUT", path: "/dav/spaces/physics/big", body: "0123456789abc", status: http.StatusInsufficientStorage, level: zapcore.DebugLevel},
		{name: "not found", method: "GET", path: "/webdav/missing", status: http.StatusNotFound, level: zapcore.DebugLevel},
		{name: "disk full", method: "PUT", path: "/webdav/g.txt", body: "x", fail: failingStore{uploadWriteErr: fmt.Errorf("write: %w", storage.ErrNoSpace)}, status: http.StatusInsufficientStorage, level: zapcore.ErrorLevel},
		{name: "store full", method: "PUT", path: "/webdav/g.txt", body: "x", fail: failingStore{uploadWriteErr: fmt.Errorf("write: %w", storage.ErrInsufficientStorage)}, status: http.StatusInsufficientStorage, level: zapcore.ErrorLevel},
		{name: "upload write failure", method: "PUT", path: "/webdav/g.txt", body: "x", fail: failingStore{uploadWriteErr: errDiskOnFire}, status: http.StatusInternalServerError, level: zapcore.ErrorLevel},
		{name: "backend outage", method: "PUT", path: "/webdav/g.txt", body: "x", fail: failingStore{uploadWriteErr: fmt.Errorf("write: %w", storage.ErrUnavailable)}, status: http.StatusServiceUnavailable, level: zapcore.ErrorLevel},
		{name: "store failure", method: "PROPFIND", path: "/webdav/", hdr: []string{"Depth", "1"}, fail: failingStore{readDirErr: errDiskOnFire}, status: http.StatusMultiStatus, level: zapcore.ErrorLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			fs := &failingStore{}
			e := newEnv(t, withFailingStore(fs), func(c *Config) { c.Logger = zap.New(core) })
			setQuota(t, e, 10)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
			fs.uploadWriteErr, fs.readDirErr = tt.fail.uploadWriteErr, tt.fail.readDirErr
			logs.TakeAll()
			rec := e.do("einstein", tt.method, tt.path, tt.body, tt.hdr...)
			wantStatus(t, rec, tt.status)
			entries := logs.TakeAll()
			if len(entries) != 1 {
				t.Fatalf("%d log entries, want 1: %+v", len(entries), entries)
			}
			if entries[0].Level != tt.level {
				t.Fatalf("logged at %s, want %s: %s %v", entries[0].Level, tt.level, entries[0].Message, entries[0].ContextMap())
			}
		})
	}
}

// TestBackendOutageAsksToRetry: a store whose backend is unreachable is
// answered 503 with a Retry-After and the XML error body, and changes
// nothing, so that a client retries instead of giving up or seeing a 500.
func TestBackendOutageAsksToRetry(t *testing.T) {
	fs := &failingStore{}
	e := newEnv(t, withFailingStore(fs))
	fs.uploadWriteErr = fmt.Errorf("s3: %w", storage.ErrUnavailable)
	rec := e.do("einstein", "PUT", "/webdav/g.txt", "x")
	wantStatus(t, rec, http.StatusServiceUnavailable)
	if got := rec.Header().Get("Retry-After"); got != strconv.Itoa(unavailableRetryAfter) {
		t.Errorf("Retry-After %q, want %d", got, unavailableRetryAfter)
	}
	if !strings.Contains(rec.Body.String(), `Sabre\DAV\Exception\ServiceUnavailable`) {
		t.Errorf("body is not the XML error: %s", rec.Body)
	}
	fs.uploadWriteErr = nil
	wantStatus(t, e.do("einstein", "GET", "/webdav/g.txt", ""), http.StatusNotFound)
}

// TestGetPrefetchesContentFromElsewhere: content a store reads from
// elsewhere is fetched once, from the first byte sent, and only when a body
// follows; an outage then is a 503, not a success whose body breaks off.
func TestGetPrefetchesContentFromElsewhere(t *testing.T) {
	var prefetches []int64
	fs := &failingStore{prefetches: &prefetches}
	e := newEnv(t, withFailingStore(fs))
	etag := e.do("einstein", "PUT", "/webdav/f.txt", "0123456789").Header().Get("ETag")
	tests := []struct {
		name, method string
		hdr          []string
		status       int
		body         string
		want         []int64
	}{
		{"whole", "GET", nil, http.StatusOK, "0123456789", []int64{0}},
		{"range", "GET", []string{"Range", "bytes=4-"}, http.StatusPartialContent, "456789", []int64{4}},
		{"suffix", "GET", []string{"Range", "bytes=-3"}, http.StatusPartialContent, "789", []int64{7}},
		{"head", "HEAD", nil, http.StatusOK, "", nil},
		{"not modified", "GET", []string{"If-None-Match", etag}, http.StatusNotModified, "", nil},
		{"unsatisfiable", "GET", []string{"Range", "bytes=20-"}, http.StatusRequestedRangeNotSatisfiable, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefetches = nil
			rec := e.do("einstein", tt.method, "/webdav/f.txt", "", tt.hdr...)
			wantStatus(t, rec, tt.status)
			if tt.body != "" && rec.Body.String() != tt.body {
				t.Errorf("body %q, want %q", rec.Body, tt.body)
			}
			if !slices.Equal(prefetches, tt.want) {
				t.Errorf("prefetched at %v, want %v", prefetches, tt.want)
			}
		})
	}

	fs.prefetchErr = fmt.Errorf("s3: %w", storage.ErrUnavailable)
	for _, hdr := range [][]string{nil, {"Range", "bytes=4-"}} {
		rec := e.do("einstein", "GET", "/webdav/f.txt", "", hdr...)
		wantStatus(t, rec, http.StatusServiceUnavailable)
		if got := rec.Header().Get("Retry-After"); got == "" {
			t.Error("no Retry-After")
		}
		for _, name := range []string{"Content-Range", "OC-FileId", "ETag", "OC-Checksum"} {
			if got := rec.Header().Get(name); got != "" {
				t.Errorf("%s: %q on a 503", name, got)
			}
		}
		if !strings.Contains(rec.Body.String(), `Sabre\DAV\Exception\ServiceUnavailable`) {
			t.Errorf("body is not the XML error: %s", rec.Body)
		}
	}
}

// setQuota gives the Physics space a quota.
func setQuota(t testing.TB, e *env, bytes int64) {
	t.Helper()
	space := e.physics
	space.Quota = bytes
	if _, err := e.store.PutSpace(context.Background(), space); err != nil {
		t.Fatal(err)
	}
}

// TestMethodNotAllowedSendsAllow: every 405 names the methods the resource
// allows (RFC 9110 §15.5.6).
func TestMethodNotAllowedSendsAllow(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	tests := []struct {
		name, method, path string
		allow              string
	}{
		{"mkcol on a folder", "MKCOL", "/webdav/d", "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"},
		{"mkcol on a file", "MKCOL", "/webdav/f.txt", "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"},
		{"mkcol on a space root", "MKCOL", "/dav/spaces/physics", "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT"},
		{"delete a space root", "DELETE", "/webdav/", "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT"},
		{"list the spaces", "PROPFIND", "/dav/spaces/", "OPTIONS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("einstein", tt.method, tt.path, "", "Depth", "0")
			wantError(t, rec, http.StatusMethodNotAllowed, "MethodNotAllowed", "")
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}
