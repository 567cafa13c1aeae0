package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// errShortSearch refuses a search that would list everybody
// (storage.DirectorySearchTooShort), as oCIS answers a user who is not an
// administrator.
var errShortSearch = &apiError{http.StatusForbidden, "accessDenied", fmt.Sprintf("search term too short: at least %d characters", storage.MinDirectorySearch)}

// userBody is a libre-graph user as a search lists it.
type userBody struct {
	ID                       string `json:"id"`
	DisplayName              string `json:"displayName"`
	Mail                     string `json:"mail,omitempty"`
	OnPremisesSamAccountName string `json:"onPremisesSamAccountName"`
	UserType                 string `json:"userType"`
}

// searchUsers answers $search among the users who signed in and the
// users the configuration names as members, ordered by display name
// (ownCloud Web asks $orderby=displayName), then id.
func (h *Handler) searchUsers(w http.ResponseWriter, r *http.Request, _ storage.User) error {
	q, err := searchTerm(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	entries, err := h.directory.SearchUsers(ctx, q, storage.MaxDirectoryResults)
	if err != nil {
		return fmt.Errorf("searching users: %w", err)
	}
	users, _, err := h.configuredMembers(ctx)
	if err != nil {
		return err
	}
	found := map[string]storage.DirectoryEntry{}
	for _, id := range users {
		if e := (storage.DirectoryEntry{ID: id}); storage.MatchesDirectoryQuery(e, q) {
			found[id] = e
		}
	}
	for _, e := range entries {
		found[e.ID] = e
	}
	value := make([]userBody, 0, len(found))
	for _, e := range found {
		value = append(value, userBody{ID: e.ID, DisplayName: cmp.Or(e.DisplayName, e.ID), Mail: e.Email,
			OnPremisesSamAccountName: e.ID, UserType: "Member"})
	}
	slices.SortFunc(value, func(a, b userBody) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.DisplayName), strings.ToLower(b.DisplayName)), cmp.Compare(a.ID, b.ID))
	})
	value = value[:min(len(value), storage.MaxDirectoryResults)]
	h.writeJSON(w, r, http.StatusOK, struct {
		Value []userBody `json:"value"`
	}{value})
	return nil
}

// searchGroups answers $search among the groups of the users who signed
// in and the groups the configuration names as members, sorted.
func (h *Handler) searchGroups(w http.ResponseWriter, r *http.Request, _ storage.User) error {
	q, err := searchTerm(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	groups, err := h.directory.SearchGroups(ctx, q, storage.MaxDirectoryResults)
	if err != nil {
		return fmt.Errorf("searching groups: %w", err)
	}
	_, configured, err := h.configuredMembers(ctx)
	if err != nil {
		return err
	}
	lower := strings.ToLower(q)
	for _, g := range configured {
		if strings.Contains(strings.ToLower(g), lower) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	value := make([]identitySet, 0, len(groups))
	for _, g := range groups[:min(len(groups), storage.MaxDirectoryResults)] {
		value = append(value, identitySet{ID: g, DisplayName: g})
	}
	h.writeJSON(w, r, http.StatusOK, struct {
		Value []identitySet `json:"value"`
	}{value})
	return nil
}

// searchTerm reads $search, which ownCloud Web sends in double quotes.
func searchTerm(r *http.Request) (string, error) {
	q := strings.TrimSpace(r.URL.Query().Get("$search"))
	if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' {
		q = q[1 : len(q)-1]
	}
	if storage.DirectorySearchTooShort(q) {
		return "", errShortSearch
	}
	return q, nil
}

// configuredMembers lists the users and the groups the configured project
// spaces name as members.
func (h *Handler) configuredMembers(ctx context.Context) (users, groups []string, err error) {
	for _, id := range h.spaces.ProjectSpaces() {
		s, err := h.store.Space(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("project space %s: %w", id, err)
		}
		for member := range s.Members {
			if g, ok := strings.CutPrefix(member, storage.GroupPrefix); ok {
				groups = append(groups, g)
			} else {
				users = append(users, member)
			}
		}
	}
	return users, groups, nil
}

// knownUser reports whether user id signed in or is a configured member.
func (h *Handler) knownUser(ctx context.Context, id string) (bool, error) {
	if storage.ValidUserID(id) != nil {
		return false, nil
	}
	_, err := h.directory.DirectoryUser(ctx, id)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return false, fmt.Errorf("directory entry of %s: %w", id, err)
	}
	users, _, err := h.configuredMembers(ctx)
	return slices.Contains(users, id), err
}

// knownGroup reports whether group name is a group of someone who signed
// in or a configured member.
func (h *Handler) knownGroup(ctx context.Context, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	_, groups, err := h.configuredMembers(ctx)
	if err != nil || slices.Contains(groups, name) {
		return err == nil, err
	}
	found, err := h.directory.SearchGroups(ctx, name, storage.MaxDirectoryResults)
	if err != nil {
		return false, fmt.Errorf("searching group %s: %w", name, err)
	}
	return slices.Contains(found, name), nil
}
