package graph

import (
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// prefix is the root of every path this package claims.
const prefix = "/graph/"

// allowRead lists the methods of the read-only endpoints.
const allowRead = "GET, HEAD"

// Config configures a Handler.
type Config struct {
	// Store holds the spaces. Required.
	Store storage.Store
	// User identifies the caller. Required.
	User func(*http.Request) (storage.User, bool)
	// Email returns the caller's e-mail address for /me. Optional:
	// without it /me has no mail.
	Email func(*http.Request) string
	// Shares keeps the shares and links of the store's items. Required.
	Shares storage.Shares
	// Directory keeps the users who signed in: people to invite, and the
	// groups a share's creator is judged with. Required.
	Directory storage.Directory
	// Spaces are the spaces served and who sees them: the configured
	// project spaces are the only ones listed; any other is as absent as
	// one the user is not a member of, as in davhandler. The zero value
	// serves personal spaces only.
	Spaces storage.SpacePolicy
	// Logger receives server-side failures; nil means no logging.
	Logger *zap.Logger
}

// Handler answers the Graph endpoints. It is safe for concurrent use.
type Handler struct {
	store     storage.Store
	shares    storage.Shares
	directory storage.Directory
	user      func(*http.Request) (storage.User, bool)
	email     func(*http.Request) string
	spaces    storage.SpacePolicy
	logger    *zap.Logger
	routes    map[string]endpoint
}

// endpoint answers one Graph path for an authenticated user.
type endpoint func(w http.ResponseWriter, r *http.Request, u storage.User) error

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("graph: a store is required")
	}
	if cfg.User == nil {
		return nil, errors.New("graph: a user function is required")
	}
	if cfg.Shares == nil || cfg.Directory == nil {
		return nil, errors.New("graph: shares and a directory are required")
	}
	h := &Handler{
		store:     cfg.Store,
		shares:    cfg.Shares,
		directory: cfg.Directory,
		user:      cfg.User,
		email:     cfg.Email,
		spaces:    cfg.Spaces,
		logger:    cfg.Logger,
	}
	if h.logger == nil {
		h.logger = zap.NewNop()
	}
	// v1beta1 is where the web UI asks for drives; the answer is the same.
	h.routes = map[string]endpoint{
		"/graph/v1.0/me":           h.me,
		"/graph/v1.0/me/drives":    h.myDrives,
		"/graph/v1beta1/me/drives": h.myDrives,
		"/graph/v1beta1/roleManagement/permissions/roleDefinitions": h.roleDefinitionsList,
		"/graph/v1beta1/me/drive/sharedWithMe":                      h.sharedWithMe,
		"/graph/v1beta1/me/drive/sharedByMe":                        h.sharedByMe,
		"/graph/v1.0/users":                                         h.searchUsers,
		"/graph/v1beta1/users":                                      h.searchUsers,
		"/graph/v1.0/groups":                                        h.searchGroups,
		"/graph/v1beta1/groups":                                     h.searchGroups,
	}
	return h, nil
}

// Route returns the handler of a request under /graph/; ok=false leaves
// the request to the next handler.
func (h *Handler) Route(r *http.Request) (http.Handler, bool) {
	p := r.URL.Path
	if p != strings.TrimSuffix(prefix, "/") && !strings.HasPrefix(p, prefix) {
		return nil, false
	}
	return h, true
}

// ServeHTTP answers one Graph request; a path outside the known endpoints
// is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, errors included, depends on the credentials.
	w.Header().Add("Vary", "Authorization")
	if storage.ValidPathSize(r.URL.Path) != nil {
		// Before its segments are split and matched.
		h.fail(w, r, errPathSize)
		return
	}
	ep, allow, ok := h.endpoint(r)
	if !ok {
		h.fail(w, r, errNotFound)
		return
	}
	if ep == nil {
		w.Header().Set("Allow", allow)
		h.fail(w, r, errMethod)
		return
	}
	u, ok := h.user(r)
	if !ok || u.ID == "" {
		h.fail(w, r, errUnauthenticated)
		return
	}
	if !u.Scope.AllowsMethod(r.Method) {
		h.fail(w, r, errScopeReadOnly)
		return
	}
	if err := ep(w, r, u); err != nil {
		h.fail(w, r, err)
	}
}

// endpoint finds the endpoint of a request: ok false for a path nothing
// answers; a nil endpoint for a method the path does not take, allow
// naming those it does.
func (h *Handler) endpoint(r *http.Request) (ep endpoint, allow string, ok bool) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if ep, found := h.routes[p]; found {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return nil, allowRead, true
		}
		return ep, allowRead, true
	}
	if ep, allow, ok := h.permissionRoute(r.Method, p); ok {
		return ep, allow, true
	}
	return h.driveRoute(r.Method, p)
}
