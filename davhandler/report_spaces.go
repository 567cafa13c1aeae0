package davhandler

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// isAllSpacesReport reports whether r is a REPORT of /dav/spaces/ itself,
// where ownCloud Web sends its search: the one method answered there.
func isAllSpacesReport(r *http.Request, dp davPath) bool {
	return dp.kind == baseAllSpaces && r.Method == "REPORT"
}

// spaceHit is a result found in one of the user's spaces.
type spaceHit struct {
	in   *spaceSearch
	node storage.Node
}

// spaceSearch is the search of one space: its root as the target and the
// paths of its folders.
type spaceSearch struct {
	t     *target
	pc    *propContext
	paths *folderPaths
}

// handleReportAllSpaces answers a search REPORT of /dav/spaces/ with the
// matches in every space the user is a member of (the personal space and
// the served project spaces), merged in search order; the total is that
// of all of them.
func (h *Handler) handleReportAllSpaces(w http.ResponseWriter, r *http.Request, req *request) error {
	rep, err := h.readReport(w, r)
	if err != nil {
		return err
	}
	limit := cmp.Or(rep.limit, storage.MaxSearchResults)
	// Each space answers the first results up to the page's end; the
	// page is cut from them merged.
	each := rep
	each.limit, each.offset = min(rep.offset+limit, storage.MaxSearchResults), 0
	var hits []spaceHit
	total := 0
	spaces, err := h.spacesOf(r, req.user)
	if err != nil {
		return err
	}
	for _, space := range spaces {
		ref := resourceid.Space(h.store.StorageID(), space.ID).String()
		// A scope naming a folder is searched from that folder.
		t, err := h.resolveExisting(r.Context(), req.user, davPath{kind: baseSpaces, ref: ref, base: req.path.base + "/" + ref,
			segments: scopeNames(req.user.Scope)})
		if err != nil {
			return err
		}
		found, err := h.searchTarget(r, req, t, each)
		if err != nil {
			return err
		}
		total += found.Total
		in := &spaceSearch{t: t, pc: h.newPropContext(r, req, t, rep.props), paths: h.newFolderPaths(t)}
		for _, n := range found.Nodes {
			hits = append(hits, spaceHit{in: in, node: n})
		}
	}
	slices.SortFunc(hits, func(a, b spaceHit) int {
		return cmp.Or(strings.Compare(storage.SearchKey(a.node.Name), storage.SearchKey(b.node.Name)), strings.Compare(a.node.ID, b.node.ID))
	})
	hits = hits[min(rep.offset, len(hits)):min(rep.offset+limit, len(hits))]
	if len(hits) > 0 {
		w.Header().Set("Content-Range", fmt.Sprintf("rows %d-%d/%d", rep.offset, rep.offset+len(hits)-1, total))
	}
	ms := davxml.StartMultistatus(w, davxml.ListingBuffer, &h.responseBuffers)
	for _, hit := range hits {
		if err = hit.in.paths.writeResult(hit.in.pc, ms, rep.props, &hit.node); err != nil {
			break
		}
	}
	if err == nil {
		err = ms.Close()
	}
	if err != nil && r.Context().Err() == nil {
		h.logger.Error("streaming report", zap.String("uri", r.RequestURI), zap.Error(err))
	}
	return nil
}

// spacesOf returns the spaces u sees (storage.SpacePolicy.SpacesOf) in
// search order: the personal space, then the project spaces by id.
func (h *Handler) spacesOf(r *http.Request, u storage.User) ([]storage.Space, error) {
	spaces, err := h.spaces.SpacesOf(r.Context(), h.store, u)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(spaces, func(a, b storage.Space) int {
		return cmp.Or(cmp.Compare(personalFirst(a), personalFirst(b)), cmp.Compare(a.ID, b.ID))
	})
	return spaces, nil
}

// personalFirst ranks a personal space before a project space.
func personalFirst(s storage.Space) int {
	if s.Type == storage.SpacePersonal {
		return 0
	}
	return 1
}

// scopeNames are the names from its space's root down to the folder scope
// names; nil for a whole space.
func scopeNames(scope storage.Scope) []string {
	if scope.Path == "" {
		return nil
	}
	return strings.Split(scope.Path[1:], "/")
}
