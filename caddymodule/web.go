package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/webui"
)

// WebSettings configure the browser page (package webui): the spaces
// overview at /, and a folder's page for a browser's GET of its WebDAV
// URL.
type WebSettings struct {
	// Disabled turns the page off: browsers get the same answers as
	// WebDAV clients. Default: false, the page is served.
	Disabled bool `json:"disabled,omitempty"`
}

// enabled reports whether the page is served.
func (ws *WebSettings) enabled() bool { return ws == nil || !ws.Disabled }

// newWebPage returns the page the settings ask for, nil when it is off.
func newWebPage(ws *WebSettings) (*webui.Handler, error) {
	if !ws.enabled() {
		return nil, nil
	}
	return webui.New()
}

// webRoute routes the page's own requests (the overview and its assets);
// without a page it routes nothing.
func (dav *DAVSpaces) webRoute(r *http.Request) (http.Handler, bool) {
	if dav.web == nil {
		return nil, false
	}
	return dav.web.Route(r)
}

// davPage is the page as the WebDAV handler's hook: a nil *webui.Handler
// must be a nil interface, or the handler would call it.
func (dav *DAVSpaces) davPage() davhandler.Page {
	if dav.web == nil {
		return nil
	}
	return dav.web
}

// parseWeb reads `web off` or `web on`.
func parseWeb(d *caddyfile.Dispenser) (*WebSettings, error) {
	var v string
	if !d.AllArgs(&v) {
		return nil, d.ArgErr()
	}
	switch v {
	case "off":
		return &WebSettings{Disabled: true}, nil
	case "on":
		return &WebSettings{}, nil
	}
	return nil, d.Errf("web: want on or off, got %q", v)
}
