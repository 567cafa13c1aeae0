package ocs

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestShareAuthority: only a share's creator or a manager of the space
// reads a link's token and changes or deletes the share; another editor
// lists it without its token; a viewer lists nothing; a stranger learns
// nothing. The rule is oCIS' (owncloud/reva's
// internal/grpc/services/publicshareprovider/publicshareprovider.go:
// UpdatePublicShare and RemovePublicShare let anybody but the creator
// through only with UpdateGrant or RemoveGrant, which a space's manager
// has and its editor does not), and graph's TestShareAuthority holds
// Graph to the same.
func TestShareAuthority(t *testing.T) {
	const (
		listed   = "listed with its token"
		hidden   = "listed without its token"
		unlisted = "not listed"
	)
	tests := []struct {
		role       string
		user       string
		link       string // whose link the user acts on
		list       string
		listStatus int
		status     int // of an update and of a delete
	}{
		{"manager", "einstein", "marie", listed, http.StatusOK, http.StatusOK},
		{"creator, an editor", "marie", "marie", listed, http.StatusOK, http.StatusOK},
		{"another editor", "pierre", "einstein", hidden, http.StatusOK, http.StatusForbidden},
		{"viewer", "richard", "einstein", unlisted, http.StatusForbidden, http.StatusNotFound},
		{"no member", "bohr", "einstein", unlisted, http.StatusNotFound, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			f := newShareFixture(t)
			f.project.Members["pierre"] = storage.RoleEditor
			if _, err := f.store.PutSpace(t.Context(), f.project); err != nil {
				t.Fatal(err)
			}
			lab := f.store.StorageID() + "$" + f.project.ID + "!" + f.lab.ID
			links := map[string]shareElement{}
			for _, creator := range []string{"einstein", "marie"} {
				links[creator] = f.create(creator, url.Values{"space_ref": {lab}, "shareType": {"3"}, "password": {"correct horse"}})
			}
			target := links[tt.link]
			before, err := f.store.Share(t.Context(), target.ID)
			if err != nil {
				t.Fatal(err)
			}

			w := f.do(tt.user, http.MethodGet, sharesURL+"?format=json&reshares=true&space_ref="+url.QueryEscape(lab), nil)
			if w.Code != tt.listStatus || strings.Contains(w.Body.String(), before.Token) != (tt.list == listed) {
				t.Fatalf("list: %d, want %d, %s: %s", w.Code, tt.listStatus, tt.list, w.Body)
			}
			if tt.list == hidden {
				seen := decodeJSON[[]shareElement](t, w, http.StatusOK)
				if len(seen) != 2 || seen[0].ID != links["einstein"].ID || seen[0].Token != "" || seen[0].URL != "" || seen[0].UIDOwner != "einstein" {
					t.Fatalf("another editor's listing: %+v", seen)
				}
			}
			w = f.do(tt.user, http.MethodGet, sharesURL+"/"+target.ID+"?format=json", nil)
			if strings.Contains(w.Body.String(), before.Token) != (tt.list == listed) {
				t.Fatalf("reading the link: %d %s", w.Code, w.Body)
			}

			w = f.do(tt.user, http.MethodPut, sharesURL+"/"+target.ID+"?format=json", url.Values{"permissions": {"15"}, "password": {""}})
			if w.Code != tt.status {
				t.Fatalf("update: status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status != http.StatusOK {
				after, err := f.store.Share(t.Context(), target.ID)
				if err != nil || after.Role != before.Role || !bytes.Equal(after.PasswordHash, before.PasswordHash) || after.Creator != before.Creator {
					t.Fatalf("a refused update changed the link: %+v, %v", after, err)
				}
			}
			w = f.do(tt.user, http.MethodDelete, sharesURL+"/"+target.ID+"?format=json", nil)
			if w.Code != tt.status {
				t.Fatalf("delete: status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			_, err = f.store.Share(t.Context(), target.ID)
			if deleted := err != nil; deleted != (tt.status == http.StatusOK) {
				t.Fatalf("deleted %v after a %d: %v", deleted, w.Code, err)
			}
		})
	}
}
