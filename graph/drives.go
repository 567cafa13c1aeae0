package graph

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
)

// drive is one space in the Graph drive shape.
type drive struct {
	ID         string `json:"id"`
	DriveType  string `json:"driveType"`
	DriveAlias string `json:"driveAlias"`
	Name       string `json:"name"`
	// WebURL opens the space in a browser: the private link of its root.
	// ownCloud Web takes the server's address from it.
	WebURL               string     `json:"webUrl"`
	LastModifiedDateTime *time.Time `json:"lastModifiedDateTime,omitempty"`
	Owner                *owner     `json:"owner,omitempty"`
	Quota                quota      `json:"quota"`
	Root                 driveRoot  `json:"root"`
}

type owner struct {
	User identitySet `json:"user"`
}

type identitySet struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
}

type driveRoot struct {
	ID        string `json:"id"`
	WebDavURL string `json:"webDavUrl"`
	ETag      string `json:"eTag"`
	// Permissions name the space's members and their roles.
	Permissions []permission `json:"permissions"`
	// RemoteItem is, on a mount point, the shared item it shows.
	RemoteItem *driveItem `json:"remoteItem,omitempty"`
}

// drivesBody is the answer of /me/drives.
type drivesBody struct {
	Value []drive `json:"value"`
}

// myDrives answers the spaces u may see: the personal space, then every
// configured project space u has a role in, in configuration order, or as
// $orderby asks; $filter picks a drive type. The Shares drive and the
// mount points of what was shared with u are listed only when $filter
// asks for them (driveType eq virtual, driveType eq mountpoint), which is
// how ownCloud Web asks: clients that list every drive unfiltered, as the
// browser page does, see spaces only.
func (h *Handler) myDrives(w http.ResponseWriter, r *http.Request, u storage.User) error {
	q, err := parseDrivesQuery(r.URL.Query())
	if err != nil {
		return err
	}
	base := origin.Of(r)
	switch q.driveType {
	case "virtual":
		h.writeJSON(w, r, http.StatusOK, drivesBody{Value: []drive{h.sharesDrive(base)}})
		return nil
	case "mountpoint":
		mounts, err := h.mountDrives(r.Context(), base, u)
		if err != nil {
			return err
		}
		q.sort(mounts)
		h.writeJSON(w, r, http.StatusOK, drivesBody{Value: mounts})
		return nil
	}
	spaces, err := h.visibleSpaces(r.Context(), u)
	if err != nil {
		return err
	}
	body := drivesBody{Value: make([]drive, 0, len(spaces))}
	for _, s := range spaces {
		if !q.wants(s.Type) {
			continue
		}
		d, err := h.drive(r.Context(), base, s)
		if err != nil {
			return err
		}
		body.Value = append(body.Value, d)
	}
	q.sort(body.Value)
	h.writeJSON(w, r, http.StatusOK, body)
	return nil
}

// visibleSpaces returns the spaces u sees (storage.SpacePolicy.SpacesOf):
// u's personal space and the configured project spaces u is a member of,
// those u's scope reaches, in the configuration's order.
func (h *Handler) visibleSpaces(ctx context.Context, u storage.User) ([]storage.Space, error) {
	return h.spaces.SpacesOf(ctx, h.store, u)
}

// drive describes s; its root node gives the etag, the size and the time.
func (h *Handler) drive(ctx context.Context, base string, s storage.Space) (drive, error) {
	root, err := h.store.Node(ctx, s.ID, s.ID)
	if err != nil {
		return drive{}, fmt.Errorf("root of space %s: %w", s.ID, err)
	}
	usage, err := h.store.Usage(ctx, s.ID)
	if err != nil {
		return drive{}, fmt.Errorf("usage of space %s: %w", s.ID, err)
	}
	id := formatDriveID(h.store.StorageID(), s.ID)
	// The private link of the root, as its WebDAV oc:privatelink gives it.
	link := url.URL{Path: "/f/" + formatItemID(h.store.StorageID(), s.ID, root.ID)}
	d := drive{
		ID:        id,
		DriveType: string(s.Type),
		Name:      s.Name,
		WebURL:    base + link.EscapedPath(),
		Quota:     quotaOf(s.Quota, usage),
		Root: driveRoot{
			ID:        id,
			WebDavURL: base + "/dav/spaces/" + id,
			// Quoted, as the WebDAV getetag of the same root.
			ETag:        `"` + root.ETag + `"`,
			Permissions: memberPermissions(s),
		},
	}
	if !root.ModTime.IsZero() {
		t := root.ModTime.UTC()
		d.LastModifiedDateTime = &t
	}
	d.DriveAlias = driveAlias(s)
	if s.Type == storage.SpacePersonal {
		d.Owner = &owner{User: identitySet{ID: s.Owner, DisplayName: s.OwnerDisplayName}}
	}
	return d, nil
}

// driveAlias is the alias of space s: "personal/<owner>" or
// "project/<slug of the name>", as oCIS forms them.
func driveAlias(s storage.Space) string {
	if s.Type == storage.SpacePersonal {
		return "personal/" + s.Owner
	}
	return "project/" + slug(s.Name)
}
