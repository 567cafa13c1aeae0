package ocs

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// sharee is one user or group to share with, as ownCloud's sharees API
// answers it (owncloud/android ShareeItem).
type sharee struct {
	Label string      `json:"label" xml:"label"`
	Value shareeValue `json:"value" xml:"value"`
}

type shareeValue struct {
	ShareType int    `json:"shareType" xml:"shareType"`
	ShareWith string `json:"shareWith" xml:"shareWith"`
	// ShareWithAdditionalInfo is a user's email, when known.
	ShareWithAdditionalInfo string `json:"shareWithAdditionalInfo,omitempty" xml:"shareWithAdditionalInfo,omitempty"`
}

// shareeLists are the users and groups found, and the remotes (federated
// users) there never are.
type shareeLists struct {
	Users   elements[sharee] `json:"users" xml:"users"`
	Groups  elements[sharee] `json:"groups" xml:"groups"`
	Remotes elements[sharee] `json:"remotes" xml:"remotes"`
}

// shareesData is the data of a sharees answer: the exact matches apart
// from the others.
type shareesData struct {
	Exact shareeLists `json:"exact" xml:"exact"`
	shareeLists
}

// sharees answers GET sharees?search=…: the users who signed in and the
// members the configuration names whose id, name or email contains search,
// and the groups whose name does, case-insensitively; those equal to
// search under exact. The caller is not among them. A search too short
// to tell anybody (storage.DirectorySearchTooShort) finds nobody, as
// Graph's people search refuses it. perPage (at most
// storage.MaxDirectoryResults) bounds each list; there is no page after
// the first.
func (s *sharing) sharees(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
	q := r.URL.Query()
	search := strings.TrimSpace(q.Get("search"))
	limit := storage.MaxDirectoryResults
	if n, err := strconv.Atoi(q.Get("perPage")); err == nil {
		limit = storage.DirectoryLimit(n)
	}
	var data shareesData
	if page, err := strconv.Atoi(q.Get("page")); err == nil && page > 1 || storage.DirectorySearchTooShort(search) {
		writeOK(w, r, v, data)
		return nil
	}
	users, err := s.searchUsers(r.Context(), search, limit, u.ID)
	if err != nil {
		return err
	}
	groups, err := s.searchGroups(r.Context(), search, limit)
	if err != nil {
		return err
	}
	fold := storage.FoldDirectoryText(search)
	for _, e := range users {
		label := e.DisplayName
		if label == "" {
			label = e.ID
		}
		sh := sharee{Label: label, Value: shareeValue{ShareType: int(storage.ShareWithUser), ShareWith: e.ID, ShareWithAdditionalInfo: e.Email}}
		if isExact(fold, e.ID, e.DisplayName, e.Email) {
			data.Exact.Users = append(data.Exact.Users, sh)
		} else {
			data.Users = append(data.Users, sh)
		}
	}
	for _, g := range groups {
		sh := sharee{Label: g, Value: shareeValue{ShareType: int(storage.ShareWithGroup), ShareWith: g}}
		if isExact(fold, g) {
			data.Exact.Groups = append(data.Exact.Groups, sh)
		} else {
			data.Groups = append(data.Groups, sh)
		}
	}
	writeOK(w, r, v, data)
	return nil
}

// isExact reports whether the folded search equals one of fields, folded;
// the empty search equals none.
func isExact(folded string, fields ...string) bool {
	return folded != "" && slices.ContainsFunc(fields, func(f string) bool { return storage.FoldDirectoryText(f) == folded })
}

// searchUsers returns up to limit users search finds, by id: the
// directory's, and the configured members it does not know, without the
// caller.
func (s *sharing) searchUsers(ctx context.Context, search string, limit int, caller string) ([]storage.DirectoryEntry, error) {
	// One more than limit, as the caller may be among them.
	found, err := s.store.SearchUsers(ctx, search, limit+1)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return nil, err
	}
	for _, id := range s.members {
		e := storage.DirectoryEntry{ID: id}
		if storage.MatchesDirectoryQuery(e, search) && !slices.ContainsFunc(found, func(f storage.DirectoryEntry) bool { return f.ID == id }) {
			found = append(found, e)
		}
	}
	found = slices.DeleteFunc(found, func(e storage.DirectoryEntry) bool { return e.ID == caller })
	slices.SortFunc(found, func(a, b storage.DirectoryEntry) int { return strings.Compare(a.ID, b.ID) })
	return found[:min(len(found), limit)], nil
}

// searchGroups returns up to limit group names search finds, sorted: the
// directory's and the configured ones.
func (s *sharing) searchGroups(ctx context.Context, search string, limit int) ([]string, error) {
	found, err := s.store.SearchGroups(ctx, search, limit)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return nil, err
	}
	for _, g := range s.groups {
		if storage.MatchesGroupQuery(g, search) {
			found = append(found, g)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	return found[:min(len(found), limit)], nil
}
