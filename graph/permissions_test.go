package graph

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestShareAuthority: only a share's creator or a manager of the space
// reads a link's address and changes or deletes the share; another editor
// lists it without its address; a viewer lists nothing; a stranger learns
// nothing. The rule is oCIS': owncloud/reva's public share provider
// (internal/grpc/services/publicshareprovider/publicshareprovider.go,
// UpdatePublicShare and RemovePublicShare) lets anybody but the creator
// through only with the UpdateGrant or RemoveGrant permission, which
// reva's space editor role (pkg/conversions/role.go, NewSpaceEditorRole)
// lacks and its manager has.
func TestShareAuthority(t *testing.T) {
	const (
		listed   = "listed with its address"
		hidden   = "listed without its address"
		unlisted = "not listed"
	)
	tests := []struct {
		role   string
		user   string
		link   string // whose link the user acts on
		list   string
		status int // of each change: update, set password, delete
	}{
		{"manager", "einstein", "marie", listed, http.StatusOK},
		{"creator, an editor", "marie", "marie", listed, http.StatusOK},
		{"another editor", "pierre", "einstein", hidden, http.StatusForbidden},
		{"viewer", "richard:chemists", "einstein", unlisted, http.StatusForbidden},
		{"no member", "mallory", "einstein", unlisted, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			e := newEnv(t)
			e.addMember("physics", "pierre", storage.RoleEditor)
			drive, item := e.folder("physics", "papers")
			links := map[string]linkPermission{}
			for _, creator := range []string{"einstein", "marie"} {
				var p linkPermission
				wantStatus(t, e.doJSON(creator, http.MethodPost, itemURL(drive, item, "createLink"),
					map[string]any{"type": "view", "password": "correct horse"}, &p), http.StatusOK)
				links[creator] = p
			}
			target := links[tt.link]
			before := e.share(target.ID)

			var list permissionsList
			rec := e.doJSON(tt.user, http.MethodGet, itemURL(drive, item, "permissions"), nil, &list)
			switch tt.list {
			case unlisted:
				if rec.Code == http.StatusOK && len(list.Value) != 0 || strings.Contains(rec.Body.String(), before.Token) {
					t.Fatalf("list %d %s", rec.Code, rec.Body)
				}
			default:
				wantStatus(t, rec, http.StatusOK)
				seen, ok := permissionByID(list.Value, target.ID)
				if !ok || seen.Link == nil {
					t.Fatalf("the link is not listed: %s", rec.Body)
				}
				if withURL := seen.Link.WebURL != ""; withURL != (tt.list == listed) || tt.list == hidden && strings.Contains(rec.Body.String(), before.Token) {
					t.Fatalf("%s, want it %s: %s", tt.user, tt.list, rec.Body)
				}
			}
			get := e.doJSON(tt.user, http.MethodGet, itemURL(drive, item, "permissions/"+target.ID), nil, nil)
			if tt.list != listed && strings.Contains(get.Body.String(), before.Token) {
				t.Fatalf("reading the link shows its token: %s", get.Body)
			}

			permission := itemURL(drive, item, "permissions/"+target.ID)
			changes := []struct {
				name   string
				method string
				url    string
				body   any
			}{
				{"update", http.MethodPatch, permission, map[string]any{"link": map[string]any{"type": "edit"}}},
				{"set password", http.MethodPost, permission + "/setPassword", map[string]any{"password": ""}},
			}
			for _, c := range changes {
				rec := e.doJSON(tt.user, c.method, c.url, c.body, nil)
				if rec.Code != tt.status {
					t.Fatalf("%s: status %d, want %d: %s", c.name, rec.Code, tt.status, rec.Body)
				}
				if tt.status != http.StatusOK {
					if after := e.share(target.ID); after.Role != before.Role || !bytes.Equal(after.PasswordHash, before.PasswordHash) || after.Creator != before.Creator {
						t.Fatalf("%s refused but the link changed: %+v", c.name, after)
					}
				}
			}
			rec = e.doJSON(tt.user, http.MethodDelete, permission, nil, nil)
			wantDelete := tt.status
			if wantDelete == http.StatusOK {
				wantDelete = http.StatusNoContent
			}
			if rec.Code != wantDelete {
				t.Fatalf("delete: status %d, want %d: %s", rec.Code, wantDelete, rec.Body)
			}
			_, err := e.store.Share(context.Background(), target.ID)
			if deleted := err != nil; deleted != (tt.status == http.StatusOK) {
				t.Fatalf("deleted %v after a %d: %v", deleted, rec.Code, err)
			}
		})
	}
}

// addMember gives user role in a space.
func (e *env) addMember(spaceID, user string, role storage.Role) {
	e.t.Helper()
	ctx := context.Background()
	s, err := e.store.Space(ctx, spaceID)
	if err != nil {
		e.t.Fatal(err)
	}
	s.Members[user] = role
	if _, err := e.store.PutSpace(ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// share reads a share from the store.
func (e *env) share(id string) storage.Share {
	e.t.Helper()
	s, err := e.store.Share(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func permissionByID(list []linkPermission, id string) (linkPermission, bool) {
	for _, p := range list {
		if p.ID == id {
			return p, true
		}
	}
	return linkPermission{}, false
}
