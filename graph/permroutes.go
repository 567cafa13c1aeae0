package graph

import (
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// drivesPrefix is where the item endpoints of libre-graph start.
const drivesPrefix = "/graph/v1beta1/drives/"

// itemPath is what a path below drivesPrefix names: a drive, an item of
// it (or its root), and the action on it.
type itemPath struct {
	driveID, itemID string
	root            bool
	// action is "createLink", "invite", "permissions"; permissionID and
	// sub ("setPassword") follow permissions.
	action, permissionID, sub string
}

// parseItemPath reads drives/{drive}/items/{item}/{action}[/{id}[/{sub}]]
// and drives/{drive}/root/{action}[/...].
func parseItemPath(p string) (itemPath, bool) {
	rest, ok := strings.CutPrefix(p, drivesPrefix)
	if !ok {
		return itemPath{}, false
	}
	seg := strings.Split(rest, "/")
	var ip itemPath
	switch {
	case len(seg) >= 4 && seg[1] == "items":
		ip.driveID, ip.itemID, seg = seg[0], seg[2], seg[3:]
	case len(seg) >= 3 && seg[1] == "root":
		ip.driveID, ip.root, seg = seg[0], true, seg[2:]
	default:
		return itemPath{}, false
	}
	ip.action = seg[0]
	switch {
	case len(seg) == 1:
	case len(seg) == 2 && ip.action == "permissions":
		ip.permissionID = seg[1]
	case len(seg) == 3 && ip.action == "permissions" && seg[2] == "setPassword":
		ip.permissionID, ip.sub = seg[1], seg[2]
	default:
		return itemPath{}, false
	}
	if ip.driveID == "" || (!ip.root && ip.itemID == "") || (len(seg) > 1 && ip.permissionID == "") {
		return itemPath{}, false
	}
	return ip, true
}

// permissionRoute finds the sharing endpoint of method on path p, as
// endpoint does for the fixed paths.
func (h *Handler) permissionRoute(method, p string) (endpoint, string, bool) {
	ip, ok := parseItemPath(p)
	if !ok {
		return nil, "", false
	}
	handlers := h.itemHandlers(ip)
	if handlers == nil {
		return nil, "", false
	}
	if method == http.MethodHead {
		method = http.MethodGet
	}
	ep, ok := handlers[method]
	if !ok {
		return nil, allowOf(handlers), true
	}
	return ep, "", true
}

// itemHandlers are the methods answered on ip; nil when none.
func (h *Handler) itemHandlers(ip itemPath) map[string]endpoint {
	if ip.root {
		// A space's root is shared by its membership, which the
		// Caddyfile gives: its permissions are listed, never changed.
		if ip.action == "permissions" && ip.permissionID == "" {
			return map[string]endpoint{http.MethodGet: bind(h.listRootPermissions, ip)}
		}
		if ip.action == "createLink" || ip.action == "invite" || ip.action == "permissions" {
			return map[string]endpoint{http.MethodPost: refuseRoot, http.MethodPatch: refuseRoot, http.MethodDelete: refuseRoot}
		}
		return nil
	}
	switch {
	case ip.action == "createLink":
		return map[string]endpoint{http.MethodPost: bind(h.createLink, ip)}
	case ip.action == "invite":
		return map[string]endpoint{http.MethodPost: bind(h.invite, ip)}
	case ip.action == "permissions" && ip.permissionID == "":
		return map[string]endpoint{http.MethodGet: bind(h.listPermissions, ip)}
	case ip.action == "permissions" && ip.sub == "":
		return map[string]endpoint{
			http.MethodGet:    bind(h.getPermission, ip),
			http.MethodPatch:  bind(h.updatePermission, ip),
			http.MethodDelete: bind(h.deletePermission, ip),
		}
	case ip.sub == "setPassword":
		return map[string]endpoint{http.MethodPost: bind(h.setLinkPassword, ip)}
	}
	return nil
}

// itemEndpoint answers a request on the item a path names.
type itemEndpoint func(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error

func bind(ep itemEndpoint, ip itemPath) endpoint {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error { return ep(w, r, u, ip) }
}

// errRootShare refuses shares and links of a space's root.
var errRootShare = invalidRequest("a space's root is shared by its membership in the configuration, not by links or invitations")

func refuseRoot(http.ResponseWriter, *http.Request, storage.User) error { return errRootShare }

// allowOf lists the methods of handlers for an Allow header.
func allowOf(handlers map[string]endpoint) string {
	var methods []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		if _, ok := handlers[m]; ok {
			methods = append(methods, m)
			if m == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
		}
	}
	return strings.Join(methods, ", ")
}
