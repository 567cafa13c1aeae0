package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// sharePermission is a libre-graph permission on an item: a share with a
// user or group (grantedToV2, roles, invitation) or a link (link,
// hasPassword). Its id is the share's id.
type sharePermission struct {
	ID                 string              `json:"id"`
	Roles              []string            `json:"roles,omitempty"`
	GrantedToV2        *sharePointIdentity `json:"grantedToV2,omitempty"`
	Invitation         *sharingInvitation  `json:"invitation,omitempty"`
	Link               *sharingLink        `json:"link,omitempty"`
	HasPassword        *bool               `json:"hasPassword,omitempty"`
	ExpirationDateTime *time.Time          `json:"expirationDateTime,omitempty"`
	CreatedDateTime    time.Time           `json:"createdDateTime"`
}

// sharingInvitation names who shared (made the link); ownCloud Web shows
// it as "shared by".
type sharingInvitation struct {
	InvitedBy sharePointIdentity `json:"invitedBy"`
}

// sharingLink is a link's part of a permission.
type sharingLink struct {
	Type             string `json:"type"`
	WebURL           string `json:"webUrl,omitempty"`
	DisplayName      string `json:"@libre.graph.displayName"`
	QuickLink        bool   `json:"@libre.graph.quickLink"`
	PreventsDownload bool   `json:"preventsDownload"`
}

// The link types, as libre-graph names them.
const (
	linkView       = "view"
	linkUpload     = "upload"
	linkEdit       = "edit"
	linkCreateOnly = "createOnly"
)

// linkTypes maps the link types davspaces serves to share roles; libre-
// graph's "internal" and "blocksDownload" are not among them.
var linkTypes = map[string]storage.ShareRole{
	linkView:       storage.ShareViewer,
	linkUpload:     storage.ShareUploader,
	linkEdit:       storage.ShareEditor,
	linkCreateOnly: storage.ShareFileDrop,
}

// linkType is the type of a link with role r.
func linkType(r storage.ShareRole) string {
	for t, role := range linkTypes {
		if role == r {
			return t
		}
	}
	return ""
}

// shareRoleOf maps a unified role id to the share role it gives on item
// n; ok is false for a role that cannot be given by a share (a space's
// roles) or that does not apply to n (an editor of folders on a file).
func shareRoleOf(roleID string, n storage.Node) (storage.ShareRole, bool) {
	folder := n.IsFolder()
	switch roleID {
	case RoleViewerID:
		return storage.ShareViewer, true
	case RoleEditorID:
		return storage.ShareEditor, folder
	case RoleFileEditorID:
		return storage.ShareEditor, !folder
	case RoleUploaderID:
		return storage.ShareUploader, folder
	}
	return 0, false
}

// unifiedRoleID is the unified role of a share with role r on item n.
func unifiedRoleID(r storage.ShareRole, n storage.Node) string {
	switch r {
	case storage.ShareEditor:
		if n.IsFolder() {
			return RoleEditorID
		}
		return RoleFileEditorID
	case storage.ShareUploader:
		return RoleUploaderID
	default:
		return RoleViewerID
	}
}

// userIdentity names a user as a permission does.
func userIdentity(id, displayName string) *sharePointIdentity {
	return &sharePointIdentity{User: &identitySet{ID: id, DisplayName: displayName}}
}

// groupIdentity names a group; its id is its name, as in space members.
func groupIdentity(name string) *sharePointIdentity {
	return &sharePointIdentity{Group: &identitySet{ID: name, DisplayName: name}}
}

// permissionOf describes share s of item n; names gives users' display
// names; base is the server's address, for a link's webUrl.
func permissionOf(s storage.Share, n storage.Node, base string, names displayNames) sharePermission {
	p := sharePermission{ID: s.ID, CreatedDateTime: s.Created.UTC(),
		Invitation: &sharingInvitation{InvitedBy: *userIdentity(s.Creator, names.of(s.Creator))}}
	if !s.Expires.IsZero() {
		t := s.Expires.UTC()
		p.ExpirationDateTime = &t
	}
	switch s.Kind {
	case storage.ShareLink:
		hasPassword := s.PasswordHash != nil
		p.HasPassword = &hasPassword
		p.Link = &sharingLink{Type: linkType(s.Role), DisplayName: s.DisplayName}
		if s.Token != "" {
			// Left out for who may not read it (storage.Share.SeenBy).
			p.Link.WebURL = LinkURL(base, s.Token)
		}
	case storage.ShareWithGroup:
		p.GrantedToV2 = groupIdentity(s.Grantee)
		p.Roles = []string{unifiedRoleID(s.Role, n)}
	default:
		p.GrantedToV2 = userIdentity(s.Grantee, names.of(s.Grantee))
		p.Roles = []string{unifiedRoleID(s.Role, n)}
	}
	return p
}

// LinkURL is the address of the public page of a link: base (scheme and
// host) and /s/{token}, as link.webUrl and OCS' url give it.
func LinkURL(base, token string) string {
	return base + "/s/" + token
}

// maxBodyBytes bounds a sharing request's JSON body.
const maxBodyBytes = 64 << 10

// decodeBody reads a JSON body of at most maxBodyBytes into v; anything
// malformed is a 400. Unknown members are ignored: clients send fields of
// newer libre-graph versions.
func decodeBody(r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		return invalidRequest(fmt.Sprintf("the request body cannot be read (at most %d bytes)", maxBodyBytes))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return invalidRequest("a JSON body is required")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return invalidRequest("the request body is not valid JSON for this request")
	}
	return nil
}

// optionalTime is a JSON date-time member that may be absent (set false),
// null (set, no time: remove it) or a time.
type optionalTime struct {
	set  bool
	time *time.Time
}

func (o *optionalTime) UnmarshalJSON(data []byte) error {
	o.set = true
	if string(data) == "null" || string(data) == `""` {
		o.time = nil
		return nil
	}
	var t time.Time
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	o.time = &t
	return nil
}

// expiry is the share expiry the member asks for: zero for none.
func (o optionalTime) expiry() time.Time {
	if o.time == nil {
		return time.Time{}
	}
	return o.time.UTC()
}
