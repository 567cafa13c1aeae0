package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckNewShare(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	folder := Node{ID: "f", SpaceID: "sp", ParentID: "sp", Kind: KindFolder}
	file := Node{ID: "x", SpaceID: "sp", ParentID: "sp", Kind: KindFile}
	root := Node{ID: "sp", SpaceID: "sp", Kind: KindFolder}
	link := Share{Kind: ShareLink, Creator: "einstein", Role: ShareViewer}
	withMarie := Share{Kind: ShareWithUser, Creator: "einstein", Role: ShareEditor, Grantee: "marie"}
	tests := []struct {
		name  string
		share func(s *Share)
		base  Share
		item  Node
		ok    bool
	}{
		{"a view link on a file", nil, link, file, true},
		{"a file drop on a folder", func(s *Share) { s.Role = ShareFileDrop }, link, folder, true},
		{"a file drop on a file", func(s *Share) { s.Role = ShareFileDrop }, link, file, false},
		{"an upload link on a file", func(s *Share) { s.Role = ShareUploader }, link, file, false},
		{"a link with a grantee", func(s *Share) { s.Grantee = "marie" }, link, file, false},
		{"a link expiring later", func(s *Share) { s.Expires = now.Add(time.Hour) }, link, file, true},
		{"a link expired", func(s *Share) { s.Expires = now }, link, file, false},
		{"a link with a long name", func(s *Share) { s.DisplayName = strings.Repeat("n", MaxShareDisplayName+1) }, link, file, false},
		{"a link with a name not UTF-8", func(s *Share) { s.DisplayName = "\xff" }, link, file, false},
		{"a link on a space's root", nil, link, root, false},
		{"a link without creator", func(s *Share) { s.Creator = "" }, link, file, false},
		{"an unknown role", func(s *Share) { s.Role = 99 }, link, file, false},
		{"an unknown kind", func(s *Share) { s.Kind = 2 }, link, file, false},
		{"a share with a user", nil, withMarie, folder, true},
		{"a share with a group", func(s *Share) { s.Kind, s.Grantee = ShareWithGroup, "physics" }, withMarie, folder, true},
		{"a share with nobody", func(s *Share) { s.Grantee = "" }, withMarie, folder, false},
		{"a share with oneself", func(s *Share) { s.Grantee = "einstein" }, withMarie, folder, false},
		{"a share with a token", func(s *Share) { s.Token = "t" }, withMarie, folder, false},
		{"a share with a password", func(s *Share) { s.PasswordHash = []byte("h") }, withMarie, folder, false},
		{"a user's file drop", func(s *Share) { s.Role = ShareFileDrop }, withMarie, folder, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.base
			if tt.share != nil {
				tt.share(&s)
			}
			err := CheckNewShare(s, tt.item, now)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckNewShare: %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("refusal %v is not ErrInvalid", err)
			}
		})
	}
}

func TestLinkTokens(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		token := NewLinkToken()
		if len(token) < 40 || seen[token] {
			t.Fatalf("token %q: short or repeated", token)
		}
		seen[token] = true
		if err := ValidLinkToken(token); err != nil {
			t.Fatalf("ValidLinkToken(%q): %v", token, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", "ä", strings.Repeat("a", 129), "..", "a%2F"} {
		if err := ValidLinkToken(bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("ValidLinkToken(%q) = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestLinkPasswords(t *testing.T) {
	if hash, err := HashLinkPassword(""); hash != nil || err != nil {
		t.Fatalf("no password: %q, %v", hash, err)
	}
	for _, bad := range []string{"short", strings.Repeat("p", MaxSharePassword+1)} {
		if _, err := HashLinkPassword(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("HashLinkPassword(%d bytes) = %v, want ErrInvalid", len(bad), err)
		}
	}
	hash, err := HashLinkPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	link := Share{Kind: ShareLink, PasswordHash: hash}
	if !CheckLinkPassword(link, "correct horse") || CheckLinkPassword(link, "wrong horse") || CheckLinkPassword(link, "") {
		t.Error("the password check lets the wrong password in or keeps the right one out")
	}
	if !CheckLinkPassword(Share{Kind: ShareLink}, "anything") {
		t.Error("a link without a password refuses")
	}
}

func TestMayShareAndSharedWith(t *testing.T) {
	for role, want := range map[Role]bool{RoleNone: false, RoleViewer: false, RoleEditor: true, RoleManager: true} {
		if MayShare(role) != want {
			t.Errorf("MayShare(%d) = %v", role, !want)
		}
	}
	marie := User{ID: "marie", Groups: []string{"physics"}}
	tests := []struct {
		share Share
		want  bool
	}{
		{Share{Kind: ShareWithUser, Grantee: "marie"}, true},
		{Share{Kind: ShareWithUser, Grantee: "richard"}, false},
		{Share{Kind: ShareWithGroup, Grantee: "physics"}, true},
		{Share{Kind: ShareWithGroup, Grantee: "marie"}, false},
		{Share{Kind: ShareLink}, false},
	}
	for _, tt := range tests {
		if got := SharedWith(tt.share, marie); got != tt.want {
			t.Errorf("SharedWith(%+v, marie) = %v", tt.share, got)
		}
	}
	if err := CheckShareCount(MaxSharesPerCreator); !errors.Is(err, ErrTooManyShares) || !errors.Is(err, ErrInsufficientStorage) {
		t.Errorf("CheckShareCount at the cap: %v", err)
	}
	if err := CheckShareCount(MaxSharesPerCreator - 1); err != nil {
		t.Errorf("CheckShareCount below the cap: %v", err)
	}
}

func TestShareLive(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		expires time.Time
		role    Role
		want    bool
	}{
		{"an editor's", time.Time{}, RoleEditor, true},
		{"a manager's, expiring later", now.Add(time.Minute), RoleManager, true},
		{"expired", now, RoleManager, false},
		{"its creator a viewer now", time.Time{}, RoleViewer, false},
		{"its creator gone", time.Time{}, RoleNone, false},
	}
	for _, tt := range tests {
		if got := ShareLive(Share{Expires: tt.expires}, tt.role, now); got != tt.want {
			t.Errorf("%s: live %v", tt.name, got)
		}
	}
}

// countingReader counts the reads a ShareJudge makes.
type countingReader struct {
	space   Space
	spaces  int
	entries int
}

func (c *countingReader) Space(context.Context, string) (Space, error) {
	c.spaces++
	return c.space, nil
}

func (c *countingReader) DirectoryUser(_ context.Context, id string) (DirectoryEntry, error) {
	c.entries++
	return DirectoryEntry{ID: id, Groups: []string{"physics"}}, nil
}

func TestShareJudgeReadsOnce(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	r := &countingReader{space: Space{ID: "sp", Type: SpaceProject, Members: map[string]Role{"group:physics": RoleEditor}}}
	j := NewShareJudge(r, now)
	shares := []Share{
		{ID: "a", SpaceID: "sp", Creator: "marie"},
		{ID: "b", SpaceID: "sp", Creator: "marie"},
		{ID: "c", SpaceID: "sp", Creator: "marie", Expires: now},
	}
	var live []bool
	for _, s := range shares {
		ok, err := j.Live(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, ok)
	}
	if !live[0] || !live[1] || live[2] {
		t.Errorf("live %v, want the two unexpired ones (marie edits through her group)", live)
	}
	if r.spaces != 1 || r.entries != 1 {
		t.Errorf("%d space reads and %d directory reads, want one each", r.spaces, r.entries)
	}
}

// TestMayManageShare: who may change or delete a share, and who reads a
// link's token, by role and authorship (oCIS: reva's public share
// provider refuses an update or removal by anybody but the creator
// without UpdateGrant/RemoveGrant, which only a space manager holds).
func TestMayManageShare(t *testing.T) {
	link := Share{Kind: ShareLink, Creator: "einstein", Token: "secret"}
	tests := []struct {
		name string
		user string
		role Role
		want bool
	}{
		{"a manager, not its creator", "niels", RoleManager, true},
		{"its creator, a manager", "einstein", RoleManager, true},
		{"its creator, an editor", "einstein", RoleEditor, true},
		{"its creator, now a viewer", "einstein", RoleViewer, false},
		{"another editor", "marie", RoleEditor, false},
		{"a viewer", "richard", RoleViewer, false},
		{"no member", "mallory", RoleNone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := User{ID: tt.user}
			if got := MayManageShare(link, u, tt.role); got != tt.want {
				t.Errorf("MayManageShare = %v, want %v", got, tt.want)
			}
			seen := link.SeenBy(u, tt.role)
			if hasToken := seen.Token != ""; hasToken != tt.want {
				t.Errorf("SeenBy shows the token: %v, want %v", hasToken, tt.want)
			}
			if seen.ID != link.ID || seen.Creator != link.Creator || seen.Kind != link.Kind {
				t.Errorf("SeenBy changed more than the token: %+v", seen)
			}
		})
	}
	share := Share{Kind: ShareWithUser, Creator: "einstein", Grantee: "richard"}
	if got := share.SeenBy(User{ID: "marie"}, RoleEditor); got.Grantee != share.Grantee || got.Creator != share.Creator {
		t.Errorf("a share with a user seen by an editor: %+v", got)
	}
}

func TestShareCap(t *testing.T) {
	tests := []struct {
		set  int64
		want int
	}{
		{0, MaxSharesPerCreator},
		{-1, MaxSharesPerCreator},
		{1, 1},
		{3, 3},
		{MaxSharesPerCreator * 2, MaxSharesPerCreator * 2},
	}
	for _, tt := range tests {
		if got := ShareCap(tt.set); got != tt.want {
			t.Errorf("ShareCap(%d) = %d, want %d", tt.set, got, tt.want)
		}
	}
}
