package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
)

// createLinkBody is libre-graph's driveItemCreateLink.
type createLinkBody struct {
	Type               string       `json:"type"`
	Password           string       `json:"password"`
	ExpirationDateTime optionalTime `json:"expirationDateTime"`
	DisplayName        string       `json:"displayName"`
}

// createLink makes a public link of the item: 200 and its permission.
func (h *Handler) createLink(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	it, err := h.shareableItem(r.Context(), u, ip.driveID, ip.itemID)
	if err != nil {
		return err
	}
	var body createLinkBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	role, ok := linkTypes[body.Type]
	if !ok {
		return invalidRequest("invalid link type: view, upload, edit or createOnly")
	}
	hash, err := storage.HashLinkPassword(body.Password)
	if err != nil {
		return shareRefusal(err)
	}
	s, err := h.shares.CreateShare(r.Context(), storage.Share{
		Kind: storage.ShareLink, SpaceID: it.space.ID, NodeID: it.node.ID, Creator: u.ID, Role: role,
		PasswordHash: hash, DisplayName: body.DisplayName, Expires: body.ExpirationDateTime.expiry(),
	})
	if err != nil {
		return shareRefusal(err)
	}
	h.writeJSON(w, r, http.StatusOK, permissionOf(s, it.node, origin.Of(r), h.names(r.Context())))
	return nil
}

// inviteBody is libre-graph's driveItemInvite.
type inviteBody struct {
	Recipients []struct {
		ObjectID string `json:"objectId"`
		Type     string `json:"@libre.graph.recipient.type"`
	} `json:"recipients"`
	Roles              []string     `json:"roles"`
	Actions            []string     `json:"@libre.graph.permissions.actions"`
	ExpirationDateTime optionalTime `json:"expirationDateTime"`
}

// maxRecipients bounds the recipients of one invitation.
const maxRecipients = 50

// invite shares the item with users and groups: 200 and
// {"value":[permission…]}, one per recipient, as oCIS answers. Every
// recipient is checked before any share is made.
func (h *Handler) invite(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	ctx := r.Context()
	it, err := h.shareableItem(ctx, u, ip.driveID, ip.itemID)
	if err != nil {
		return err
	}
	var body inviteBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if len(body.Actions) > 0 || len(body.Roles) != 1 {
		return invalidRequest("an invitation names exactly one role and no custom actions")
	}
	role, ok := shareRoleOf(body.Roles[0], it.node)
	if !ok {
		return invalidRequest("role not applicable to this resource")
	}
	if len(body.Recipients) == 0 || len(body.Recipients) > maxRecipients {
		return invalidRequest(fmt.Sprintf("an invitation has 1 to %d recipients", maxRecipients))
	}
	shares := make([]storage.Share, 0, len(body.Recipients))
	for _, rc := range body.Recipients {
		s := storage.Share{SpaceID: it.space.ID, NodeID: it.node.ID, Creator: u.ID, Role: role,
			Grantee: rc.ObjectID, Expires: body.ExpirationDateTime.expiry()}
		switch rc.Type {
		case "", "user":
			s.Kind = storage.ShareWithUser
		case "group":
			s.Kind = storage.ShareWithGroup
		default:
			return invalidRequest("a recipient is a user or a group")
		}
		if err := h.checkRecipient(ctx, s); err != nil {
			return err
		}
		shares = append(shares, s)
	}
	made, err := h.createAll(ctx, shares)
	if err != nil {
		return err
	}
	base, names := origin.Of(r), h.names(ctx)
	perms := make([]sharePermission, 0, len(made))
	for _, s := range made {
		perms = append(perms, permissionOf(s, it.node, base, names))
	}
	h.writeJSON(w, r, http.StatusOK, struct {
		Value []sharePermission `json:"value"`
	}{perms})
	return nil
}

// createAll makes shares; when one is refused, those made before it are
// deleted again, so that a refused invitation changes nothing.
func (h *Handler) createAll(ctx context.Context, shares []storage.Share) ([]storage.Share, error) {
	made := make([]storage.Share, 0, len(shares))
	for _, s := range shares {
		m, err := h.shares.CreateShare(ctx, s)
		if err != nil {
			for _, undo := range made {
				if derr := h.shares.DeleteShare(context.WithoutCancel(ctx), undo.ID); derr != nil {
					return nil, errors.Join(shareRefusal(err), fmt.Errorf("undoing share %s: %w", undo.ID, derr))
				}
			}
			return nil, shareRefusal(err)
		}
		made = append(made, m)
	}
	return made, nil
}

// checkRecipient refuses a share with someone the server does not know:
// a user or group is known from the directory of those who signed in,
// or from the members the configuration names.
func (h *Handler) checkRecipient(ctx context.Context, s storage.Share) error {
	if s.Kind == storage.ShareWithUser && s.Grantee == s.Creator {
		return invalidRequest("you cannot share with yourself")
	}
	var known bool
	var err error
	if s.Kind == storage.ShareWithGroup {
		known, err = h.knownGroup(ctx, s.Grantee)
	} else {
		known, err = h.knownUser(ctx, s.Grantee)
	}
	if err != nil {
		return err
	}
	if !known {
		return invalidRequest("the recipient is not known to this server")
	}
	return nil
}

// permissionsBody is libre-graph's collectionOfPermissionsWithAllowedValues.
type permissionsBody struct {
	ActionsAllowed []string          `json:"@libre.graph.permissions.actions.allowedValues"`
	RolesAllowed   []roleSummary     `json:"@libre.graph.permissions.roles.allowedValues"`
	Value          []sharePermission `json:"value"`
}

// roleSummary is a role definition without its permissions, as the
// allowed values list it.
type roleSummary struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	Weight      int    `json:"@libre.graph.weight"`
}

// sharerActions are the actions on an item's permissions someone who may
// share it has; ownCloud Web offers invitations and links when
// permissions/create is among them.
var sharerActions = []string{actionPermissionsCreate, actionPermissionsRead,
	actionPermissionsUpdate, actionPermissionsDelete}

// listPermissions answers the live shares and links of the item, with the
// actions and roles the caller may use on it. Someone who sees the item
// but may not share it (a viewer, a recipient) gets an empty list with no
// actions and no roles: ownCloud Web lists an item's permissions whenever
// its sidebar opens, and a link's address would give more than viewing.
// An editor sees the links of others without their address
// (storage.Share.SeenBy).
func (h *Handler) listPermissions(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	ctx := r.Context()
	it, err := h.shareableItem(ctx, u, ip.driveID, ip.itemID)
	if errors.Is(err, errMayNotShare) {
		h.writeJSON(w, r, http.StatusOK, permissionsBody{ActionsAllowed: []string{}, RolesAllowed: []roleSummary{}, Value: []sharePermission{}})
		return nil
	}
	if err != nil {
		return err
	}
	shares, err := h.shares.ItemShares(ctx, it.space.ID, it.node.ID)
	if err != nil {
		return fmt.Errorf("shares of %s: %w", it.node.ID, err)
	}
	body := permissionsBody{ActionsAllowed: sharerActions, RolesAllowed: rolesFor(it.node), Value: []sharePermission{}}
	base, names, judge := origin.Of(r), h.names(ctx), h.newJudge()
	for _, s := range shares {
		live, err := judge.Live(ctx, s)
		if err != nil {
			return err
		}
		if live {
			body.Value = append(body.Value, permissionOf(s.SeenBy(u, it.role), it.node, base, names))
		}
	}
	h.writeJSON(w, r, http.StatusOK, body)
	return nil
}

// rolesFor lists the roles a share of n may give, fewest rights first.
func rolesFor(n storage.Node) []roleSummary {
	var out []roleSummary
	for _, d := range roleDefinitions {
		if _, ok := shareRoleOf(d.ID, n); ok {
			out = append(out, roleSummary{ID: d.ID, DisplayName: d.DisplayName, Description: d.Description, Weight: d.Weight})
		}
	}
	return out
}

// listRootPermissions answers the members of a space as the permissions
// of its root, to every member (ownCloud Web lists a space's members
// this way when the space itself is selected); they are read only, as
// the configuration gives them, and links and invitations of a root do
// not exist (errRootShare).
func (h *Handler) listRootPermissions(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	spaceID, ok := parseDriveID(h.store.StorageID(), ip.driveID)
	if !ok {
		return errNotFound
	}
	space, err := h.servedSpace(r.Context(), spaceID)
	if err != nil {
		return err
	}
	if h.spaces.Visible(u, space) != nil || !u.Scope.Reaches(space.ID, nil) {
		return errNotFound
	}
	h.writeJSON(w, r, http.StatusOK, struct {
		ActionsAllowed []string      `json:"@libre.graph.permissions.actions.allowedValues"`
		RolesAllowed   []roleSummary `json:"@libre.graph.permissions.roles.allowedValues"`
		Value          []permission  `json:"value"`
	}{[]string{actionPermissionsRead}, []roleSummary{}, memberPermissions(space)})
	return nil
}

// managedShare returns the live share id of the item for u to change:
// its creator or a manager of the space (storage.MayManageShare). Another
// member who may share sees the share listed, so their refusal is 403.
func (h *Handler) managedShare(ctx context.Context, u storage.User, it sharedItem, id string) (storage.Share, error) {
	s, err := h.itemShare(ctx, it, id)
	if err != nil {
		return storage.Share{}, err
	}
	if h.spaces.MayManageShare(u, it.space, s) != nil {
		return storage.Share{}, errMayNotManage
	}
	return s, nil
}

// itemShare returns the live share id of the item; anything else (another
// item's share, a dead one, none) is errNotFound.
func (h *Handler) itemShare(ctx context.Context, it sharedItem, id string) (storage.Share, error) {
	s, err := h.itemShareAnyState(ctx, it, id)
	if err != nil {
		return storage.Share{}, err
	}
	live, err := h.newJudge().Live(ctx, s)
	if err != nil {
		return storage.Share{}, err
	}
	if !live {
		return storage.Share{}, errNotFound
	}
	return s, nil
}

// itemShareAnyState returns the share id of the item, live or not;
// another item's share or none is errNotFound.
func (h *Handler) itemShareAnyState(ctx context.Context, it sharedItem, id string) (storage.Share, error) {
	s, err := h.shares.Share(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Share{}, errNotFound
	}
	if err != nil {
		return storage.Share{}, fmt.Errorf("share %s: %w", id, err)
	}
	if s.SpaceID != it.space.ID || s.NodeID != it.node.ID {
		return storage.Share{}, errNotFound
	}
	return s, nil
}

// managedItemShare is the item ip names and its live share that u may
// change (managedShare).
func (h *Handler) managedItemShare(ctx context.Context, u storage.User, ip itemPath) (sharedItem, storage.Share, error) {
	it, err := h.shareableItem(ctx, u, ip.driveID, ip.itemID)
	if err != nil {
		return sharedItem{}, storage.Share{}, err
	}
	s, err := h.managedShare(ctx, u, it, ip.permissionID)
	if err != nil {
		return sharedItem{}, storage.Share{}, err
	}
	return it, s, nil
}

// getPermission answers one share or link of the item.
func (h *Handler) getPermission(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	it, err := h.shareableItem(r.Context(), u, ip.driveID, ip.itemID)
	if err != nil {
		return err
	}
	s, err := h.itemShare(r.Context(), it, ip.permissionID)
	if err != nil {
		return err
	}
	h.writeJSON(w, r, http.StatusOK, permissionOf(s.SeenBy(u, it.role), it.node, origin.Of(r), h.names(r.Context())))
	return nil
}

// updateBody is the part of a libre-graph permission a PATCH changes.
type updateBody struct {
	Roles              []string     `json:"roles"`
	ExpirationDateTime optionalTime `json:"expirationDateTime"`
	Link               *struct {
		Type        *string `json:"type"`
		DisplayName *string `json:"@libre.graph.displayName"`
	} `json:"link"`
}

// updatePermission changes a share's role or expiry, or a link's type,
// name or expiry: 200 and the permission as it is now.
func (h *Handler) updatePermission(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	ctx := r.Context()
	it, old, err := h.managedItemShare(ctx, u, ip)
	if err != nil {
		return err
	}
	var body updateBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	update, err := applyUpdate(old, body, it.node)
	if err != nil {
		return err
	}
	return h.writeUpdatedShare(w, r, it, update)
}

// applyUpdate is old with what body changes; a link's role comes from a
// link type, a share's from a unified role.
func applyUpdate(old storage.Share, body updateBody, n storage.Node) (storage.Share, error) {
	update := old
	if body.ExpirationDateTime.set {
		update.Expires = body.ExpirationDateTime.expiry()
	}
	if old.Kind == storage.ShareLink {
		if len(body.Roles) > 0 {
			return storage.Share{}, invalidRequest("a link's rights are set by its type")
		}
		if body.Link != nil && body.Link.Type != nil {
			role, ok := linkTypes[*body.Link.Type]
			if !ok {
				return storage.Share{}, invalidRequest("invalid link type: view, upload, edit or createOnly")
			}
			update.Role = role
		}
		if body.Link != nil && body.Link.DisplayName != nil {
			update.DisplayName = *body.Link.DisplayName
		}
		return update, nil
	}
	if body.Link != nil {
		return storage.Share{}, invalidRequest("only a link has a link type or name")
	}
	switch len(body.Roles) {
	case 0:
	case 1:
		role, ok := shareRoleOf(body.Roles[0], n)
		if !ok {
			return storage.Share{}, invalidRequest("role not applicable to this resource")
		}
		update.Role = role
	default:
		return storage.Share{}, invalidRequest("a share has one role")
	}
	return update, nil
}

// deletePermission deletes a share or link of the item: 204, for its
// creator or a manager of the space (storage.MayManageShare). A share that
// gives no access now (its creator may no longer share) can be deleted
// too, so that it does not revive.
func (h *Handler) deletePermission(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	ctx := r.Context()
	it, err := h.shareableItem(ctx, u, ip.driveID, ip.itemID)
	if err != nil {
		return err
	}
	s, err := h.itemShareAnyState(ctx, it, ip.permissionID)
	if err != nil {
		return err
	}
	if h.spaces.MayManageShare(u, it.space, s) != nil {
		return errMayNotManage
	}
	if err := h.shares.DeleteShare(ctx, s.ID); err != nil {
		return shareRefusal(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// setLinkPassword sets or, with an empty one, removes a link's password:
// 200 and the link's permission.
func (h *Handler) setLinkPassword(w http.ResponseWriter, r *http.Request, u storage.User, ip itemPath) error {
	ctx := r.Context()
	it, old, err := h.managedItemShare(ctx, u, ip)
	if err != nil {
		return err
	}
	if old.Kind != storage.ShareLink {
		return invalidRequest("only a link has a password")
	}
	var body struct {
		Password string `json:"password"`
	}
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	hash, err := storage.HashLinkPassword(body.Password)
	if err != nil {
		return shareRefusal(err)
	}
	update := old
	update.PasswordHash = hash
	return h.writeUpdatedShare(w, r, it, update)
}

// writeUpdatedShare stores update and answers 200 with the permission
// as it is now.
func (h *Handler) writeUpdatedShare(w http.ResponseWriter, r *http.Request, it sharedItem, update storage.Share) error {
	ctx := r.Context()
	s, err := h.shares.UpdateShare(ctx, update.ID, update)
	if err != nil {
		return shareRefusal(err)
	}
	h.writeJSON(w, r, http.StatusOK, permissionOf(s, it.node, origin.Of(r), h.names(ctx)))
	return nil
}

// shareRefusal turns a store's refusal of a share into its Graph answer;
// anything else stays an internal error.
func shareRefusal(err error) error {
	switch {
	case errors.Is(err, storage.ErrInvalid):
		return invalidRequest(refusalMessage(err))
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrExists):
		return &apiError{http.StatusConflict, "nameAlreadyExists", "the item is shared with this recipient already"}
	case errors.Is(err, storage.ErrTooManyShares):
		return &apiError{http.StatusInsufficientStorage, "quotaLimitReached", "you have made as many shares as one user may"}
	}
	return err
}

// refusalMessage is the rule a refusal names, without the sentinel's
// words appended by wrapping.
func refusalMessage(err error) string {
	msg := err.Error()
	cut, _ := strings.CutSuffix(msg, ": "+storage.ErrInvalid.Error())
	return cut
}

// displayNames finds users' display names in the directory, once per id
// in a request.
type displayNames struct {
	ctx   context.Context
	dir   storage.Directory
	names map[string]string
}

func (h *Handler) names(ctx context.Context) displayNames {
	return displayNames{ctx: ctx, dir: h.directory, names: map[string]string{}}
}

// of is id's display name, the id itself when the directory has none.
func (d displayNames) of(id string) string {
	if name, ok := d.names[id]; ok {
		return name
	}
	name := id
	if e, err := d.dir.DirectoryUser(d.ctx, id); err == nil && e.DisplayName != "" {
		name = e.DisplayName
	}
	d.names[id] = name
	return name
}
