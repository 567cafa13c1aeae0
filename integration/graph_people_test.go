package integration

import (
	"net/http"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestGraphPeopleAfterSignIn: the people to invite include everybody who
// signed in, with the groups of their token, not only the members the
// configuration names; and an invitation reaches them.
func TestGraphPeopleAfterSignIn(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}

	var users struct {
		Value []struct {
			ID, DisplayName, Mail string
		}
	}
	search := "/graph/v1.0/users?%24orderby=displayName&%24search=%22bob%22"
	webCall(t, alice, http.StatusOK, http.MethodGet, search, "", &users)
	if len(users.Value) != 0 {
		t.Fatalf("bob before he signed in: %+v", users)
	}
	// bob signs in (any request with his token).
	webCall(t, bob, http.StatusOK, http.MethodGet, "/graph/v1.0/me", "", nil)
	webCall(t, alice, http.StatusOK, http.MethodGet, search, "", &users)
	if len(users.Value) != 1 || users.Value[0].ID != "bob" || users.Value[0].DisplayName != idp.Claims("bob")["name"] || users.Value[0].Mail != "bob@example.test" {
		t.Fatalf("bob after he signed in: %+v", users)
	}
	var groups struct {
		Value []struct{ ID string }
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1.0/groups?%24search=%22devel%22", "", &groups)
	if len(groups.Value) != 1 || groups.Value[0].ID != "developers" {
		t.Fatalf("groups %+v", groups)
	}

	_, item, items := sharingFolder(t, alice, "notes")
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/invite", mustJSON(t, map[string]any{
		"roles":      []string{viewerRoleID},
		"recipients": []map[string]string{{"objectId": "bob", "@libre.graph.recipient.type": "user"}},
	}), nil)
	if with := sharedWithMe(t, bob); len(with) != 1 || with[0].RemoteItem == nil || with[0].RemoteItem.ID != item {
		t.Fatalf("bob's sharedWithMe %+v", with)
	}
}
