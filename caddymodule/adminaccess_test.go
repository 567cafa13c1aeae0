package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// adminRequest is a request to the admin endpoint as it arrives through a
// listener of network ("unix" or "tcp").
func adminRequest(method, target, network string) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	var local net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2019}
	if network == "unix" {
		local = &net.UnixAddr{Name: "admin.sock", Net: "unix"}
	}
	return req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
}

// The snapshot and check endpoints hand a store's database and what a
// check finds only through a unix socket admin listener, or on TCP to a
// store whose handler sets admin_over_tcp; on TCP an unknown store is
// refused alike, and no answer names a path.
func TestAdminEndpointsRefuseTCP(t *testing.T) {
	private, _ := storeWithFiles(t, map[string]string{"a.txt": "aaa"})
	open, _ := storeWithFiles(t, map[string]string{"b.txt": "bbb"})
	for _, dav := range []*DAVSpaces{{Root: private}, {Root: open, AdminOverTCP: true}} {
		if err := provision(t, dav); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dav.Cleanup() })
	}
	nowhere := filepath.Join(t.TempDir(), "not-open")
	endpoints := map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet:  serveSnapshot,
		http.MethodPost: serveCheck,
	}
	paths := map[string]string{http.MethodGet: snapshotPath, http.MethodPost: checkAdminPath}
	for _, tt := range []struct {
		name, network, store string
		status               int // 0: served
	}{
		{"unix socket", "unix", private, 0},
		{"TCP", "tcp", private, http.StatusForbidden},
		{"TCP, allowed by the handler", "tcp", open, 0},
		{"unix socket, a store not open", "unix", nowhere, http.StatusNotFound},
		{"TCP, a store not open", "tcp", nowhere, http.StatusForbidden},
	} {
		for method, serve := range endpoints {
			t.Run(tt.name+"/"+paths[method], func(t *testing.T) {
				rec := httptest.NewRecorder()
				err := serve(rec, adminRequest(method, paths[method]+"?store="+url.QueryEscape(tt.store), tt.network))
				if tt.status == 0 {
					if err != nil || rec.Body.Len() == 0 {
						t.Fatalf("served %d bytes, %v; want the answer", rec.Body.Len(), err)
					}
					return
				}
				var apiErr caddy.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatus != tt.status {
					t.Fatalf("%v, want status %d", err, tt.status)
				}
				if rec.Body.Len() != 0 {
					t.Fatalf("a refusal sent %d bytes", rec.Body.Len())
				}
				for _, dir := range []string{private, open, nowhere, filepath.Dir(private)} {
					if strings.Contains(err.Error(), dir) {
						t.Fatalf("the refusal %q names the directory %s", err, dir)
					}
				}
				if tt.status == http.StatusForbidden && !strings.Contains(err.Error(), "unix socket") {
					t.Fatalf("the refusal %q does not say where the endpoint answers", err)
				}
			})
		}
	}
}

func TestOverUnixSocket(t *testing.T) {
	for _, tt := range []struct {
		local net.Addr
		want  bool
	}{
		{&net.UnixAddr{Name: "/run/admin.sock", Net: "unix"}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 2019}, false},
		{nil, false}, // no listener known: not a socket
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tt.local != nil {
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tt.local))
		}
		if got := overUnixSocket(req); got != tt.want {
			t.Errorf("overUnixSocket through %v = %v, want %v", tt.local, got, tt.want)
		}
	}
}
