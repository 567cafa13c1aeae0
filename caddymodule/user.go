package caddymodule

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The sign-in contract between the modules: an authentication handler
// (oidc_auth here, or Caddy's basic_auth and others) writes the signed-in
// user into these placeholders, and davspaces reads them. Both halves live
// in this file so that the names and the groups' form cannot drift apart.
const (
	userIDPlaceholder     = "http.auth.user.id"
	userNamePlaceholder   = "http.auth.user.name"
	userEmailPlaceholder  = "http.auth.user.email"
	userGroupsPlaceholder = "http.auth.user.groups"
	// userAppPasswordPlaceholder is the id of the app password the user
	// signed in with, unset for any other sign-in.
	userAppPasswordPlaceholder = "http.auth.user.app_password_id"
	// userClientPlaceholder is the OpenID Connect client the bearer token
	// was issued to (its azp, else its client_id), unset for any other
	// sign-in.
	userClientPlaceholder = "http.auth.user.client_id"
	// The scope of that app password (storage.Scope), each unset when the
	// password does not narrow it: the space id, the folder path, and
	// read_only set to true.
	userScopeSpacePlaceholder    = "http.auth.user.scope.space"
	userScopePathPlaceholder     = "http.auth.user.scope.path"
	userScopeReadOnlyPlaceholder = "http.auth.user.scope.read_only"
)

// setScope writes the scope the request is narrowed to.
func setScope(repl *caddy.Replacer, s storage.Scope) {
	if s.Space != "" {
		repl.Set(userScopeSpacePlaceholder, s.Space)
	}
	if s.Path != "" {
		repl.Set(userScopePathPlaceholder, s.Path)
	}
	if s.ReadOnly {
		repl.Set(userScopeReadOnlyPlaceholder, "true")
	}
}

// scopeOf reads the scope setScope wrote.
func scopeOf(repl *caddy.Replacer) (storage.Scope, error) {
	space, _ := repl.GetString(userScopeSpacePlaceholder)
	path, _ := repl.GetString(userScopePathPlaceholder)
	readOnly, _ := repl.GetString(userScopeReadOnlyPlaceholder)
	s := storage.Scope{Space: space, Path: path, ReadOnly: readOnly == "true"}
	return s, s.Valid()
}

// userGroups is the value of {http.auth.user.groups}: a list that prints
// comma-separated in placeholders.
type userGroups []string

func (g userGroups) String() string { return strings.Join(g, ",") }

// setUser writes the signed-in user; what the provider does not know stays
// unset rather than empty.
func setUser(repl *caddy.Replacer, id, name, email string, groups []string) {
	repl.Set(userIDPlaceholder, id)
	if name != "" {
		repl.Set(userNamePlaceholder, name)
	}
	if email != "" {
		repl.Set(userEmailPlaceholder, email)
	}
	if len(groups) > 0 {
		repl.Set(userGroupsPlaceholder, userGroups(groups))
	}
}

// userFromCaddy returns the reader of the user Caddy's authentication
// handler set. An id that is not a valid user id (basic_auth or another
// authenticator may pass anything) means no user, so the request gets 401
// and never reaches a store; the warning says why.
func userFromCaddy(logger *zap.Logger) func(*http.Request) (storage.User, bool) {
	logger = throttled(logger, newWarnThrottle(nil))
	return func(r *http.Request) (storage.User, bool) {
		repl, ok := requestReplacer(r)
		if !ok {
			return storage.User{}, false
		}
		id, ok := repl.GetString(userIDPlaceholder)
		if !ok || id == "" {
			return storage.User{}, false
		}
		if err := storage.ValidUserID(id); err != nil {
			logger.Warn("request refused: the authenticated user id is not a valid user id", zap.Error(err))
			return storage.User{}, false
		}
		scope, err := scopeOf(repl)
		if err != nil {
			// Refused rather than read wider than it was meant.
			logger.Warn("request refused: the authenticated scope is not valid", zap.Error(err))
			return storage.User{}, false
		}
		name, _ := repl.GetString(userNamePlaceholder)
		return storage.User{ID: id, DisplayName: name, Groups: groupsOf(repl), Scope: scope}, true
	}
}

// emailFromCaddy reads {http.auth.user.email}, which oidc_auth sets when
// the provider knows the address.
func emailFromCaddy(r *http.Request) string {
	return placeholderString(r, userEmailPlaceholder)
}

// placeholderString reads the string placeholder key of the request's
// replacer, "" when it is unset or the request has no replacer.
func placeholderString(r *http.Request, key string) string {
	repl, ok := requestReplacer(r)
	if !ok {
		return ""
	}
	v, _ := repl.GetString(key)
	return v
}

// requestReplacer returns the request's replacer, which only a request
// that went through Caddy's server has.
func requestReplacer(r *http.Request) (*caddy.Replacer, bool) {
	repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	return repl, ok
}

// groupsOf reads {http.auth.user.groups}: the list oidc_auth sets, or the
// comma-separated string other authentication modules may set.
func groupsOf(repl *caddy.Replacer) []string {
	v, _ := repl.Get(userGroupsPlaceholder)
	switch g := v.(type) {
	case userGroups:
		return g
	case string:
		return splitGroups(g)
	}
	return nil
}

// splitGroups reads a comma-separated group list as another authentication
// handler may have written it ("a, b,"), without blank names.
func splitGroups(list string) []string {
	var groups []string
	for _, g := range strings.Split(list, ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	return groups
}

// usedAppPassword reads {http.auth.user.app_password_id}: the id of the
// app password the request signed in with, "" when none.
func usedAppPassword(r *http.Request) string {
	return placeholderString(r, userAppPasswordPlaceholder)
}

// usedCredential names what the request signed in with, so that two
// clients of one user are told apart: the app password's id, or the
// OpenID Connect client its token was issued to; "" for any other
// sign-in.
func usedCredential(r *http.Request) string {
	if id := usedAppPassword(r); id != "" {
		return id
	}
	if client := placeholderString(r, userClientPlaceholder); client != "" {
		return "oidc client " + client
	}
	return ""
}
