package ocs

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
)

// listShares answers GET shares:
//   - shared_with_me=true: the live shares with the caller or their groups
//     (state 0, accepted, or all; pending and declined ones there are none);
//   - path (or space_ref): the shares of that item, or of the items
//     directly in that folder with subfiles=true, made by the caller, or
//     by anybody with reshares=true; the caller must be allowed to share
//     there;
//   - neither: every share the caller made.
func (s *sharing) listShares(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
	q := r.URL.Query()
	ctx := r.Context()
	rd := s.renderer(u, origin.Of(r))
	if isTrue(q.Get("shared_with_me")) {
		if state := q.Get("state"); state != "" && state != "0" && state != "all" {
			writeOK(w, r, v, elements[shareElement]{})
			return nil
		}
		var shares []storage.Share
		if u.Scope.ReachesShares() {
			var err error
			if shares, err = s.store.SharesWith(ctx, u); err != nil {
				return err
			}
		}
		return writeShares(w, r, v, rd, shares, true)
	}
	ref, p := q.Get("space_ref"), q.Get("path")
	if ref == "" && p == "" {
		shares, err := s.store.SharesBy(ctx, u.ID)
		if err != nil {
			return err
		}
		return writeShares(w, r, v, rd, shares, false)
	}
	it, err := s.resolveItem(ctx, u, ref, p)
	if err != nil {
		return err
	}
	if err := s.mayShare(it.space, u); err != nil {
		return err
	}
	shares, err := s.itemShares(ctx, it, isTrue(q.Get("subfiles")))
	if err != nil {
		return err
	}
	if !isTrue(q.Get("reshares")) {
		shares = mine(shares, u.ID)
	}
	return writeShares(w, r, v, rd, shares, false)
}

// itemShares returns the shares of it or, with inFolder, those of the
// items directly in the folder it (not its own), as ownCloud's subfiles.
func (s *sharing) itemShares(ctx context.Context, it item, inFolder bool) ([]storage.Share, error) {
	if !inFolder {
		return s.store.ItemShares(ctx, it.space.ID, it.node.ID)
	}
	if !it.node.IsFolder() {
		return nil, refuse(http.StatusBadRequest, "Not a directory")
	}
	all, err := s.store.ItemShares(ctx, it.space.ID, "")
	if err != nil {
		return nil, err
	}
	var out []storage.Share
	for _, sh := range all {
		n, err := s.store.Node(ctx, sh.SpaceID, sh.NodeID)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n.ParentID == it.node.ID {
			out = append(out, sh)
		}
	}
	return out, nil
}

func mine(shares []storage.Share, userID string) []storage.Share {
	out := shares[:0:0]
	for _, sh := range shares {
		if sh.Creator == userID {
			out = append(out, sh)
		}
	}
	return out
}

// isTrue reads a boolean query or form value as ownCloud does.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// createShare answers POST shares: path (or space_ref), shareType 0 user,
// 1 group, 3 link; shareWith for users and groups; permissions or, for a
// link, publicUpload; password, name and expireDate for a link (an
// expiry for any share).
func (s *sharing) createShare(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
	if err := readForm(w, r); err != nil {
		return err
	}
	ctx := r.Context()
	kind, err := shareKind(r.Form.Get("shareType"))
	if err != nil {
		return err
	}
	it, err := s.resolveItem(ctx, u, r.Form.Get("space_ref"), r.Form.Get("path"))
	if err != nil {
		return err
	}
	if err := s.mayShare(it.space, u); err != nil {
		return err
	}
	sh := storage.Share{Kind: kind, SpaceID: it.space.ID, NodeID: it.node.ID, Creator: u.ID}
	role, given, err := requestedRole(r.Form, kind, it.node.IsFolder())
	if err != nil {
		return err
	}
	if sh.Role = role; !given {
		sh.Role = defaultRole(kind)
	}
	if sh.Expires, err = parseExpiry(r.Form.Get("expireDate")); err != nil {
		return err
	}
	switch kind {
	case storage.ShareWithUser:
		if sh.Grantee, err = s.knownUser(ctx, r.Form.Get("shareWith")); err != nil {
			return err
		}
	case storage.ShareWithGroup:
		if sh.Grantee, err = s.knownGroup(ctx, r.Form.Get("shareWith")); err != nil {
			return err
		}
	case storage.ShareLink:
		sh.DisplayName = r.Form.Get("name")
		if sh.PasswordHash, err = storage.HashLinkPassword(r.Form.Get("password")); err != nil {
			return refuse(http.StatusBadRequest, "%s", invalidMessage(err))
		}
	}
	created, err := s.store.CreateShare(ctx, sh)
	if err != nil {
		return notFoundAs(err, errNoItem)
	}
	e, err := s.renderer(u, origin.Of(r)).element(ctx, created, it.node, false)
	if err != nil {
		return err
	}
	writeOK(w, r, v, e)
	return nil
}

// shareKind reads shareType: only users, groups and links are shared here.
func shareKind(v string) (storage.ShareKind, error) {
	switch strings.TrimSpace(v) {
	case "0":
		return storage.ShareWithUser, nil
	case "1":
		return storage.ShareWithGroup, nil
	case "3":
		return storage.ShareLink, nil
	}
	return 0, refuse(http.StatusBadRequest, "Unknown share type: 0 (user), 1 (group) and 3 (link) are shared here")
}

// knownUser checks that id names a user one may share with: one who signed
// in (the directory), or a member the configuration names.
func (s *sharing) knownUser(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", refuse(http.StatusBadRequest, "Please specify a user to share with")
	}
	if _, err := s.store.DirectoryUser(ctx, id); err == nil {
		return id, nil
	} else if !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, errors.ErrUnsupported) {
		return "", err
	}
	if slices.Contains(s.members, id) {
		return id, nil
	}
	return "", refuse(http.StatusNotFound, "Please specify a valid user")
}

// knownGroup checks that name names a group one may share with: one of a
// user who signed in, or a group the configuration names.
func (s *sharing) knownGroup(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", refuse(http.StatusBadRequest, "Please specify a group to share with")
	}
	if slices.Contains(s.groups, name) {
		return name, nil
	}
	found, err := s.store.SearchGroups(ctx, name, storage.MaxDirectoryResults)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return "", err
	}
	if slices.Contains(found, name) {
		return name, nil
	}
	return "", refuse(http.StatusNotFound, "Please specify a valid group")
}

// managedShare returns share id for a caller who may change or delete it:
// its creator or a manager of its space (storage.MayManageShare). Another
// member who may share there and a recipient of the share, who both see
// it, are refused with 403; anybody else learns nothing of it (404).
func (s *sharing) managedShare(ctx context.Context, u storage.User, id string) (storage.Share, storage.Node, error) {
	sh, node, err := s.visibleShare(ctx, u, id)
	if err != nil {
		return storage.Share{}, storage.Node{}, err
	}
	space, err := s.store.Space(ctx, sh.SpaceID)
	if err != nil {
		return storage.Share{}, storage.Node{}, notFoundAs(err, errNoShare)
	}
	if s.spaces.MayManageShare(u, space, sh) != nil {
		return storage.Share{}, storage.Node{}, refuse(http.StatusForbidden, "Only the share's creator or a manager of the space changes or deletes it")
	}
	return sh, node, nil
}

// visibleShare returns share id and its item if the caller may see it: a
// live share of a served space (a dead one is absent for everybody, until
// it revives or is deleted) that they may manage or that is with them.
func (s *sharing) visibleShare(ctx context.Context, u storage.User, id string) (storage.Share, storage.Node, error) {
	sh, err := s.store.Share(ctx, id)
	if err != nil {
		return storage.Share{}, storage.Node{}, notFoundAs(err, errNoShare)
	}
	space, err := s.store.Space(ctx, sh.SpaceID)
	if err != nil {
		return storage.Share{}, storage.Node{}, notFoundAs(err, errNoShare)
	}
	live, err := storage.LiveShare(ctx, s.store, sh, s.now())
	if err != nil {
		return storage.Share{}, storage.Node{}, err
	}
	if !live || !s.spaces.Serves(space) || s.spaces.MayShare(u, space) != nil && !storage.SharedWith(sh, u) {
		return storage.Share{}, storage.Node{}, errNoShare
	}
	node, err := s.store.Node(ctx, sh.SpaceID, sh.NodeID)
	if err != nil {
		return storage.Share{}, storage.Node{}, notFoundAs(err, errNoShare)
	}
	if reached, err := u.Scope.ReachesNode(ctx, s.store, node); err != nil || !reached {
		return storage.Share{}, storage.Node{}, cmp.Or(err, error(errNoShare))
	}
	return sh, node, nil
}

// getShare answers GET shares/{id}: a list of the one share, as ownCloud.
func (s *sharing) getShare(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User, id string) error {
	ctx := r.Context()
	sh, _, err := s.visibleShare(ctx, u, id)
	if err != nil {
		return err
	}
	e, ok, err := s.renderer(u, origin.Of(r)).liveElement(ctx, sh, sh.Creator != u.ID && storage.SharedWith(sh, u))
	if err != nil {
		return err
	}
	if !ok {
		return errNoShare
	}
	writeOK(w, r, v, elements[shareElement]{e})
	return nil
}

// updateShare answers PUT shares/{id}: any of permissions (or a link's
// publicUpload), expireDate ("" clears it), and a link's password (""
// clears it) and name.
func (s *sharing) updateShare(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User, id string) error {
	if err := readForm(w, r); err != nil {
		return err
	}
	ctx := r.Context()
	sh, node, err := s.managedShare(ctx, u, id)
	if err != nil {
		return err
	}
	update, err := shareUpdate(r.Form, sh, node.IsFolder())
	if err != nil {
		return err
	}
	updated, err := s.store.UpdateShare(ctx, id, update)
	if err != nil {
		return notFoundAs(err, errNoShare)
	}
	e, err := s.renderer(u, origin.Of(r)).element(ctx, updated, node, false)
	if err != nil {
		return err
	}
	writeOK(w, r, v, e)
	return nil
}

// shareUpdate is old changed as form asks; a form that asks nothing is
// refused, as ownCloud does.
func shareUpdate(form map[string][]string, old storage.Share, folder bool) (storage.Share, error) {
	update := old
	changed := false
	role, given, err := requestedRole(form, old.Kind, folder)
	if err != nil {
		return storage.Share{}, err
	}
	if given {
		update.Role, changed = role, true
	}
	if v, ok := formValue(form, "expireDate"); ok {
		if update.Expires, err = parseExpiry(v); err != nil {
			return storage.Share{}, err
		}
		changed = true
	}
	if v, ok := formValue(form, "password"); ok {
		if update.PasswordHash, err = storage.HashLinkPassword(v); err != nil {
			return storage.Share{}, refuse(http.StatusBadRequest, "%s", invalidMessage(err))
		}
		changed = true
	}
	if v, ok := formValue(form, "name"); ok {
		update.DisplayName, changed = v, true
	}
	if !changed {
		return storage.Share{}, refuse(http.StatusBadRequest, "Wrong or no update parameter given")
	}
	return update, nil
}

// deleteShare answers DELETE shares/{id}.
func (s *sharing) deleteShare(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User, id string) error {
	ctx := r.Context()
	if _, _, err := s.managedShare(ctx, u, id); err != nil {
		return err
	}
	if err := s.store.DeleteShare(ctx, id); err != nil {
		return notFoundAs(err, errNoShare)
	}
	writeOK(w, r, v, emptyData{})
	return nil
}

// writeShares answers 200 with shares as their elements; received says
// they are shares with the caller rather than by them.
func writeShares(w http.ResponseWriter, r *http.Request, v apiVersion, rd *renderer, shares []storage.Share, received bool) error {
	list, err := rd.elements(r.Context(), shares, received)
	if err != nil {
		return err
	}
	writeOK(w, r, v, list)
	return nil
}
