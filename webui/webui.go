// Package webui serves the browser page of davspaces: the spaces overview,
// the folder view, the trash-bin, a public link's page (/s/{token}) and
// the login URL of a Nextcloud client's Login Flow v2 (ServeLoginFlow), as
// a small set of embedded assets (hand-written HTML, CSS and JavaScript
// modules; nothing is fetched at run time). The page is one static shell; the scripts read the URL and talk to
// the WebDAV, Graph and trash-bin endpoints with the browser's credentials.
//
// The package decides which requests a browser makes for a page
// (WantsPage) and answers them; the WebDAV handler decides whether a URL is
// a folder the user may see, and calls ServeFolder or ServeNotFound.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// AssetPrefix is the path under which the page's scripts, styles and icons
// are served.
const AssetPrefix = "/webui/"

// ContentSecurityPolicy is sent with every answer of this package: scripts,
// styles and requests only from the server's own origin, no inline script
// or style, no frames, no plugins, no form posts; images also from blob:
// URLs, the previews the page fetches with its credentials (a token is
// no cookie an <img> could send). With OpenID Connect sign-in, connect-src
// adds the issuer's origin (see Handler.csp).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options configure the page.
type Options struct {
	// SignIn, when its ClientID is set, makes the page sign in with
	// OpenID Connect itself; otherwise the browser's own credentials
	// (its Basic prompt) are used.
	SignIn SignIn
}

// SignIn is the page's OpenID Connect client: the authorization code flow
// with PKCE, as a public client (no secret), its redirect URI the server's
// origin + "/".
type SignIn struct {
	// ClientID is the page's client at the provider.
	ClientID string
	// Issuer is the provider's issuer URL; the page reads its discovery
	// document and calls its token endpoint, so its origin is added to
	// the Content-Security-Policy's connect-src.
	Issuer string
	// Scopes are asked for. Default: openid profile email.
	Scopes []string
}

// enabled reports whether the page signs in with OpenID Connect.
func (s SignIn) enabled() bool { return s.ClientID != "" }

// check refuses an issuer that is not an absolute http(s) URL.
func (s SignIn) check() error {
	if !s.enabled() {
		return nil
	}
	u, err := url.Parse(s.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("webui: sign-in issuer %q is not an http(s) URL", s.Issuer)
	}
	return nil
}

// issuerOrigin is the scheme and host of the issuer.
func (s SignIn) issuerOrigin() string {
	u, _ := url.Parse(s.Issuer)
	return u.Scheme + "://" + u.Host
}

// metaTags carry the settings to the scripts (no inline script under the
// CSP): auth.js reads them.
func (s SignIn) metaTags() string {
	if !s.enabled() {
		return ""
	}
	scopes := s.Scopes
	if len(scopes) == 0 {
		scopes = []string{"openid", "profile", "email"}
	}
	meta := func(name, content string) string {
		return `<meta name="` + name + `" content="` + html.EscapeString(content) + `">` + "\n"
	}
	return meta("davspaces-oidc-issuer", strings.TrimRight(s.Issuer, "/")) +
		meta("davspaces-oidc-client-id", s.ClientID) +
		meta("davspaces-oidc-scopes", strings.Join(scopes, " "))
}

//go:embed assets
var embedded embed.FS

// The views of the shell, set on its <body data-view="…">.
const (
	viewOverview = "overview"
	viewFolder   = "folder"
	viewNotFound = "notfound"
	viewPublic   = "public"
	// viewLoginFlow is a Login Flow v2 login URL (ServeLoginFlow).
	viewLoginFlow = "loginflow"
)

// PublicPrefix is the path of the public link page: /s/{token}[/path]
// shows what the link gives, read through /dav/public-files/{token}.
const PublicPrefix = "/s/"

// Handler serves the page and its assets. It is safe for concurrent use.
type Handler struct {
	// pages are the shell for each view.
	pages map[string][]byte
	// assets are the files under AssetPrefix by name, with their ETags.
	assets map[string]asset
	// csp is the Content-Security-Policy of every answer.
	csp string
	// signsIn tells whether the page signs in with OpenID Connect.
	signsIn bool
}

// asset is one embedded file ready to send.
type asset struct {
	body        []byte
	etag        string
	contentType string
}

// New reads the embedded assets and fills the shell in with opts.
func New(opts Options) (*Handler, error) {
	if err := opts.SignIn.check(); err != nil {
		return nil, err
	}
	files, err := fs.Sub(embedded, "assets")
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	h := &Handler{pages: map[string][]byte{}, assets: map[string]asset{}, csp: ContentSecurityPolicy, signsIn: opts.SignIn.enabled()}
	if h.signsIn {
		h.csp = strings.Replace(ContentSecurityPolicy, "connect-src 'self'", "connect-src 'self' "+opts.SignIn.issuerOrigin(), 1)
	}
	shell, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("webui: reading the shell: %w", err)
	}
	shell = bytes.Replace(shell, []byte("{{signin}}\n"), []byte(opts.SignIn.metaTags()), 1)
	for _, view := range []string{viewOverview, viewFolder, viewNotFound, viewPublic, viewLoginFlow} {
		h.pages[view] = bytes.ReplaceAll(shell, []byte("{{view}}"), []byte(view))
	}
	err = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name == "index.html" {
			return err
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h.assets[name] = asset{
			body:        body,
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
			contentType: contentTypeOf(name),
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: reading the assets: %w", err)
	}
	return h, nil
}

// contentTypeOf is the media type of an asset by its extension; JavaScript
// modules must be sent as JavaScript or the browser refuses them under
// nosniff.
func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// WantsPage reports whether r is a browser asking for a page: a GET that
// accepts text/html and has no Depth header. WebDAV clients send Depth or
// do not ask for HTML, and keep getting the WebDAV answers.
func WantsPage(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Depth") == "" && acceptsHTML(r.Header.Values("Accept"))
}

// acceptsHTML reports whether an Accept header names text/html with a
// quality above zero. A wildcard alone does not count: curl and most
// clients send */* and want the resource itself.
func acceptsHTML(accept []string) bool {
	for _, value := range accept {
		for part := range strings.SplitSeq(value, ",") {
			mediaType, params, _ := strings.Cut(part, ";")
			if !strings.EqualFold(strings.TrimSpace(mediaType), "text/html") {
				continue
			}
			if !zeroQuality(params) {
				return true
			}
		}
	}
	return false
}

// zeroQuality reports whether media type parameters hold q=0.
func zeroQuality(params string) bool {
	for param := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(param, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			v := strings.TrimRight(strings.TrimSpace(value), "0")
			return v == "" || v == "." || v == "0" || v == "0."
		}
	}
	return false
}

// Route returns the handler of a request this package answers on its own:
// a page request for / (the spaces overview) or for a public link's page
// (under PublicPrefix), and the assets. ok=false leaves the request to the
// next handler.
func (h *Handler) Route(r *http.Request) (handler http.Handler, ok bool) {
	switch {
	case r.URL.Path == "/" && WantsPage(r):
		return http.HandlerFunc(h.ServeOverview), true
	case isPublicPage(r.URL.Path) && WantsPage(r):
		return http.HandlerFunc(h.servePublic), true
	case strings.HasPrefix(r.URL.Path, AssetPrefix):
		return http.HandlerFunc(h.serveAsset), true
	}
	return nil, false
}

// ServeOverview answers the spaces overview.
func (h *Handler) ServeOverview(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusOK, viewOverview)
}

// isPublicPage reports whether path is a public link's page: a token after
// PublicPrefix, and maybe a path below it.
func isPublicPage(path string) bool {
	token, _, _ := strings.Cut(strings.TrimPrefix(path, PublicPrefix), "/")
	return strings.HasPrefix(path, PublicPrefix) && token != ""
}

// servePublic answers a public link's page without looking the token up:
// the same shell for every token, so that the answer tells nothing; the
// page's own requests to /dav/public-files find out whether the link is
// there, and need no user.
func (h *Handler) servePublic(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusOK, viewPublic)
}

// ServeFolder answers the page of the folder at r's URL; the caller has
// checked that it is a folder the user may see.
func (h *Handler) ServeFolder(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusOK, viewFolder)
}

// SignsIn reports whether the page signs in with OpenID Connect itself, so
// that a browser that is not signed in yet gets the page (ServeSignIn)
// rather than a Basic prompt.
func (h *Handler) SignsIn() bool { return h.signsIn }

// ServeSignIn answers a browser that is not signed in yet, when the page
// signs in itself: the overview's shell for /, the folder's for any other
// path (the caller sends only paths under a WebDAV base), without looking
// anything up, so that the answer is the same for every path and tells
// nothing. Signed in, the page's own requests find out what is there.
func (h *Handler) ServeSignIn(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		h.ServeOverview(w, r)
		return
	}
	h.servePage(w, http.StatusOK, viewFolder)
}

// ServeNotFound answers the "not found" page with 404. It is the same for
// a path that does not exist and for a space the user is no member of, so
// the page gives no hint of what others have.
func (h *Handler) ServeNotFound(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusNotFound, viewNotFound)
}

// ServeLoginFlow answers the login URL of a Nextcloud client's Login Flow
// v2 (package loginflow), which the client opened in the browser: the
// page that signs its user in and asks to grant client access (loginflow.js).
// found is false for a link of no open flow: 404, and the page says the
// link is unknown or has expired.
func (h *Handler) ServeLoginFlow(w http.ResponseWriter, r *http.Request, client string, found bool) {
	page, status := h.pages[viewLoginFlow], http.StatusNotFound
	if found {
		meta := `<meta name="davspaces-loginflow-client" content="` + html.EscapeString(client) + `">` + "\n"
		page, status = bytes.Replace(page, []byte("<title>"), []byte(meta+"<title>"), 1), http.StatusOK
	}
	h.writePage(w, status, page)
}

func (h *Handler) servePage(w http.ResponseWriter, status int, view string) {
	h.writePage(w, status, h.pages[view])
}

func (h *Handler) writePage(w http.ResponseWriter, status int, page []byte) {
	hdr := w.Header()
	h.setSecurityHeaders(hdr)
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(page)))
	// The same URL answers WebDAV clients with something else, and the
	// page of a folder depends on who asks.
	hdr.Set("Cache-Control", "no-store")
	hdr.Add("Vary", "Accept, Depth")
	w.WriteHeader(status)
	w.Write(page)
}

// serveAsset answers one embedded file, revalidated by its ETag so that a
// new build's assets are picked up at once.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	h.setSecurityHeaders(hdr)
	a, ok := h.assets[strings.TrimPrefix(r.URL.Path, AssetPrefix)]
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("ETag", a.etag)
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// setSecurityHeaders sets what every answer of the page carries.
func (h *Handler) setSecurityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", h.csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// WantsPage reports whether r asks for a page (the package's WantsPage),
// so that a Handler serves as the WebDAV handler's davhandler.Page.
func (h *Handler) WantsPage(r *http.Request) bool { return WantsPage(r) }
