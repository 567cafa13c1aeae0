package apppass

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestTokensScoped makes scoped tokens: a space the user reaches and a
// folder in it are kept and listed with the scope; another's space, one
// not served, a missing folder and a file are one 404; a path without a
// space, a malformed path or readonly are 400, and nothing is made.
func TestTokensScoped(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	einstein, err := store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	marie, err := store.PersonalSpace(ctx, storage.User{ID: "marie"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range []storage.Space{
		{ID: "lab", Type: storage.SpaceProject, Name: "Lab", Quota: storage.NoQuota, Members: map[string]storage.Role{"einstein": storage.RoleViewer}},
		{ID: "attic", Type: storage.SpaceProject, Name: "Attic", Quota: storage.NoQuota, Members: map[string]storage.Role{"einstein": storage.RoleManager}},
	} {
		if _, err := store.PutSpace(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	photos, err := store.Mkdir(ctx, einstein.ID, einstein.ID, "Photos")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Mkdir(ctx, einstein.ID, photos.ID, "2026"); err != nil {
		t.Fatal(err)
	}
	up, err := store.NewUpload(ctx, einstein.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := up.Commit(ctx, storage.Commit{ParentID: einstein.ID, Name: "doc.txt"}); err != nil {
		t.Fatal(err)
	}
	s := newService(t, store, nil)
	s.cfg.Tree, s.cfg.Spaces = store, storage.NewSpacePolicy([]string{"lab"}) // attic is not served
	personal := url.QueryEscape(store.StorageID() + "$" + einstein.ID)

	for _, tc := range []struct {
		query     string
		want      int
		wantScope string // space|path|read_only as listed
	}{
		{"readonly=true", http.StatusOK, "||true"},
		{"space=" + personal, http.StatusOK, store.StorageID() + "$" + einstein.ID + "||false"},
		{"space=" + einstein.ID + "&path=/Photos/2026/&readonly=1", http.StatusOK, store.StorageID() + "$" + einstein.ID + "|/Photos/2026|true"},
		{"space=lab&path=/", http.StatusOK, store.StorageID() + "$lab||false"},
		{"space=" + marie.ID, http.StatusNotFound, ""},
		{"space=attic", http.StatusNotFound, ""},
		{"space=nowhere", http.StatusNotFound, ""},
		{"space=other%24" + einstein.ID, http.StatusNotFound, ""},
		{"space=" + personal + "&path=/Missing", http.StatusNotFound, ""},
		{"space=" + personal + "&path=/doc.txt", http.StatusNotFound, ""},
		{"space=" + personal + "&path=/doc.txt/x", http.StatusNotFound, ""},
		{"path=/Photos", http.StatusBadRequest, ""},
		{"space=" + personal + "&path=/Photos/../doc.txt", http.StatusBadRequest, ""},
		{"readonly=yes", http.StatusBadRequest, ""},
	} {
		w := serve(s, http.MethodPost, TokensPath+"?"+tc.query, "X-User", "einstein")
		if w.Code != tc.want {
			t.Errorf("POST ?%s: %d %s, want %d", tc.query, w.Code, w.Body, tc.want)
			continue
		}
		if tc.want != http.StatusOK {
			if !strings.Contains(w.Body.String(), "<d:error") {
				t.Errorf("POST ?%s: %s, want the WebDAV error body", tc.query, w.Body)
			}
			continue
		}
		var made authAppToken
		if err := json.Unmarshal(w.Body.Bytes(), &made); err != nil {
			t.Fatal(err)
		}
		if got := made.Space + "|" + made.Path + "|" + map[bool]string{true: "true", false: "false"}[made.ReadOnly]; got != tc.wantScope {
			t.Errorf("POST ?%s made scope %s, want %s", tc.query, got, tc.wantScope)
		}
	}
	w := serve(s, http.MethodGet, TokensPath, "X-User", "einstein")
	var list []authAppToken
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list) != 4 {
		t.Fatalf("GET lists %s, want the 4 made", w.Body)
	}
	if l := list[2]; l.Path != "/Photos/2026" || !l.ReadOnly || !strings.HasSuffix(l.Space, "$"+einstein.ID) {
		t.Errorf("the folder token is listed as %+v", l)
	}
}
