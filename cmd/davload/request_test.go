package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRequestChecks: send and fetch fail on a status not wanted (quoting
// the error body) and fetch on a body of another size; the run's
// credentials go with every request.
func TestRequestChecks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if user, pass, ok := req.BasicAuth(); !ok || user != "einstein" || pass != "relativity" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if req.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "<d:error>\n  gone\n</d:error>")
			return
		}
		io.WriteString(w, "0123456789")
	}))
	defer srv.Close()
	r := newRunner(&config{user: "einstein", pass: "relativity", concurrency: 1, timeout: time.Minute}, io.Discard)

	if err := r.fetch(t.Context(), getCall(srv.URL+"/ten"), 10); err != nil {
		t.Errorf("fetch of 10 bytes: %v", err)
	}
	err := r.fetch(t.Context(), getCall(srv.URL+"/ten"), 11)
	if err == nil || !strings.Contains(err.Error(), "GET "+srv.URL+"/ten: 10 bytes, want 11") {
		t.Errorf("fetch of a short body: %v", err)
	}
	err = r.send(t.Context(), getCall(srv.URL+"/missing"))
	if err == nil || !strings.Contains(err.Error(), "status 404 Not Found, want [200]: <d:error> gone </d:error>") {
		t.Errorf("send to a missing file: %v", err)
	}
}

func TestExitStatus(t *testing.T) {
	clean, failed := &result{}, &result{Errors: 1}
	if got := exitStatus(t.Context(), []*result{clean, clean}, io.Discard); got != 0 {
		t.Errorf("no errors: exit %d, want 0", got)
	}
	if got := exitStatus(t.Context(), []*result{clean, failed}, io.Discard); got != 1 {
		t.Errorf("a failed request: exit %d, want 1", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr strings.Builder
	if got := exitStatus(ctx, []*result{failed}, &stderr); got != 130 || stderr.String() != "davload: interrupted\n" {
		t.Errorf("interrupted: exit %d, %q; want 130", got, stderr.String())
	}
}
