// Package webui serves the browser page of davspaces: the spaces overview,
// the folder view and the trash-bin, as a small set of embedded assets
// (hand-written HTML, CSS and JavaScript modules; nothing is fetched at run
// time). The page is one static shell; the scripts read the URL and talk to
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
	"io/fs"
	"mime"
	"net/http"
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
// or style, no frames, no plugins, no form posts.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed assets
var embedded embed.FS

// The views of the shell, set on its <body data-view="…">.
const (
	viewOverview = "overview"
	viewFolder   = "folder"
	viewNotFound = "notfound"
)

// Handler serves the page and its assets. It is safe for concurrent use.
type Handler struct {
	// pages are the shell for each view.
	pages map[string][]byte
	// assets are the files under AssetPrefix by name, with their ETags.
	assets map[string]asset
}

// asset is one embedded file ready to send.
type asset struct {
	body        []byte
	etag        string
	contentType string
}

// New reads the embedded assets.
func New() (*Handler, error) {
	files, err := fs.Sub(embedded, "assets")
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	h := &Handler{pages: map[string][]byte{}, assets: map[string]asset{}}
	shell, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("webui: reading the shell: %w", err)
	}
	for _, view := range []string{viewOverview, viewFolder, viewNotFound} {
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
// a page request for / (the spaces overview) and the assets. ok=false
// leaves the request to the next handler.
func (h *Handler) Route(r *http.Request) (handler http.Handler, ok bool) {
	switch {
	case r.URL.Path == "/" && WantsPage(r):
		return http.HandlerFunc(h.ServeOverview), true
	case strings.HasPrefix(r.URL.Path, AssetPrefix):
		return http.HandlerFunc(h.serveAsset), true
	}
	return nil, false
}

// ServeOverview answers the spaces overview.
func (h *Handler) ServeOverview(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusOK, viewOverview)
}

// ServeFolder answers the page of the folder at r's URL; the caller has
// checked that it is a folder the user may see.
func (h *Handler) ServeFolder(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusOK, viewFolder)
}

// ServeNotFound answers the "not found" page with 404. It is the same for
// a path that does not exist and for a space the user is no member of, so
// the page gives no hint of what others have.
func (h *Handler) ServeNotFound(w http.ResponseWriter, r *http.Request) {
	h.servePage(w, http.StatusNotFound, viewNotFound)
}

func (h *Handler) servePage(w http.ResponseWriter, status int, view string) {
	page := h.pages[view]
	hdr := w.Header()
	setSecurityHeaders(hdr)
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
	setSecurityHeaders(hdr)
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
func setSecurityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// WantsPage reports whether r asks for a page (the package's WantsPage),
// so that a Handler serves as the WebDAV handler's davhandler.Page.
func (h *Handler) WantsPage(r *http.Request) bool { return WantsPage(r) }
