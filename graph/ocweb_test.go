package graph

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// The shapes ownCloud Web reads while it starts (owncloud/web
// packages/web-runtime/src/index.ts and services/auth/userManager.ts,
// packages/web-client/src/helpers/space/functions.ts buildSpace).

func TestRoleDefinitions(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", http.MethodGet, "/graph/v1beta1/roleManagement/permissions/roleDefinitions")
	wantStatus(t, rec, http.StatusOK)
	// A bare array: Web takes the body as the list.
	var roles []roleDefinition
	if err := json.Unmarshal(rec.Body.Bytes(), &roles); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	byID := map[string]roleDefinition{}
	for _, r := range roles {
		byID[r.ID] = r
	}
	for _, id := range []string{RoleViewerID, RoleSpaceViewerID, RoleEditorID, RoleSpaceEditorID, RoleFileEditorID, RoleUploaderID, RoleManagerID} {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("role %s missing from %s", id, rec.Body)
		}
		if r.DisplayName == "" || r.Description == "" || r.Weight < 1 || len(r.RolePermissions) == 0 {
			t.Errorf("role %+v incomplete", r)
		}
	}
	// Web finds a space member's rights under "exists @Resource.Root".
	for id, want := range map[string]struct {
		has, lacks string
	}{
		RoleSpaceViewerID: {actionContentRead, actionUploadCreate},
		RoleSpaceEditorID: {actionUploadCreate, actionPermissionsDelete},
		RoleManagerID:     {actionPermissionsDelete, ""},
	} {
		actions := actionsOn(byID[id], conditionDrive)
		if !slices.Contains(actions, want.has) || (want.lacks != "" && slices.Contains(actions, want.lacks)) {
			t.Errorf("role %s on a space root allows %q", id, actions)
		}
	}
	if rec := e.do("", http.MethodGet, "/graph/v1beta1/roleManagement/permissions/roleDefinitions"); rec.Code != http.StatusUnauthorized {
		t.Errorf("without a user: %d", rec.Code)
	}
}

func actionsOn(r roleDefinition, condition string) []string {
	for _, p := range r.RolePermissions {
		if p.Condition == condition {
			return p.AllowedResourceActions
		}
	}
	return nil
}

func TestDrivesFilterAndOrder(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		filter, orderby string
		want            []string // aliases, in order
	}{
		{"driveType eq personal", "", []string{"personal/marie"}},
		{"driveType eq project", "", []string{"project/physics", "project/lab-notes"}},
		{"driveType eq 'project'", "name asc", []string{"project/lab-notes", "project/physics"}},
		{"", "name desc", []string{"project/physics", "personal/marie", "project/lab-notes"}},
		{"", "name", []string{"project/lab-notes", "personal/marie", "project/physics"}},
		{"driveType eq virtual", "", []string{"virtual/shares"}},
		{"driveType eq mountpoint", "name asc", nil},
	}
	for _, tt := range tests {
		target := drivesQueryTarget(tt.filter, tt.orderby)
		t.Run(target, func(t *testing.T) {
			rec := e.do("marie", http.MethodGet, target)
			wantStatus(t, rec, http.StatusOK)
			var body struct {
				Value []drive `json:"value"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Value == nil {
				t.Fatalf("decoding %s: %v", rec.Body, err)
			}
			var got []string
			for _, d := range body.Value {
				got = append(got, d.DriveAlias)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("drives %q, want %q", got, tt.want)
			}
		})
	}
	for _, q := range [][2]string{
		{"driveType ne personal", ""}, {"name eq x", ""}, {"driveType eq share", ""},
		{"", "size asc"}, {"", "name up"}, {"", "name asc desc"},
	} {
		target := drivesQueryTarget(q[0], q[1])
		if rec := e.do("marie", http.MethodGet, target); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", target, rec.Code)
		}
	}
}

// drivesQueryTarget is the /me/drives URL with the $filter and $orderby
// given (empty ones left out).
func drivesQueryTarget(filter, orderby string) string {
	q := url.Values{}
	if filter != "" {
		q.Set("$filter", filter)
	}
	if orderby != "" {
		q.Set("$orderby", orderby)
	}
	return "/graph/v1beta1/me/drives?" + q.Encode()
}

func TestDriveWebURLAndMembers(t *testing.T) {
	e := newEnv(t)
	ds := e.drives("einstein")
	personalID := testStorageID + "$" + e.personalID("einstein")
	p, _ := driveByID(ds, personalID)
	if want := "https://cloud.example.org/f/" + personalID + "%21" + e.personalID("einstein"); p.WebURL != want {
		t.Errorf("personal webUrl %q, want %q", p.WebURL, want)
	}
	if len(p.Root.Permissions) != 1 || p.Root.Permissions[0].GrantedToV2.User == nil ||
		p.Root.Permissions[0].GrantedToV2.User.ID != "einstein" || p.Root.Permissions[0].Roles[0] != RoleManagerID {
		t.Errorf("personal members %+v", p.Root.Permissions)
	}
	pr, _ := driveByID(ds, testStorageID+"$physics")
	if pr.WebURL != "https://cloud.example.org/f/"+testStorageID+"$physics%21physics" {
		t.Errorf("project webUrl %q", pr.WebURL)
	}
	type member struct{ id, kind, role string }
	var got []member
	for _, perm := range pr.Root.Permissions {
		switch {
		case perm.GrantedToV2.User != nil:
			got = append(got, member{perm.GrantedToV2.User.ID, "user", perm.Roles[0]})
		case perm.GrantedToV2.Group != nil:
			got = append(got, member{perm.GrantedToV2.Group.ID, "group", perm.Roles[0]})
		}
	}
	want := []member{{"einstein", "user", RoleManagerID}, {"marie", "user", RoleSpaceEditorID}, {"chemists", "group", RoleSpaceViewerID}}
	if !slices.Equal(got, want) {
		t.Errorf("physics members %+v, want %+v", got, want)
	}
}

func TestMeMemberOf(t *testing.T) {
	e := newEnv(t)
	rec := e.do("richard:chemists,physicists", http.MethodGet, "/graph/v1.0/me?%24expand=memberOf")
	wantStatus(t, rec, http.StatusOK)
	var me struct {
		ID       string `json:"id"`
		MemberOf []struct {
			ID          string `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"memberOf"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &me); err != nil {
		t.Fatal(err)
	}
	if me.ID != "richard" || len(me.MemberOf) != 2 || me.MemberOf[0].ID != "chemists" || me.MemberOf[1].DisplayName != "physicists" {
		t.Errorf("me %s", rec.Body)
	}
	rec = e.do("richard", http.MethodGet, "/graph/v1.0/me?%24expand=memberOf")
	if !contains(rec.Body.String(), `"memberOf":[]`) {
		t.Errorf("a user without groups: %s, want an empty memberOf", rec.Body)
	}
}

func TestMeMail(t *testing.T) {
	store := newEnv(t).store
	h, err := New(Config{Store: store, Shares: store, Directory: store, User: testUser, Email: func(*http.Request) string { return "richard@example.org" }})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h}
	if rec := e.do("richard", http.MethodGet, "/graph/v1.0/me"); !contains(rec.Body.String(), `"mail":"richard@example.org"`) {
		t.Errorf("me %s", rec.Body)
	}
}

func TestDriveOrderByTime(t *testing.T) {
	at := func(sec int64) *time.Time { v := time.Unix(sec, 0).UTC(); return &v }
	drives := func() []drive {
		return []drive{{Name: "b", LastModifiedDateTime: at(20)}, {Name: "a", LastModifiedDateTime: at(30)}, {Name: "c"}}
	}
	for order, want := range map[string][]string{
		"lastModifiedDateTime":      {"c", "b", "a"},
		"lastModifiedDateTime asc":  {"c", "b", "a"},
		"lastModifiedDateTime desc": {"a", "b", "c"},
		"name DESC":                 {"c", "b", "a"},
	} {
		q, err := parseDrivesQuery(url.Values{"$orderby": {order}})
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		ds := drives()
		q.sort(ds)
		var got []string
		for _, d := range ds {
			got = append(got, d.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("$orderby=%s: %q, want %q", order, got, want)
		}
	}
}
