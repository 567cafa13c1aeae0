package davhandler

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

func (h *Handler) handleProppatch(w http.ResponseWriter, r *http.Request, req *request) error {
	body, err := h.readXMLBody(w, r)
	if err != nil {
		return err
	}
	pp, err := parseProppatch(body)
	if err != nil {
		return err
	}
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	patches, refused, err := checkPatches(t, req.user, pp.patches)
	if err != nil {
		return err
	}
	// PatchProps takes no conditions: the check is as of resolving the
	// target, not atomic with the change.
	if _, err := h.changeConditions(r, req, t, written(t)...); err != nil {
		return err
	}
	if len(refused) == 0 {
		if err := h.store.PatchProps(r.Context(), t.space.ID, t.node.ID, patches); err != nil {
			return err
		}
	}
	ms := davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers)
	ms.BeginResponse(t.href())
	writePatchResults(ms, pp.patches, refused)
	ms.EndResponse()
	return ms.Close()
}

// checkPatches turns oc:favorite into the caller's own flag and refuses
// protected properties. It returns the patches to apply and the indexes of
// the refused ones. A viewer may only change their favourites.
func checkPatches(t *target, user storage.User, in []storage.PropPatch) ([]storage.PropPatch, map[int]int, error) {
	refused := map[int]int{}
	out := make([]storage.PropPatch, 0, len(in))
	for i, p := range in {
		name := xml.Name{Space: p.Name.Space, Local: p.Name.Local}
		switch {
		case name == favoriteName && strings.HasPrefix(user.ID, linkCallerPrefix):
			// A link has no favourites: it is nobody's.
			refused[i] = http.StatusForbidden
		case name == favoriteName:
			// Favourites are per user; a viewer may keep their own.
			p.User = user.ID
			p.Remove = p.Remove || !truthy(p.Value)
			p.Value = "1"
		case isProtected(name):
			refused[i] = http.StatusForbidden
		case !t.access.mayChange():
			return nil, nil, errReadOnly
		}
		out = append(out, p)
	}
	return out, refused, nil
}

// truthy interprets an oc:favorite value the way ownCloud does.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// writePatchResults reports each property: refused ones with their status,
// the others 200 when everything was applied or 424 when nothing was.
func writePatchResults(ms *davxml.Multistatus, patches []storage.PropPatch, refused map[int]int) {
	groups := map[int][]xml.Name{}
	var order []int
	for i, p := range patches {
		status := http.StatusOK
		if s, ok := refused[i]; ok {
			status = s
		} else if len(refused) > 0 {
			status = http.StatusFailedDependency
		}
		if _, ok := groups[status]; !ok {
			order = append(order, status)
		}
		groups[status] = append(groups[status], xml.Name{Space: p.Name.Space, Local: p.Name.Local})
	}
	for _, status := range order {
		ms.BeginPropstat()
		for _, n := range groups[status] {
			ms.EmptyElement(n)
		}
		if status == http.StatusForbidden {
			ms.EndPropstatWithError(status, "cannot-modify-protected-property")
			continue
		}
		ms.EndPropstat(status)
	}
}
