package caddymodule

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// http2ReceiveWindow is how many bytes of a request body an HTTP/2
// client may send ahead of the handler's reads, per stream and per
// connection. Go's default (1 MiB), which Caddy keeps, makes a client
// wait for the server's WINDOW_UPDATE so often that an upload over
// HTTP/2 (the page's and ownCloud Web's TUS PATCHes, in every browser)
// takes about twice its HTTP/1.1 time on loopback and more on a real
// link; four times that is within a few percent of HTTP/1.1. Memory is
// held only while a handler reads slower than its client sends.
const http2ReceiveWindow = 4 << 20

// http2Windows raises the HTTP/2 receive windows of the Caddy server a
// handler is provisioned in, unless the server sets its own. Caddy
// builds its http.Server at start and exposes no HTTP/2 settings; its
// connection hooks run in the accept loop before each connection is
// served, so the first one sets the server's HTTP2 configuration (read
// when each HTTP/2 connection starts) before any connection reads it.
type http2Windows struct {
	once sync.Once
}

// registerHTTP2Windows hooks the raise into the server being provisioned
// with ctx, if any.
func registerHTTP2Windows(ctx caddy.Context) {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || srv == nil {
		return
	}
	w := &http2Windows{}
	srv.RegisterConnContext(w.connContext)
}

func (w *http2Windows) connContext(ctx context.Context, _ net.Conn) context.Context {
	w.once.Do(func() {
		hs, ok := ctx.Value(http.ServerContextKey).(*http.Server)
		if !ok || hs == nil || hs.HTTP2 != nil {
			return
		}
		hs.HTTP2 = &http.HTTP2Config{
			MaxReceiveBufferPerStream:     http2ReceiveWindow,
			MaxReceiveBufferPerConnection: http2ReceiveWindow,
		}
	})
	return ctx
}
