package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// driveItem is a libre-graph driveItem as the sharing listings give it.
type driveItem struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ETag                 string            `json:"eTag,omitempty"`
	Size                 int64             `json:"size"`
	LastModifiedDateTime *time.Time        `json:"lastModifiedDateTime,omitempty"`
	File                 *fileFacet        `json:"file,omitempty"`
	Folder               *struct{}         `json:"folder,omitempty"`
	ParentReference      *itemReference    `json:"parentReference,omitempty"`
	CreatedBy            *identitySetUser  `json:"createdBy,omitempty"`
	RemoteItem           *driveItem        `json:"remoteItem,omitempty"`
	Permissions          []sharePermission `json:"permissions,omitempty"`
	WebDavURL            string            `json:"webDavUrl,omitempty"`
	// RootID and DriveAlias are, on a mount point's remoteItem, the root
	// of the item's space and its alias: ownCloud Web names the drive of
	// a received share's permissions by RootID.
	RootID     string `json:"rootId,omitempty"`
	DriveAlias string `json:"driveAlias,omitempty"`
	// Hidden and Synchronize are oCIS' marks on a received share: shown,
	// and accepted (davspaces accepts every share at once).
	Hidden      *bool `json:"@UI.Hidden,omitempty"`
	Synchronize *bool `json:"@client.synchronize,omitempty"`
}

type fileFacet struct {
	MimeType string `json:"mimeType"`
}

type itemReference struct {
	DriveID   string `json:"driveId"`
	DriveType string `json:"driveType"`
	ID        string `json:"id,omitempty"`
	// Path is the parent's path in its space, "." for the root and
	// "./a/b" below it, as oCIS gives it; only to those who see the
	// space (sharedByMe).
	Path string `json:"path,omitempty"`
}

type identitySetUser struct {
	User identitySet `json:"user"`
}

// itemFacts fills the parts of a driveItem that describe node n itself.
func itemFacts(d *driveItem, n storage.Node) {
	d.Name, d.ETag, d.Size = n.Name, `"`+n.ETag+`"`, n.Size
	if !n.ModTime.IsZero() {
		t := n.ModTime.UTC()
		d.LastModifiedDateTime = &t
	}
	if n.IsFolder() {
		d.Folder = &struct{}{}
	} else {
		d.File = &fileFacet{MimeType: n.ContentType}
	}
}

// sharedItemOf is the item of live shares: the space, the node and the
// shares (one item may be shared with a user and their groups, or by
// several links).
type sharedItemOf struct {
	space  storage.Space
	node   storage.Node
	shares []storage.Share
}

// liveItems groups the live shares among shares by item, in the order of
// each item's first share; shares of items that are gone, or of spaces
// this handler does not serve, are left out.
func (h *Handler) liveItems(ctx context.Context, shares []storage.Share, keep func(storage.Share) bool) ([]*sharedItemOf, error) {
	var items []*sharedItemOf
	byItem := map[[2]string]*sharedItemOf{}
	judge := h.newJudge()
	for _, s := range shares {
		if !keep(s) {
			continue
		}
		key := [2]string{s.SpaceID, s.NodeID}
		if it, ok := byItem[key]; ok {
			it.shares = append(it.shares, s)
			continue
		}
		live, err := judge.Live(ctx, s)
		if err != nil {
			return nil, err
		}
		if !live {
			continue
		}
		it, ok, err := h.sharedNode(ctx, judge, s)
		if err != nil {
			return nil, err
		}
		if ok {
			byItem[key] = it
			items = append(items, it)
		}
	}
	// Later shares of an item were grouped unjudged: keep the live ones.
	for _, it := range items {
		kept := it.shares[:0]
		for i, s := range it.shares {
			live := i == 0
			if !live {
				var err error
				if live, err = judge.Live(ctx, s); err != nil {
					return nil, err
				}
			}
			if live {
				kept = append(kept, s)
			}
		}
		it.shares = kept
	}
	return items, nil
}

// sharedNode finds the item of live share s in a space this handler
// serves; the judge has read the space already.
func (h *Handler) sharedNode(ctx context.Context, judge *storage.ShareJudge, s storage.Share) (*sharedItemOf, bool, error) {
	space, err := judge.Space(ctx, s.SpaceID)
	if err != nil {
		return nil, false, fmt.Errorf("space of share %s: %w", s.ID, err)
	}
	if !h.spaces.Serves(space) {
		return nil, false, nil
	}
	n, err := h.store.Node(ctx, s.SpaceID, s.NodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("item of share %s: %w", s.ID, err)
	}
	return &sharedItemOf{space: space, node: n, shares: []storage.Share{s}}, true, nil
}

// mount is a received item as the Shares drive shows it: its id (of the
// item's first share), its name there, and the item.
type mount struct {
	id, name string
	item     *sharedItemOf
}

// received lists the items shared with u as storage.ReceivedItems does
// for every protocol: the list davhandler's Shares drive shows, in the
// same order and with the same names and mount ids.
func (h *Handler) received(ctx context.Context, u storage.User) ([]mount, error) {
	items, err := storage.ReceivedItems(ctx, receivedReader{h.store, h.shares}, h.newJudge(), u, h.spaces.Serves, nil)
	if err != nil {
		return nil, err
	}
	mounts := make([]mount, len(items))
	for i, it := range items {
		item := &sharedItemOf{space: it.Space, node: it.Item, shares: it.Shares}
		mounts[i] = mount{id: shareid.Mount(it.Shares[0].ID), name: it.Name, item: item}
	}
	return mounts, nil
}

// receivedReader reads nodes from the store and shares from the shares.
type receivedReader struct {
	storage.Store
	storage.Shares
}

// remoteItem describes a shared item as it is in its own space.
func (h *Handler) remoteItem(it *sharedItemOf, base string, names displayNames) *driveItem {
	storageID := h.store.StorageID()
	driveID := formatDriveID(storageID, it.space.ID)
	r := &driveItem{
		ID:              formatItemID(storageID, it.space.ID, it.node.ID),
		ParentReference: &itemReference{DriveID: driveID, DriveType: string(it.space.Type)},
		CreatedBy:       &identitySetUser{User: identitySet{ID: it.shares[0].Creator, DisplayName: names.of(it.shares[0].Creator)}},
		Permissions:     make([]sharePermission, 0, len(it.shares)),
	}
	itemFacts(r, it.node)
	for _, s := range it.shares {
		r.Permissions = append(r.Permissions, permissionOf(s, it.node, base, names))
	}
	return r
}

// sharedWithMe answers the items shared with the user: each as its mount
// point in the Shares drive, with the item itself as remoteItem.
func (h *Handler) sharedWithMe(w http.ResponseWriter, r *http.Request, u storage.User) error {
	ctx := r.Context()
	mounts, err := h.received(ctx, u)
	if err != nil {
		return err
	}
	base, names := origin.Of(r), h.names(ctx)
	value := make([]driveItem, 0, len(mounts))
	for _, m := range mounts {
		value = append(value, h.mountItem(m, base, names))
	}
	h.writeJSON(w, r, http.StatusOK, struct {
		Value []driveItem `json:"value"`
	}{value})
	return nil
}

// mountItem is mount point m as a drive item of the Shares drive, with
// the item itself as remoteItem.
func (h *Handler) mountItem(m mount, base string, names displayNames) driveItem {
	visible, accepted := false, true
	d := driveItem{
		ID:              m.id,
		ParentReference: &itemReference{DriveID: shareid.DriveID, DriveType: "virtual", ID: shareid.RootID},
		RemoteItem:      h.remoteItem(m.item, base, names),
		Hidden:          &visible,
		Synchronize:     &accepted,
	}
	itemFacts(&d, m.item.node)
	d.Name = m.name
	d.CreatedBy = d.RemoteItem.CreatedBy
	return d
}

// sharedByMe answers the items the user shared or made links of, each
// with its live permissions.
func (h *Handler) sharedByMe(w http.ResponseWriter, r *http.Request, u storage.User) error {
	ctx := r.Context()
	shares, err := h.shares.SharesBy(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("shares by %s: %w", u.ID, err)
	}
	items, err := h.liveItems(ctx, shares, func(s storage.Share) bool { return u.Scope.ReachesSpace(s.SpaceID) })
	if err != nil {
		return err
	}
	base, names := origin.Of(r), h.names(ctx)
	value := make([]driveItem, 0, len(items))
	for _, it := range items {
		if reached, err := u.Scope.ReachesNode(ctx, h.store, it.node); err != nil || !reached {
			if err != nil {
				return err
			}
			continue
		}
		d := h.remoteItem(it, base, names)
		parent, err := h.parentPath(ctx, it.node)
		if err != nil {
			return err
		}
		d.ParentReference.ID = formatItemID(h.store.StorageID(), it.space.ID, it.node.ParentID)
		d.ParentReference.Path = parent
		value = append(value, *d)
	}
	h.writeJSON(w, r, http.StatusOK, struct {
		Value []driveItem `json:"value"`
	}{value})
	return nil
}

// parentPath is the path of n's parent in its space: "." for the root,
// "./a/b" below it.
func (h *Handler) parentPath(ctx context.Context, n storage.Node) (string, error) {
	if n.ParentID == "" {
		return ".", nil
	}
	parent, err := h.store.Node(ctx, n.SpaceID, n.ParentID)
	if err != nil {
		return "", fmt.Errorf("parent of %s: %w", n.ID, err)
	}
	names, err := storage.NodeNames(ctx, h.store, parent, "")
	if err != nil || len(names) == 0 {
		return ".", err
	}
	return "./" + strings.Join(names, "/"), nil
}

// sharesDrive is the user's Shares drive, oCIS' virtual drive of the
// share jail.
func (h *Handler) sharesDrive(base string) drive {
	return drive{
		ID:         shareid.DriveID,
		DriveType:  "virtual",
		DriveAlias: "virtual/shares",
		Name:       "Shares",
		WebURL:     privateLink(base, shareid.DriveID),
		Quota:      quotaOf(storage.NoQuota, storage.Usage{}),
		Root: driveRoot{
			ID:          shareid.DriveID,
			WebDavURL:   base + "/dav/spaces/" + shareid.DriveID,
			Permissions: []permission{},
		},
	}
}

// privateLink is the address of the browser's view of id.
func privateLink(base, id string) string {
	link := url.URL{Path: "/f/" + id}
	return base + link.EscapedPath()
}

// mountDrives are the mount points of the items shared with u, as drives.
func (h *Handler) mountDrives(ctx context.Context, base string, u storage.User) ([]drive, error) {
	mounts, err := h.received(ctx, u)
	if err != nil {
		return nil, err
	}
	names := h.names(ctx)
	drives := make([]drive, 0, len(mounts))
	usages := map[string]storage.Usage{}
	for _, m := range mounts {
		usage, ok := usages[m.item.space.ID]
		if !ok {
			if usage, err = h.store.Usage(ctx, m.item.space.ID); err != nil {
				return nil, fmt.Errorf("usage of space %s: %w", m.item.space.ID, err)
			}
			usages[m.item.space.ID] = usage
		}
		remote := h.remoteItem(m.item, base, names)
		remote.WebDavURL = base + "/dav/spaces/" + m.id
		remote.RootID = formatItemID(h.store.StorageID(), m.item.space.ID, m.item.space.ID)
		remote.DriveAlias = driveAlias(m.item.space)
		d := drive{
			ID:         m.id,
			DriveType:  "mountpoint",
			DriveAlias: "mountpoint/" + slug(m.name),
			Name:       m.name,
			WebURL:     privateLink(base, m.id),
			// Writes through a share count against the owner's space.
			Quota: quotaOf(m.item.space.Quota, usage),
			Root: driveRoot{
				ID:          m.id,
				WebDavURL:   base + "/dav/spaces/" + m.id,
				ETag:        remote.ETag,
				Permissions: []permission{},
				RemoteItem:  remote,
			},
			LastModifiedDateTime: remote.LastModifiedDateTime,
		}
		drives = append(drives, d)
	}
	return drives, nil
}
