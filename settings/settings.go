// Package settings answers the calls ownCloud Web makes to the settings
// service of ownCloud Infinite Scale (/api/v0/settings/…) while it starts
// and on its account page, as a plain net/http handler.
//
// davspaces keeps no settings or roles of its own beyond the space roles of
// the Caddyfile, so those lists are empty: Web then gives the user no
// administration rights and keeps its defaults, which is what davspaces
// serves. The permissions are those of the features every user has
// (shares, links, favourites), under the names Web turns into abilities.
// Web treats a failed assignments-list as a failed sign-in, which is why
// these answers must exist at all.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// Prefix is the root of every path this package claims.
const Prefix = "/api/v0/settings/"

// maxBodyBytes bounds what is read of a request's body: Web sends a few
// ids at most, and nothing here depends on them.
const maxBodyBytes = 64 << 10

// Config configures a Handler.
type Config struct {
	// User identifies the caller. Required.
	User func(*http.Request) (storage.User, bool)
	// Sharing says users may share items with others and make links of
	// them (Graph, OCS): Web offers both only with the permissions.
	Sharing bool
	// Favorites says users may mark favourites and list them (WebDAV):
	// Web offers them only with the permissions.
	Favorites bool
}

// The permission names of oCIS' settings service that ownCloud Web turns
// into abilities (web-runtime/src/services/auth/abilities.ts getAbilities)
// and that oCIS gives its "User" role
// (services/settings/pkg/store/defaults/defaults.go).
const (
	PermissionShares        = "Shares.Write.all"
	PermissionPublicLinks   = "PublicLink.Write.all"
	PermissionFavoritesList = "Favorites.List.own"
	PermissionFavorites     = "Favorites.Write.own"
)

// Handler answers the settings endpoints. It is safe for concurrent use.
type Handler struct {
	user    func(*http.Request) (storage.User, bool)
	answers map[string]string
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.User == nil {
		return nil, errors.New("settings: a user function is required")
	}
	answers := maps.Clone(emptyAnswers)
	body, err := json.Marshal(struct {
		Permissions []string `json:"permissions"`
	}{Permissions(cfg)})
	if err != nil {
		return nil, fmt.Errorf("settings: encoding the permissions: %w", err)
	}
	answers["permissions-list"] = string(body)
	return &Handler{user: cfg.User, answers: answers}, nil
}

// Permissions are the permissions every user has with cfg's features.
// Nobody gets more: spaces are made and their members named in the
// Caddyfile, so there is nothing to administer from Web.
func Permissions(cfg Config) []string {
	perms := []string{}
	if cfg.Sharing {
		perms = append(perms, PermissionShares, PermissionPublicLinks)
	}
	if cfg.Favorites {
		perms = append(perms, PermissionFavoritesList, PermissionFavorites)
	}
	return perms
}

// emptyAnswers maps each endpoint, below Prefix, to its answer when
// nothing is to be given: the list Web reads, under the key it reads it
// from, empty.
var emptyAnswers = map[string]string{
	// userManager.ts fetchRole: data.assignments.find(…) — must be a list.
	"assignments-list": `{"assignments":[]}`,
	// userManager.ts fetchRoles: data.bundles.
	"roles-list": `{"bundles":[]}`,
	// userManager.ts fetchPermissions: data.permissions, turned into the
	// user's abilities; New puts those of the features served here.
	"permissions-list": `{"permissions":[]}`,
	// account.vue: data.values, the user's saved preferences.
	"values-list": `{"values":[]}`,
	// account.vue: data.bundles, searched for the accounts bundle; without
	// it the page offers no preferences to change.
	"bundles-list": `{"bundles":[]}`,
}

// Route returns the handler of a request under Prefix; ok=false leaves the
// request to the next handler.
func (h *Handler) Route(r *http.Request) (http.Handler, bool) {
	p := r.URL.Path
	if p != strings.TrimSuffix(Prefix, "/") && !strings.HasPrefix(p, Prefix) {
		return nil, false
	}
	return h, true
}

// ServeHTTP answers one settings request: POST only, authenticated, and
// 404 for an endpoint this package does not answer (values-save among
// them: there is nothing to save a preference in).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, errors included, depends on the credentials.
	w.Header().Add("Vary", "Authorization")
	answer, ok := h.answers[strings.TrimPrefix(r.URL.Path, Prefix)]
	if !ok {
		writeError(w, http.StatusNotFound, "the settings service does not offer this")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "only POST is answered")
		return
	}
	if u, ok := h.user(r); !ok || u.ID == "" {
		writeError(w, http.StatusUnauthorized, "authentication is required")
		return
	}
	// The body names whose settings are asked for; every answer is the
	// same whoever it names (Web asks for the caller's own), so it is read
	// only so that the connection can be reused, and only so far.
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBodyBytes))
	writeJSON(w, http.StatusOK, answer)
}

// errorBody is the error shape of oCIS' settings service (go-micro's).
type errorBody struct {
	ID     string `json:"id"`
	Code   int    `json:"code"`
	Detail string `json:"detail"`
	Status string `json:"status"`
}

func writeError(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(errorBody{ID: "go.micro.client", Code: status, Detail: detail, Status: http.StatusText(status)})
	writeJSON(w, status, string(body))
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
