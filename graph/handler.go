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

// allow lists the methods answered; the endpoints are read-only.
const allow = "GET, HEAD"

// Config configures a Handler.
type Config struct {
	// Store holds the spaces. Required.
	Store storage.Store
	// User identifies the caller. Required.
	User func(*http.Request) (storage.User, bool)
	// Email returns the caller's e-mail address for /me. Optional:
	// without it /me has no mail.
	Email func(*http.Request) string
	// ProjectSpaces are the ids of the configured project spaces, the only
	// project spaces listed; any other is as absent as one the user is not
	// a member of, as in davhandler.
	ProjectSpaces []string
	// Logger receives server-side failures; nil means no logging.
	Logger *zap.Logger
}

// Handler answers the Graph endpoints. It is safe for concurrent use.
type Handler struct {
	store         storage.Store
	user          func(*http.Request) (storage.User, bool)
	email         func(*http.Request) string
	projectSpaces []string
	logger        *zap.Logger
	routes        map[string]endpoint
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
	h := &Handler{
		store:         cfg.Store,
		user:          cfg.User,
		email:         cfg.Email,
		projectSpaces: dedupe(cfg.ProjectSpaces),
		logger:        cfg.Logger,
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
	}
	return h, nil
}

// dedupe copies ids without repeats, keeping the configured order, so that
// a space configured twice is listed once.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
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
	ep, ok := h.routes[strings.TrimSuffix(r.URL.Path, "/")]
	if !ok {
		h.fail(w, r, errNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allow)
		h.fail(w, r, errMethod)
		return
	}
	u, ok := h.user(r)
	if !ok || u.ID == "" {
		h.fail(w, r, errUnauthenticated)
		return
	}
	if err := ep(w, r, u); err != nil {
		h.fail(w, r, err)
	}
}
