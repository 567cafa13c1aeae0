package caddymodule

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/loginflow"
	"github.com/davspaces/davspaces/webui"
)

// WebSettings configure the browser page (package webui): the spaces
// overview at /, and a folder's page for a browser's GET of its WebDAV
// URL.
type WebSettings struct {
	// Disabled turns the page off: browsers get the same answers as
	// WebDAV clients. Default: false, the page is served.
	Disabled bool `json:"disabled,omitempty"`
	// ClientID is the page's OpenID Connect client (public, authorization
	// code with PKCE; the provider must allow the redirect URI
	// https://<host>/ and the same as post-logout redirect URI). Set, the
	// page signs in with the provider itself, and a browser that is not
	// signed in gets the page (which sends it to the provider) instead of
	// a Basic prompt. Placeholders such as {env.OIDC_WEB_CLIENT_ID} are
	// expanded; empty: no OpenID Connect sign-in in the page.
	ClientID string `json:"client_id,omitempty"`
	// Issuer is the provider's issuer URL; required with ClientID.
	// Placeholders are expanded.
	Issuer string `json:"issuer,omitempty"`
	// Scopes the page asks for. Default: openid profile email.
	Scopes []string `json:"scopes,omitempty"`
}

// enabled reports whether the page is served.
func (ws *WebSettings) enabled() bool { return ws == nil || !ws.Disabled }

// newWebPage returns the page the settings ask for, nil when it is off.
func newWebPage(ws *WebSettings) (*webui.Handler, error) {
	if !ws.enabled() {
		return nil, nil
	}
	opts, err := ws.options()
	if err != nil {
		return nil, err
	}
	return webui.New(opts)
}

// options expands the placeholders of the sign-in settings.
func (ws *WebSettings) options() (webui.Options, error) {
	if ws == nil {
		return webui.Options{}, nil
	}
	repl := caddy.NewReplacer()
	signIn := webui.SignIn{
		ClientID: repl.ReplaceAll(ws.ClientID, ""),
		Issuer:   repl.ReplaceAll(ws.Issuer, ""),
		Scopes:   ws.Scopes,
	}
	if signIn.ClientID == "" {
		return webui.Options{}, nil
	}
	if signIn.Issuer == "" {
		return webui.Options{}, errors.New("web: client_id needs an issuer")
	}
	return webui.Options{SignIn: signIn}, nil
}

// serveSignedOut answers a browser's page request that comes without a
// user (oidc_auth's browser_pages let it through), on a path this handler
// serves: the page, when it signs in with OpenID Connect itself, or a
// Basic challenge, so that the browser's own prompt appears and the
// authentication handler's Basic provider signs in. ok=false: the request
// has a user, or is not such a page request.
func (dav *DAVSpaces) serveSignedOut(w http.ResponseWriter, r *http.Request) (ok bool, err error) {
	if dav.web == nil || !webui.WantsPage(r) || signedIn(r) || davhandler.IsPublicPath(r.URL.Path) {
		// A public link's paths need nobody signed in.
		return false, nil
	}
	// A Login Flow v2 login URL is a page of its own, which signs in
	// itself when the page does.
	loginFlowBasic := loginflow.IsPage(r.URL.Path) && !dav.web.SignsIn()
	if _, ours := dav.handler.Route(r); !ours && r.URL.Path != "/" && !loginFlowBasic {
		return false, nil
	}
	if dav.web.SignsIn() {
		dav.web.ServeSignIn(w, r)
		return true, nil
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", r.Host))
	return true, caddyhttp.Error(http.StatusUnauthorized, errors.New("not signed in"))
}

// signedIn reports whether an authentication handler set the user.
func signedIn(r *http.Request) bool {
	repl, ok := requestReplacer(r)
	if !ok {
		return false
	}
	id, _ := repl.GetString(userIDPlaceholder)
	return id != ""
}

// webRoute routes the page's own requests (the overview and its assets);
// without a page it routes nothing.
func (dav *DAVSpaces) webRoute(r *http.Request) (http.Handler, bool) {
	if dav.web == nil {
		return nil, false
	}
	return dav.web.Route(r)
}

// loginFlowPage is the page of Login Flow v2's login URLs: a nil
// *webui.Handler must be a nil interface.
func (dav *DAVSpaces) loginFlowPage() loginflow.Page {
	if dav.web == nil {
		return nil
	}
	return dav.web
}

// davPage is the page as the WebDAV handler's hook: a nil *webui.Handler
// must be a nil interface, or the handler would call it.
func (dav *DAVSpaces) davPage() davhandler.Page {
	if dav.web == nil {
		return nil
	}
	return dav.web
}

// parseWeb reads `web off`, `web on` or the block form:
//
//	web {
//		client_id <id>
//		issuer    <url>
//		scopes    <scope...>
//	}
func parseWeb(d *caddyfile.Dispenser) (*WebSettings, error) {
	if nesting := d.Nesting(); d.CountRemainingArgs() == 0 && d.NextBlock(nesting) {
		return parseWebBlock(d, nesting)
	}
	off, err := offArg(d, "on or off")
	if err != nil {
		return nil, err
	}
	return &WebSettings{Disabled: off}, nil
}

// parseWebBlock reads the subdirectives of a web block, the first of
// which the dispenser is on; nesting is the web line's.
func parseWebBlock(d *caddyfile.Dispenser, nesting int) (*WebSettings, error) {
	ws := &WebSettings{}
	opts := options{
		"client_id": set(&ws.ClientID, oneArg),
		"issuer":    set(&ws.Issuer, oneArg),
		"scopes":    allArgs(&ws.Scopes),
	}
	for {
		if err := opts.parse(d, "web subdirective"); err != nil {
			return nil, err
		}
		if !d.NextBlock(nesting) {
			return ws, nil
		}
	}
}
