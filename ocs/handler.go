// Package ocs serves the parts of the ownCloud OCS API and the status
// document that ownCloud and Nextcloud clients read before they sync:
// /status.php, the capabilities and the signed-in user; and the (empty)
// application list ownCloud Web reads before it signs in. It advertises only
// what the rest of davspaces really serves.
package ocs

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/storage"
)

// UserFunc returns the authenticated user of a request, if any.
type UserFunc func(*http.Request) (storage.User, bool)

// Config configures a Handler.
type Config struct {
	// User identifies the caller of the OCS endpoints. Required.
	User UserFunc
	// Email returns the caller's e-mail address for cloud/user. Optional:
	// without it the address is empty.
	Email func(*http.Request) string
	// Status is what /status.php answers and the capabilities repeat.
	// Default: DefaultStatus("").
	Status Status
	// LoginFlow says the server offers Nextcloud's Login Flow v2 (package
	// loginflow): Nextcloud's clients then see NextcloudStatus, by which
	// they sign in with it; every other client sees Status.
	LoginFlow bool
	// Health says whether the store's backends answer (nil) or not; a
	// node that is not healthy reports maintenance in /status.php and
	// 503 at HealthPath. Optional: without it the node is healthy.
	Health func(context.Context) error
	// TUS says the WebDAV handler serves resumable (TUS) uploads; only then
	// are they advertised.
	TUS bool
	// TUSMaxChunkSize is the largest PATCH the client should send; 0 leaves
	// it to the client, as nothing but the quota limits a PATCH here.
	// ownCloud Web uploads with TUS only when it is above 0.
	TUSMaxChunkSize int64
	// Favorites says favourites are kept (oc:favorite) and listed
	// (REPORT oc:filter-files); only then is files.favorites advertised,
	// which ownCloud Web takes to offer them.
	Favorites bool
	// ChunkedUploads says the WebDAV handler assembles chunked uploads
	// (Nextcloud chunking NG, ownCloud v1 chunks); only then are they
	// advertised, as dav.chunking and files.bigfilechunking.
	ChunkedUploads bool
	// BulkUpload says to which clients dav.bulkupload is advertised; the
	// WebDAV handler must serve /dav/bulk unless it is BulkUploadOff.
	// Default: BulkUploadOff.
	BulkUpload BulkUpload
	// Trash says deleted files are kept in a trash the WebDAV handler
	// serves (/dav/spaces/trash-bin/…); only then are dav.trashbin and
	// files.undelete advertised, which web UIs take to show deleted files.
	Trash bool
	// Versions says replaced content is kept as versions the WebDAV
	// handler serves (/dav/meta/{fileid}/v); only then is files.versioning
	// advertised.
	Versions bool
	// PreviewTypes are the content types the WebDAV handler makes previews
	// of; when there are any, files.thumbnail is advertised.
	PreviewTypes []string
	// Store keeps the spaces, the shares and the directory of users the
	// sharing API (files_sharing: shares and sharees) answers from.
	// Optional: without it that API is not served (404).
	Store storage.Backend
	// Spaces are the spaces served and who sees them: shares of items in
	// a project space not served are as absent as the space, as in
	// davhandler and graph. The zero value serves personal spaces only.
	Spaces storage.SpacePolicy
	// Members are the space members the configuration names (user ids,
	// and groups as storage.GroupPrefix + name), offered as sharees beside
	// the directory's users and groups.
	Members []string
	// Logger receives server-side failures of the sharing API; nil means
	// no logging.
	Logger *zap.Logger
	// Sharing says shares with users and groups and public links are
	// served (Graph, WebDAV); only then does files_sharing announce them.
	Sharing bool
	// AppPasswords makes and revokes app passwords for Nextcloud's
	// core/getapppassword and core/apppassword. Optional: without it
	// they are not served (404).
	AppPasswords *apppass.Service
	// PollInterval is core.pollinterval. Default: 60, what ownCloud
	// sends; the ownCloud client reads milliseconds and keeps its own
	// default for values below 5000.
	PollInterval int
}

// Handler answers /status.php and the OCS endpoints.
type Handler struct {
	cfg Config
	// capabilities offer bulk upload when the configuration serves it;
	// capabilitiesWithoutBulk are for the clients it is not offered to.
	capabilities, capabilitiesWithoutBulk capabilitiesData
	// sharing answers files_sharing; nil without Config.Store.
	sharing *sharing
}

// New checks the configuration and prepares the answers that never change.
func New(cfg Config) (*Handler, error) {
	if cfg.User == nil {
		return nil, errors.New("ocs: Config.User is required")
	}
	if cfg.Status == (Status{}) {
		cfg.Status = DefaultStatus("")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 60
	}
	if cfg.TUSMaxChunkSize < 0 {
		return nil, errors.New("ocs: Config.TUSMaxChunkSize must not be negative")
	}
	withoutBulk := cfg
	withoutBulk.BulkUpload = BulkUploadOff
	return &Handler{
		cfg:                     cfg,
		capabilities:            newCapabilities(cfg),
		capabilitiesWithoutBulk: newCapabilities(withoutBulk),
		sharing:                 newSharing(cfg),
	}, nil
}

// Route returns the handler for a request this package serves, or false
// for any other path, so that a caller can pass the request on.
func (h *Handler) Route(r *http.Request) (http.Handler, bool) {
	p := r.URL.Path
	switch p {
	case "/status.php":
		return http.HandlerFunc(h.serveStatus), true
	case HealthPath:
		return http.HandlerFunc(h.serveHealth), true
	case AppListPath:
		return http.HandlerFunc(h.serveAppList), true
	}
	for _, v := range []apiVersion{v1, v2} {
		prefix := v.prefix()
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return h.ocsRoute(v, strings.TrimPrefix(p, prefix)), true
		}
	}
	return nil, false
}

// ServeHTTP answers a request; a path outside this package's is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := h.Route(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	route.ServeHTTP(w, r)
}

// ocsRoute picks the endpoint below /ocs/v{1,2}.php.
func (h *Handler) ocsRoute(v apiVersion, endpoint string) http.Handler {
	if rest, ok := strings.CutPrefix(endpoint, sharingPrefix); ok && h.sharing != nil {
		return h.sharing.route(v, rest)
	}
	if route, ok := h.appPasswordRoute(v, strings.TrimSuffix(endpoint, "/")); ok {
		return route
	}
	var serve func(http.ResponseWriter, *http.Request, apiVersion, storage.User)
	if id, ok := strings.CutPrefix(strings.TrimSuffix(endpoint, "/"), "/cloud/users/"); ok && id != "" && !strings.Contains(id, "/") {
		return h.signedIn(v, h.serveUserByID(id), http.MethodGet, http.MethodHead)
	}
	switch strings.TrimSuffix(endpoint, "/") {
	case "/cloud/capabilities":
		// Anyone may read them, as from oCIS: ownCloud Web reads them
		// before it shows a public link to a visitor who has no account.
		return h.anyone(v, h.serveCapabilities, http.MethodGet, http.MethodHead)
	case "/cloud/user":
		serve = h.serveUser
	default:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, r, v, http.StatusNotFound, "Invalid query, please check the syntax")
		})
	}
	return h.signedIn(v, serve, http.MethodGet, http.MethodHead)
}

// scopeReadOnly is the refusal of a change through a read-only app
// password.
const scopeReadOnly = "This app password is read-only"

// anyone serves a request with one of methods, signed in or not (the
// user is then the zero User): 405 with Allow for another method.
func (h *Handler) anyone(v apiVersion, serve func(http.ResponseWriter, *http.Request, apiVersion, storage.User), methods ...string) http.Handler {
	return withMethods(v, methods, func(w http.ResponseWriter, r *http.Request) {
		user, _ := h.cfg.User(r)
		serve(w, r, v, user)
	})
}

// admitted answers 401 without a signed-in user and 403 for a method
// the user's scope does not allow; true lets the request through.
func admitted(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User, signedIn bool) bool {
	if !signedIn || user.ID == "" {
		writeError(w, r, v, http.StatusUnauthorized, "Unauthorised")
		return false
	}
	if !user.Scope.AllowsMethod(r.Method) {
		writeError(w, r, v, http.StatusForbidden, scopeReadOnly)
		return false
	}
	return true
}

// signedIn serves a request of a signed-in user with one of methods: 405
// with Allow for another method, 401 without a user.
func (h *Handler) signedIn(v apiVersion, serve func(http.ResponseWriter, *http.Request, apiVersion, storage.User), methods ...string) http.Handler {
	return withMethods(v, methods, func(w http.ResponseWriter, r *http.Request) {
		user, ok := h.cfg.User(r)
		if !admitted(w, r, v, user, ok) {
			return
		}
		serve(w, r, v, user)
	})
}

// withMethods serves a request with one of methods through serve, and
// answers any other 405 with Allow.
func withMethods(v apiVersion, methods []string, serve http.HandlerFunc) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(methods, r.Method) {
			w.Header().Set("Allow", allow)
			writeError(w, r, v, http.StatusMethodNotAllowed, "Method not allowed")
			return
		}
		serve(w, r)
	})
}
