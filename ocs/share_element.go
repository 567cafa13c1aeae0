package ocs

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"

	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// shareElement is one share as ownCloud's sharing API answers it, with
// the fields the apps read (owncloud/android ShareItem, owncloud/ios-sdk
// OCShare+OCXMLObjectCreation). Ids are this server's: share ids are
// strings, item_source and file_source resource ids, storage_id the
// item's space id (<storage>$<space>).
type shareElement struct {
	ID                   string  `json:"id" xml:"id"`
	ShareType            int     `json:"share_type" xml:"share_type"`
	UIDOwner             string  `json:"uid_owner" xml:"uid_owner"`
	DisplaynameOwner     string  `json:"displayname_owner" xml:"displayname_owner"`
	Permissions          int     `json:"permissions" xml:"permissions"`
	STime                int64   `json:"stime" xml:"stime"`
	Parent               *string `json:"parent" xml:"parent"`
	Expiration           *string `json:"expiration" xml:"expiration"`
	Token                string  `json:"token" xml:"token"`
	UIDFileOwner         string  `json:"uid_file_owner" xml:"uid_file_owner"`
	DisplaynameFileOwner string  `json:"displayname_file_owner" xml:"displayname_file_owner"`
	// State is 0, accepted: every share is accepted at once.
	State     int    `json:"state" xml:"state"`
	Path      string `json:"path" xml:"path"`
	ItemType  string `json:"item_type" xml:"item_type"`
	MimeType  string `json:"mimetype" xml:"mimetype"`
	StorageID string `json:"storage_id" xml:"storage_id"`
	Storage   int    `json:"storage" xml:"storage"`
	// SpaceID is the item's space (oCIS' space_id), beside storage_id.
	SpaceID     string `json:"space_id" xml:"space_id"`
	ItemSource  string `json:"item_source" xml:"item_source"`
	FileSource  string `json:"file_source" xml:"file_source"`
	FileParent  string `json:"file_parent" xml:"file_parent"`
	FileTarget  string `json:"file_target" xml:"file_target"`
	ShareWith   string `json:"share_with" xml:"share_with"`
	ShareWithDN string `json:"share_with_displayname" xml:"share_with_displayname"`
	// ShareWithInfo is the recipient's email, when known.
	ShareWithInfo string `json:"share_with_additional_info" xml:"share_with_additional_info"`
	Name          string `json:"name" xml:"name"`
	URL           string `json:"url,omitempty" xml:"url,omitempty"`
	MailSend      int    `json:"mail_send" xml:"mail_send"`
}

// redactedPassword stands in share_with for a link's password, as
// ownCloud answers: the apps take a non-empty share_with of a link to
// mean that it has a password.
const redactedPassword = "***redacted***"

// elements is a list in the envelope: a JSON array (never null), and in
// XML one <element> each, as ownCloud writes lists.
type elements[T any] []T

func (l elements[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]T(l))
}

func (l elements[T]) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, x := range l {
		if err := e.EncodeElement(x, xml.StartElement{Name: xml.Name{Local: "element"}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// renderer turns shares into elements for one request, remembering the
// people and spaces it looked up.
type renderer struct {
	s      *sharing
	caller storage.User
	base   string // scheme and host the client reached, for link URLs
	people map[string]storage.DirectoryEntry
	spaces map[string]storage.Space
}

func (s *sharing) renderer(caller storage.User, base string) *renderer {
	return &renderer{s: s, caller: caller, base: base,
		people: map[string]storage.DirectoryEntry{}, spaces: map[string]storage.Space{}}
}

// person is what the directory knows of user id: at least the id, and the
// caller's own name from the request.
func (rd *renderer) person(ctx context.Context, id string) storage.DirectoryEntry {
	if e, ok := rd.people[id]; ok {
		return e
	}
	e := storage.DirectoryEntry{ID: id}
	if kept, err := rd.s.store.DirectoryUser(ctx, id); err == nil {
		e = kept
	}
	if id == rd.caller.ID && rd.caller.DisplayName != "" {
		e.DisplayName = rd.caller.DisplayName
	}
	if e.DisplayName == "" {
		e.DisplayName = id
	}
	rd.people[id] = e
	return e
}

func (rd *renderer) space(ctx context.Context, id string) (storage.Space, error) {
	if sp, ok := rd.spaces[id]; ok {
		return sp, nil
	}
	sp, err := rd.s.store.Space(ctx, id)
	if err != nil {
		return storage.Space{}, err
	}
	rd.spaces[id] = sp
	return sp, nil
}

// element renders sh on its item node. received renders it for a
// recipient: the item where their Shares drive mounts it. A link is
// rendered without its token and address for a caller who may not manage
// it (storage.Share.SeenBy).
func (rd *renderer) element(ctx context.Context, sh storage.Share, node storage.Node, received bool) (shareElement, error) {
	space, err := rd.space(ctx, sh.SpaceID)
	if err != nil {
		return shareElement{}, err
	}
	sh = sh.SeenBy(rd.caller, space.RoleOf(rd.caller))
	spaceRef := resourceid.Space(rd.s.store.StorageID(), space.ID)
	itemID := spaceRef.At(node.ID).String()
	creator := rd.person(ctx, sh.Creator)
	fileOwner := creator
	if space.Type == storage.SpacePersonal {
		fileOwner = rd.person(ctx, space.Owner)
	}
	e := shareElement{
		ID:                   sh.ID,
		ShareType:            int(sh.Kind),
		UIDOwner:             creator.ID,
		DisplaynameOwner:     creator.DisplayName,
		Permissions:          permissionsOf(sh.Role, node.IsFolder()),
		STime:                sh.Created.Unix(),
		Expiration:           expiryText(sh.Expires),
		Token:                sh.Token,
		UIDFileOwner:         fileOwner.ID,
		DisplaynameFileOwner: fileOwner.DisplayName,
		ItemType:             "file",
		MimeType:             node.ContentType,
		StorageID:            spaceRef.String(),
		SpaceID:              spaceRef.String(),
		ItemSource:           itemID,
		FileSource:           itemID,
		Name:                 sh.DisplayName,
	}
	if node.ParentID != "" {
		e.FileParent = spaceRef.At(node.ParentID).String()
	}
	if node.IsFolder() {
		e.ItemType, e.MimeType = "folder", "httpd/unix-directory"
	} else if e.MimeType == "" {
		e.MimeType = "application/octet-stream"
	}
	if received {
		e.Path = "/Shares/" + node.Name
	} else if e.Path, err = rd.s.pathOf(ctx, node); err != nil {
		return shareElement{}, err
	}
	e.FileTarget = e.Path
	switch sh.Kind {
	case storage.ShareWithUser:
		grantee := rd.person(ctx, sh.Grantee)
		e.ShareWith, e.ShareWithDN, e.ShareWithInfo = grantee.ID, grantee.DisplayName, grantee.Email
	case storage.ShareWithGroup:
		e.ShareWith, e.ShareWithDN = sh.Grantee, sh.Grantee
	case storage.ShareLink:
		if sh.Token != "" {
			// Left out for who may not read it (storage.Share.SeenBy).
			e.URL = rd.base + "/s/" + sh.Token
		}
		if sh.PasswordHash != nil {
			e.ShareWith, e.ShareWithDN = redactedPassword, redactedPassword
		}
	}
	return e, nil
}

// elements renders the shares that still give access (storage.LiveShare)
// and whose item is still there; the others are left out, as absent.
func (rd *renderer) elements(ctx context.Context, shares []storage.Share, received bool) (elements[shareElement], error) {
	out := make(elements[shareElement], 0, len(shares))
	for _, sh := range shares {
		e, ok, err := rd.liveElement(ctx, sh, received)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// liveElement renders sh if it is live, its space served and its item
// there; ok is false otherwise.
func (rd *renderer) liveElement(ctx context.Context, sh storage.Share, received bool) (shareElement, bool, error) {
	live, err := storage.LiveShare(ctx, rd.s.store, sh, rd.s.now())
	if err != nil || !live {
		return shareElement{}, false, err
	}
	space, err := rd.space(ctx, sh.SpaceID)
	if errors.Is(err, storage.ErrNotFound) {
		return shareElement{}, false, nil
	}
	if err != nil {
		return shareElement{}, false, err
	}
	if !rd.s.spaces.Serves(space) {
		return shareElement{}, false, nil
	}
	node, err := rd.s.store.Node(ctx, sh.SpaceID, sh.NodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return shareElement{}, false, nil
	}
	if err != nil {
		return shareElement{}, false, fmt.Errorf("the item of share %s: %w", sh.ID, err)
	}
	if reached, err := rd.caller.Scope.ReachesNode(ctx, rd.s.store, node); err != nil || !reached {
		return shareElement{}, false, err
	}
	e, err := rd.element(ctx, sh, node, received)
	if errors.Is(err, storage.ErrNotFound) {
		// Moved away or deleted while its path was read.
		return shareElement{}, false, nil
	}
	return e, err == nil, err
}
