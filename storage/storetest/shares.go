package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/storage"
)

// shareTests are the conformance tests of storage.Shares: links and shares
// with users and groups, and how they follow their item's life.
var shareTests = []conformanceTest{
	{"SharesCreate", testSharesCreate},
	{"SharesCreateRefusals", testSharesCreateRefusals},
	{"SharesLinkByToken", testSharesLinkByToken},
	{"SharesUpdate", testSharesUpdate},
	{"SharesDelete", testSharesDelete},
	{"SharesListings", testSharesListings},
	{"SharesFollowMoves", testSharesFollowMoves},
	{"SharesGoWithRemove", testSharesGoWithRemove},
	{"SharesGoWithReplacedTargets", testSharesGoWithReplacedTargets},
	{"SharesCreatorCap", testSharesCreatorCap},
	{"SharesConcurrentLinks", testSharesConcurrentLinks},
	{"SharesRaceRemove", testSharesRaceRemove},
}

// ShareCapper is implemented by stores whose cap on the shares of one
// creator (storage.MaxSharesPerCreator) a test may lower, so as to reach
// it without making ten thousand shares. Without it, the cap's test skips.
type ShareCapper interface {
	// SetMaxSharesPerCreator sets the cap; n <= 0 restores the default.
	SetMaxSharesPerCreator(n int)
}

// Users and groups of the share tests, beside user.
var (
	marie   = storage.User{ID: "marie", DisplayName: "Marie Curie", Groups: []string{"physics", "chemistry"}}
	richard = storage.User{ID: "richard", DisplayName: "Richard Feynman", Groups: []string{"physics"}}
)

// needShares skips t when the store does not implement shares yet.
func (f *fixture) needShares(t *testing.T) {
	t.Helper()
	if _, err := f.s.ItemShares(f.ctx, f.space.ID, ""); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("the store does not keep shares yet")
	}
}

// linkOn returns a view link by user on node.
func (f *fixture) linkOn(node storage.Node) storage.Share {
	return storage.Share{Kind: storage.ShareLink, SpaceID: f.space.ID, NodeID: node.ID, Creator: user.ID, Role: storage.ShareViewer}
}

// shareWith returns a share by user of node with a user or group.
func (f *fixture) shareWith(node storage.Node, kind storage.ShareKind, grantee string) storage.Share {
	return storage.Share{Kind: kind, SpaceID: f.space.ID, NodeID: node.ID, Creator: user.ID, Role: storage.ShareEditor, Grantee: grantee}
}

// createShare creates sh and fails the test unless it is kept.
func (f *fixture) createShare(t *testing.T, sh storage.Share) storage.Share {
	t.Helper()
	got, err := f.s.CreateShare(f.ctx, sh)
	if err != nil {
		t.Fatalf("CreateShare %+v: %v", sh, err)
	}
	return got
}

// sameShare reports whether a and b are the same share with the same
// fields; times are compared to the microsecond, as PostgreSQL keeps them.
func sameShare(a, b storage.Share) bool {
	sameTime := func(x, y time.Time) bool { return x.Truncate(time.Microsecond).Equal(y.Truncate(time.Microsecond)) }
	return a.ID == b.ID && a.Kind == b.Kind && a.SpaceID == b.SpaceID && a.NodeID == b.NodeID &&
		a.Creator == b.Creator && a.Role == b.Role && a.Grantee == b.Grantee && a.Token == b.Token &&
		bytes.Equal(a.PasswordHash, b.PasswordHash) && a.DisplayName == b.DisplayName &&
		sameTime(a.Expires, b.Expires) && sameTime(a.Created, b.Created)
}

// wantShare checks that share want is kept as it is.
func (f *fixture) wantShare(t *testing.T, want storage.Share) {
	t.Helper()
	got, err := f.s.Share(f.ctx, want.ID)
	if err != nil || !sameShare(got, want) {
		t.Fatalf("Share %s = %+v, %v; want %+v", want.ID, got, err, want)
	}
	if want.Kind != storage.ShareLink {
		return
	}
	got, err = f.s.LinkByToken(f.ctx, want.Token)
	if err != nil || !sameShare(got, want) {
		t.Fatalf("LinkByToken of %s = %+v, %v; want %+v", want.ID, got, err, want)
	}
}

// wantNoShare checks that share sh is gone: not found by id or token,
// and in no listing.
func (f *fixture) wantNoShare(t *testing.T, sh storage.Share) {
	t.Helper()
	_, err := f.s.Share(f.ctx, sh.ID)
	wantErr(t, "Share of "+sh.ID, err, storage.ErrNotFound)
	if sh.Token != "" {
		_, err := f.s.LinkByToken(f.ctx, sh.Token)
		wantErr(t, "LinkByToken of "+sh.ID, err, storage.ErrNotFound)
	}
	lists := map[string]func() ([]storage.Share, error){
		"ItemShares of its item":  func() ([]storage.Share, error) { return f.s.ItemShares(f.ctx, sh.SpaceID, sh.NodeID) },
		"ItemShares of its space": func() ([]storage.Share, error) { return f.s.ItemShares(f.ctx, sh.SpaceID, "") },
		"SharesBy":                func() ([]storage.Share, error) { return f.s.SharesBy(f.ctx, sh.Creator) },
		"SharesWith": func() ([]storage.Share, error) {
			return f.s.SharesWith(f.ctx, storage.User{ID: sh.Grantee, Groups: []string{sh.Grantee}})
		},
	}
	for what, list := range lists {
		shares, err := list()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if slices.ContainsFunc(shares, func(s storage.Share) bool { return s.ID == sh.ID }) {
			t.Fatalf("%s lists the share %s, which is gone", what, sh.ID)
		}
	}
}

// wantShareIDs checks that a listing returned the shares want, in
// SortShares order.
func wantShareIDs(t *testing.T, what string, got []storage.Share, err error, want ...storage.Share) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	sorted := slices.Clone(want)
	storage.SortShares(sorted)
	ids := func(shares []storage.Share) []string {
		out := make([]string, 0, len(shares))
		for _, s := range shares {
			out = append(out, s.ID)
		}
		return out
	}
	if !slices.Equal(ids(got), ids(sorted)) {
		t.Fatalf("%s = %v, want %v", what, ids(got), ids(sorted))
	}
	for i := range got {
		if !sameShare(got[i], sorted[i]) {
			t.Fatalf("%s: share %d = %+v, want %+v", what, i, got[i], sorted[i])
		}
	}
}

// cheapHash returns a bcrypt hash of password at the lowest cost, which
// CheckLinkPassword checks as well as HashLinkPassword's: the race
// detector makes the default cost take seconds.
func cheapHash(t *testing.T, password string) []byte {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatalf("bcrypt: %v", err)
	}
	return hash
}

// A new share gets an id, its creation time and, a link, a long random
// token; it is kept as made.
func testSharesCreate(t *testing.T, f *fixture) {
	f.needShares(t)
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f.txt", "hello")
	hash := cheapHash(t, "correct horse")
	expires := time.Now().Add(48 * time.Hour).Truncate(time.Second)

	in := f.linkOn(file)
	in.PasswordHash, in.DisplayName, in.Expires = hash, "for the team", expires
	link := f.createShare(t, in)
	if link.ID == "" || len(link.Token) < 43 || storage.ValidLinkToken(link.Token) != nil || link.Created.IsZero() {
		t.Fatalf("CreateShare of a link = %+v", link)
	}
	in.ID, in.Token, in.Created = link.ID, link.Token, link.Created
	if !sameShare(link, in) {
		t.Fatalf("CreateShare = %+v, asked for %+v", link, in)
	}
	f.wantShare(t, link)
	if !storage.CheckLinkPassword(link, "correct horse") || storage.CheckLinkPassword(link, "wrong horse") {
		t.Fatal("the kept password hash does not check the password")
	}

	withMarie := f.createShare(t, f.shareWith(a, storage.ShareWithUser, marie.ID))
	withPhysics := f.createShare(t, f.shareWith(a, storage.ShareWithGroup, "physics"))
	second := f.createShare(t, f.linkOn(file))
	drop := f.linkOn(a)
	drop.Role = storage.ShareFileDrop
	drop = f.createShare(t, drop)
	for _, sh := range []storage.Share{withMarie, withPhysics, second, drop} {
		if sh.ID == "" || (sh.Kind == storage.ShareLink) != (sh.Token != "") {
			t.Fatalf("CreateShare = %+v", sh)
		}
		f.wantShare(t, sh)
	}
	ids := map[string]bool{}
	for _, sh := range []storage.Share{link, withMarie, withPhysics, second, drop} {
		ids[sh.ID], ids[sh.Token] = true, true
	}
	if len(ids) != 5+3+1 { // five ids, three tokens, and "" for the others
		t.Fatalf("ids and tokens not distinct: %v", ids)
	}
}

// Every refusal of CheckNewShare reaches the caller as ErrInvalid, an item
// that is no live node of the space as ErrNotFound, a second share with
// the same user or group as ErrExists; none keeps anything.
func testSharesCreateRefusals(t *testing.T, f *fixture) {
	f.needShares(t)
	folder := f.mkdir(t, f.root(), "folder")
	file := f.put(t, folder.ID, "f.txt", "hello")
	gone := f.put(t, folder.ID, "gone.txt", "bye")
	f.remove(t, gone.ID)
	other := f.projectSpace(t)
	elsewhere := other.mkdir(t, other.root(), "elsewhere")
	root := f.node(t, f.root())

	link := f.linkOn(file)
	withMarie := f.shareWith(folder, storage.ShareWithUser, marie.ID)
	tests := []struct {
		name  string
		base  storage.Share
		item  storage.Node
		share func(s *storage.Share)
		want  error
	}{
		{"a link with a grantee", link, file, func(s *storage.Share) { s.Grantee = marie.ID }, storage.ErrInvalid},
		{"a file drop on a file", link, file, func(s *storage.Share) { s.Role = storage.ShareFileDrop }, storage.ErrInvalid},
		{"an upload link on a file", link, file, func(s *storage.Share) { s.Role = storage.ShareUploader }, storage.ErrInvalid},
		{"a link expired", link, file, func(s *storage.Share) { s.Expires = time.Now().Add(-time.Minute) }, storage.ErrInvalid},
		{"a link with a long name", link, file, func(s *storage.Share) {
			s.DisplayName = strings.Repeat("n", storage.MaxShareDisplayName+1)
		}, storage.ErrInvalid},
		{"a link on the space's root", link, root, nil, storage.ErrInvalid},
		{"a link without creator", link, file, func(s *storage.Share) { s.Creator = "" }, storage.ErrInvalid},
		{"an unknown role", link, file, func(s *storage.Share) { s.Role = 99 }, storage.ErrInvalid},
		{"an unknown kind", link, file, func(s *storage.Share) { s.Kind = 2 }, storage.ErrInvalid},
		{"a share with nobody", withMarie, folder, func(s *storage.Share) { s.Grantee = "" }, storage.ErrInvalid},
		{"a share with oneself", withMarie, folder, func(s *storage.Share) { s.Grantee = user.ID }, storage.ErrInvalid},
		{"a share with a password", withMarie, folder, func(s *storage.Share) { s.PasswordHash = []byte("h") }, storage.ErrInvalid},
		{"a user's file drop", withMarie, folder, func(s *storage.Share) { s.Role = storage.ShareFileDrop }, storage.ErrInvalid},
		{"a node in the trash", link, gone, nil, storage.ErrNotFound},
		{"a node of another space", link, elsewhere, nil, storage.ErrNotFound},
		{"an unknown node", link, storage.Node{ID: "no-such-node"}, nil, storage.ErrNotFound},
		{"an unknown space", link, file, func(s *storage.Share) { s.SpaceID = "no-such-space" }, storage.ErrNotFound},
	}
	for _, tt := range tests {
		s := tt.base
		s.NodeID = tt.item.ID
		if tt.share != nil {
			tt.share(&s)
		}
		_, err := f.s.CreateShare(f.ctx, s)
		wantErr(t, "CreateShare of "+tt.name, err, tt.want)
	}
	shares, err := f.s.ItemShares(f.ctx, f.space.ID, "")
	wantShareIDs(t, "ItemShares after the refusals", shares, err)

	kept := []storage.Share{
		f.createShare(t, withMarie),
		f.createShare(t, f.shareWith(folder, storage.ShareWithGroup, "physics")),
		// The same name as a user and as a group are two grantees.
		f.createShare(t, f.shareWith(folder, storage.ShareWithGroup, marie.ID)),
		f.createShare(t, f.shareWith(file, storage.ShareWithUser, marie.ID)),
	}
	twice := withMarie
	twice.Role = storage.ShareViewer
	_, err = f.s.CreateShare(f.ctx, twice)
	wantErr(t, "a second share with marie", err, storage.ErrExists)
	_, err = f.s.CreateShare(f.ctx, f.shareWith(folder, storage.ShareWithGroup, "physics"))
	wantErr(t, "a second share with physics", err, storage.ErrExists)
	shares, err = f.s.ItemShares(f.ctx, f.space.ID, "")
	wantShareIDs(t, "ItemShares after the twins", shares, err, kept...)
}

// LinkByToken finds a link by its token, expired or not; a malformed,
// unknown or deleted token is ErrNotFound, as is the token of no link.
func testSharesLinkByToken(t *testing.T, f *fixture) {
	f.needShares(t)
	file := f.put(t, f.root(), "f.txt", "hello")
	link := f.createShare(t, f.linkOn(file))
	f.wantShare(t, link)
	for _, token := range []string{"", "a/b", "with space", "ü", strings.Repeat("x", 200), storage.NewLinkToken(), link.Token + "x", link.ID} {
		_, err := f.s.LinkByToken(f.ctx, token)
		wantErr(t, fmt.Sprintf("LinkByToken(%.20q)", token), err, storage.ErrNotFound)
	}
	if err := f.s.DeleteShare(f.ctx, link.ID); err != nil {
		t.Fatalf("DeleteShare: %v", err)
	}
	_, err := f.s.LinkByToken(f.ctx, link.Token)
	wantErr(t, "LinkByToken of a deleted link", err, storage.ErrNotFound)

	if _, ok := f.s.(Clock); !ok {
		return // an expired link needs the store's clock moved on
	}
	soon := f.linkOn(file)
	soon.Expires = time.Now().Add(time.Hour)
	soon = f.createShare(t, soon)
	f.after(2 * time.Hour)
	got, err := f.s.LinkByToken(f.ctx, soon.Token)
	if err != nil || !sameShare(got, soon) || !got.Expired(time.Now().Add(2*time.Hour)) {
		t.Fatalf("LinkByToken of an expired link = %+v, %v", got, err)
	}
}

// UpdateShare changes the role, password, name and expiry of a share and
// nothing else; CheckShareUpdate's refusals change nothing.
func testSharesUpdate(t *testing.T, f *fixture) {
	f.needShares(t)
	folder := f.mkdir(t, f.root(), "folder")
	file := f.put(t, folder.ID, "f.txt", "hello")
	link := f.createShare(t, f.linkOn(folder))
	withMarie := f.createShare(t, f.shareWith(file, storage.ShareWithUser, marie.ID))
	hash := cheapHash(t, "correct horse")
	expires := time.Now().Add(24 * time.Hour).Truncate(time.Second)

	update := storage.Share{Role: storage.ShareFileDrop, PasswordHash: hash, DisplayName: "drop box", Expires: expires,
		// An update changes none of these.
		ID: "other", Kind: storage.ShareWithUser, SpaceID: "other", NodeID: file.ID, Creator: marie.ID, Token: "other", Created: time.Now().Add(time.Hour)}
	link = f.wantShareUpdate(t, "of the link", link, update, func(want *storage.Share) {
		want.Role, want.PasswordHash, want.DisplayName, want.Expires = update.Role, hash, "drop box", expires
	})
	// Back to no password, no name and no expiry.
	link = f.wantShareUpdate(t, "clearing the link", link, storage.Share{Role: storage.ShareViewer}, func(want *storage.Share) {
		want.Role, want.PasswordHash, want.DisplayName, want.Expires = storage.ShareViewer, nil, "", time.Time{}
	})
	withMarie = f.wantShareUpdate(t, "of the share with marie", withMarie, storage.Share{Role: storage.ShareViewer}, func(want *storage.Share) {
		want.Role = storage.ShareViewer
	})

	refusals := []struct {
		name   string
		id     string
		update storage.Share
		want   error
	}{
		{"a password on a user's share", withMarie.ID, storage.Share{Role: storage.ShareViewer, PasswordHash: hash}, storage.ErrInvalid},
		{"a name on a user's share", withMarie.ID, storage.Share{Role: storage.ShareViewer, DisplayName: "x"}, storage.ErrInvalid},
		{"a user's file drop", withMarie.ID, storage.Share{Role: storage.ShareFileDrop}, storage.ErrInvalid},
		{"an upload role on a file", withMarie.ID, storage.Share{Role: storage.ShareUploader}, storage.ErrInvalid},
		{"no role", link.ID, storage.Share{}, storage.ErrInvalid},
		{"an expiry passed", link.ID, storage.Share{Role: storage.ShareViewer, Expires: time.Now().Add(-time.Hour)}, storage.ErrInvalid},
		{"a long name", link.ID, storage.Share{Role: storage.ShareViewer, DisplayName: strings.Repeat("n", storage.MaxShareDisplayName+1)}, storage.ErrInvalid},
		{"an unknown share", "no-such-share", storage.Share{Role: storage.ShareViewer}, storage.ErrNotFound},
	}
	for _, r := range refusals {
		_, err := f.s.UpdateShare(f.ctx, r.id, r.update)
		wantErr(t, "UpdateShare with "+r.name, err, r.want)
	}
	f.wantShare(t, link)
	f.wantShare(t, withMarie)
}

// wantShareUpdate updates share s with update and wants it changed as
// change changes it, in the answer and in the store; it returns the
// share as updated.
func (f *fixture) wantShareUpdate(t *testing.T, what string, s, update storage.Share, change func(*storage.Share)) storage.Share {
	t.Helper()
	got, err := f.s.UpdateShare(f.ctx, s.ID, update)
	want := s
	change(&want)
	if err != nil || !sameShare(got, want) {
		t.Fatalf("UpdateShare %s = %+v, %v; want %+v", what, got, err, want)
	}
	f.wantShare(t, want)
	return want
}

// DeleteShare deletes one share, which is then found nowhere; a second
// delete is ErrNotFound.
func testSharesDelete(t *testing.T, f *fixture) {
	f.needShares(t)
	folder := f.mkdir(t, f.root(), "folder")
	link := f.createShare(t, f.linkOn(folder))
	withMarie := f.createShare(t, f.shareWith(folder, storage.ShareWithUser, marie.ID))
	withPhysics := f.createShare(t, f.shareWith(folder, storage.ShareWithGroup, "physics"))
	for _, sh := range []storage.Share{link, withMarie} {
		if err := f.s.DeleteShare(f.ctx, sh.ID); err != nil {
			t.Fatalf("DeleteShare %s: %v", sh.ID, err)
		}
		f.wantNoShare(t, sh)
		wantErr(t, "a second DeleteShare", f.s.DeleteShare(f.ctx, sh.ID), storage.ErrNotFound)
	}
	f.wantShare(t, withPhysics)
	wantErr(t, "DeleteShare of an unknown id", f.s.DeleteShare(f.ctx, "no-such-share"), storage.ErrNotFound)
}

// The listings: by item, by space, by creator and by grantee (the user and
// the user's groups, never links), each in SortShares order.
func testSharesListings(t *testing.T, f *fixture) {
	f.needShares(t)
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, f.root(), "b")
	file := f.put(t, a.ID, "f.txt", "hello")
	project := f.projectSpace(t)
	p := project.mkdir(t, project.root(), "p")

	linkA := f.createShare(t, f.linkOn(a))
	marieA := f.createShare(t, f.shareWith(a, storage.ShareWithUser, marie.ID))
	physicsFile := f.createShare(t, f.shareWith(file, storage.ShareWithGroup, "physics"))
	richardB := f.createShare(t, f.shareWith(b, storage.ShareWithUser, richard.ID))
	chemistryB := f.createShare(t, f.shareWith(b, storage.ShareWithGroup, "chemistry"))
	linkFile := f.createShare(t, f.linkOn(file))
	// marie shares in the project space, with einstein.
	byMarie := project.shareWith(p, storage.ShareWithUser, user.ID)
	byMarie.Creator = marie.ID
	byMarie = project.createShare(t, byMarie)
	byMarieLink := project.linkOn(p)
	byMarieLink.Creator = marie.ID
	byMarieLink = project.createShare(t, byMarieLink)

	got, err := f.s.ItemShares(f.ctx, f.space.ID, a.ID)
	wantShareIDs(t, "ItemShares of a", got, err, linkA, marieA)
	got, err = f.s.ItemShares(f.ctx, f.space.ID, file.ID)
	wantShareIDs(t, "ItemShares of the file", got, err, physicsFile, linkFile)
	got, err = f.s.ItemShares(f.ctx, f.space.ID, f.root())
	wantShareIDs(t, "ItemShares of the root", got, err)
	got, err = f.s.ItemShares(f.ctx, f.space.ID, "")
	wantShareIDs(t, "ItemShares of the space", got, err, linkA, marieA, physicsFile, richardB, chemistryB, linkFile)
	got, err = f.s.ItemShares(f.ctx, project.space.ID, "")
	wantShareIDs(t, "ItemShares of the project", got, err, byMarie, byMarieLink)
	got, err = f.s.ItemShares(f.ctx, project.space.ID, a.ID)
	wantShareIDs(t, "ItemShares of a in the project", got, err)

	got, err = f.s.SharesBy(f.ctx, user.ID)
	wantShareIDs(t, "SharesBy einstein", got, err, linkA, marieA, physicsFile, richardB, chemistryB, linkFile)
	got, err = f.s.SharesBy(f.ctx, marie.ID)
	wantShareIDs(t, "SharesBy marie", got, err, byMarie, byMarieLink)
	got, err = f.s.SharesBy(f.ctx, richard.ID)
	wantShareIDs(t, "SharesBy richard", got, err)

	got, err = f.s.SharesWith(f.ctx, marie)
	wantShareIDs(t, "SharesWith marie", got, err, marieA, physicsFile, chemistryB)
	got, err = f.s.SharesWith(f.ctx, richard)
	wantShareIDs(t, "SharesWith richard", got, err, physicsFile, richardB)
	got, err = f.s.SharesWith(f.ctx, user)
	wantShareIDs(t, "SharesWith einstein", got, err, byMarie)
	got, err = f.s.SharesWith(f.ctx, storage.User{ID: "physics"})
	wantShareIDs(t, "SharesWith a user called as a group", got, err)
	got, err = f.s.SharesWith(f.ctx, storage.User{ID: "nobody", Groups: []string{"physics", "physics"}})
	wantShareIDs(t, "SharesWith a group named twice", got, err, physicsFile)
}

// A share names its item by id: it follows the item through a rename and
// a move within the space, and through a move of a folder above it.
func testSharesFollowMoves(t *testing.T, f *fixture) {
	f.needShares(t)
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, f.root(), "b")
	file := f.put(t, a.ID, "f.txt", "hello")
	link := f.createShare(t, f.linkOn(file))
	withMarie := f.createShare(t, f.shareWith(a, storage.ShareWithUser, marie.ID))

	moves := []storage.Transfer{
		{NodeID: file.ID, NewParentID: a.ID, NewName: "renamed.txt"},
		{NodeID: file.ID, NewParentID: b.ID, NewName: "moved.txt"},
		{NodeID: a.ID, NewParentID: b.ID, NewName: "a2"},
		{NodeID: b.ID, NewParentID: f.root(), NewName: "b2"},
	}
	for _, tr := range moves {
		if _, _, err := f.s.Move(f.ctx, f.space.ID, tr); err != nil {
			t.Fatalf("Move %+v: %v", tr, err)
		}
		f.wantShare(t, link)
		f.wantShare(t, withMarie)
		got, err := f.s.ItemShares(f.ctx, f.space.ID, file.ID)
		wantShareIDs(t, "ItemShares of the moved file", got, err, link)
	}
}

// Removing an item, or a folder above it, deletes its shares in the same
// change; restoring it from the trash revives none. Shares beside the
// removed subtree stay.
func testSharesGoWithRemove(t *testing.T, f *fixture) {
	f.needShares(t)
	for _, tc := range []struct {
		name      string
		retention storage.Retention
	}{
		{"into the trash", storage.DefaultRetention},
		{"destroyed", storage.Retention{VersionsOff: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := f.projectSpace(t)
			f.retain(tc.retention)
			d := f.deepTree(t, f.root())
			onB := f.createShare(t, f.linkOn(d.b))
			onF1 := f.createShare(t, f.shareWith(d.f1, storage.ShareWithUser, marie.ID))
			onE := f.createShare(t, f.shareWith(d.e, storage.ShareWithGroup, "physics"))
			onH := f.createShare(t, f.linkOn(d.h))
			onA := f.createShare(t, f.shareWith(d.a, storage.ShareWithUser, richard.ID))

			f.remove(t, d.f1.ID)
			f.wantNoShare(t, onF1)
			f.remove(t, d.b.ID)
			for _, sh := range []storage.Share{onB, onE} {
				f.wantNoShare(t, sh)
			}
			f.wantShare(t, onH)
			f.wantShare(t, onA)
			got, err := f.s.ItemShares(f.ctx, f.space.ID, "")
			wantShareIDs(t, "ItemShares after the removes", got, err, onH, onA)

			if !tc.retention.KeepsTrash() {
				return
			}
			f.restoreItem(t, f.trashed(t, d.b.ID))
			f.restoreItem(t, f.trashed(t, d.f1.ID))
			for _, sh := range []storage.Share{onB, onE, onF1} {
				f.wantNoShare(t, sh)
			}
			got, err = f.s.ItemShares(f.ctx, f.space.ID, "")
			wantShareIDs(t, "ItemShares after the restores", got, err, onH, onA)
			// A file created again where one was deleted takes back its
			// id from the trash, and no share with it.
			h := f.createShare(t, f.shareWith(d.h, storage.ShareWithUser, marie.ID))
			f.remove(t, d.h.ID)
			f.put(t, d.a.ID, "h", "again")
			f.wantNoShare(t, h)
			f.wantNoShare(t, onH)
			f.wantShare(t, onA)
		})
	}
}

// The node a move, a copy or a restore replaces goes with its shares; the
// node moved keeps its own, a copy gets none.
func testSharesGoWithReplacedTargets(t *testing.T, f *fixture) {
	f.needShares(t)
	a := f.mkdir(t, f.root(), "a")
	src := f.put(t, a.ID, "src.txt", "source")
	srcLink := f.createShare(t, f.linkOn(src))
	overwrite := func(n storage.Node, name string) storage.Transfer {
		return storage.Transfer{NodeID: n.ID, NewParentID: a.ID, NewName: name, Overwrite: true}
	}

	target := f.put(t, a.ID, "copy-target.txt", "target")
	targetShare := f.createShare(t, f.shareWith(target, storage.ShareWithUser, marie.ID))
	cp, replaced, err := f.s.Copy(f.ctx, f.space.ID, overwrite(src, "copy-target.txt"))
	if err != nil || !replaced {
		t.Fatalf("Copy over a shared file: replaced %v, %v", replaced, err)
	}
	f.wantNoShare(t, targetShare)
	f.wantShare(t, srcLink)
	got, err := f.s.ItemShares(f.ctx, f.space.ID, cp.ID)
	wantShareIDs(t, "ItemShares of the copy", got, err)

	folder := f.mkdir(t, a.ID, "move-target")
	inside := f.put(t, folder.ID, "inside.txt", "in")
	folderShare := f.createShare(t, f.linkOn(folder))
	insideShare := f.createShare(t, f.shareWith(inside, storage.ShareWithGroup, "physics"))
	if _, replaced, err := f.s.Move(f.ctx, f.space.ID, overwrite(src, "move-target")); err != nil || !replaced {
		t.Fatalf("Move over a shared folder: replaced %v, %v", replaced, err)
	}
	f.wantNoShare(t, folderShare)
	f.wantNoShare(t, insideShare)
	f.wantShare(t, srcLink)

	restoreTarget := f.put(t, a.ID, "restore-target.txt", "target")
	restoreShare := f.createShare(t, f.linkOn(restoreTarget))
	trashed := f.put(t, a.ID, "trashed.txt", "trashed")
	f.remove(t, trashed.ID)
	it := f.trashed(t, trashed.ID)
	_, replaced, err = f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, storage.Transfer{NodeID: trashed.ID, NewParentID: a.ID, NewName: "restore-target.txt", Overwrite: true})
	if err != nil || !replaced {
		t.Fatalf("RestoreTrash over a shared file: replaced %v, %v", replaced, err)
	}
	f.wantNoShare(t, restoreShare)
	got, err = f.s.ItemShares(f.ctx, f.space.ID, "")
	wantShareIDs(t, "ItemShares at the end", got, err, srcLink)
}

// A creator has at most MaxSharesPerCreator shares, links and shares with
// users and groups together; deleting one makes room for another.
func testSharesCreatorCap(t *testing.T, f *fixture) {
	f.needShares(t)
	capper, ok := f.s.(ShareCapper)
	if !ok {
		t.Skip("the store's share cap cannot be lowered (storetest.ShareCapper)")
	}
	const limit = 3
	capper.SetMaxSharesPerCreator(limit)
	t.Cleanup(func() { capper.SetMaxSharesPerCreator(0) })
	folder := f.mkdir(t, f.root(), "folder")
	first := f.createShare(t, f.linkOn(folder))
	f.createShare(t, f.linkOn(folder))
	f.createShare(t, f.shareWith(folder, storage.ShareWithUser, marie.ID))
	_, err := f.s.CreateShare(f.ctx, f.shareWith(folder, storage.ShareWithUser, richard.ID))
	wantErr(t, "a share over the cap", err, storage.ErrTooManyShares)
	wantErr(t, "a share over the cap", err, storage.ErrInsufficientStorage)
	_, err = f.s.CreateShare(f.ctx, f.linkOn(folder))
	wantErr(t, "a link over the cap", err, storage.ErrTooManyShares)

	// Another creator has a cap of their own.
	project := f.projectSpace(t)
	byMarie := project.linkOn(project.mkdir(t, project.root(), "p"))
	byMarie.Creator = marie.ID
	project.createShare(t, byMarie)

	if err := f.s.DeleteShare(f.ctx, first.ID); err != nil {
		t.Fatalf("DeleteShare: %v", err)
	}
	f.createShare(t, f.shareWith(folder, storage.ShareWithUser, richard.ID))
	got, err := f.s.SharesBy(f.ctx, user.ID)
	if err != nil || len(got) != limit {
		t.Fatalf("SharesBy einstein = %d shares, %v; want %d", len(got), err, limit)
	}
}

// Links made at once on one item are all kept, each with its own token.
func testSharesConcurrentLinks(t *testing.T, f *fixture) {
	f.needShares(t)
	file := f.put(t, f.root(), "f.txt", "hello")
	const n = 16
	links := make([]storage.Share, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			links[i], errs[i] = f.s.CreateShare(f.ctx, f.linkOn(file))
		}()
	}
	wg.Wait()
	tokens := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("CreateShare %d: %v", i, err)
		}
		tokens[links[i].Token] = true
	}
	if len(tokens) != n {
		t.Fatalf("%d distinct tokens of %d links", len(tokens), n)
	}
	got, err := f.s.ItemShares(f.ctx, f.space.ID, file.ID)
	wantShareIDs(t, "ItemShares", got, err, links...)
}

// A share made while its item is removed is refused (ErrNotFound) or goes
// with the item: never a live share of an item in the trash.
func testSharesRaceRemove(t *testing.T, f *fixture) {
	f.needShares(t)
	folder := f.mkdir(t, f.root(), "folder")
	const rounds = 20
	for i := range rounds {
		file := f.put(t, folder.ID, fmt.Sprintf("f%d.txt", i), "hello")
		var (
			wg        sync.WaitGroup
			link      storage.Share
			createErr error
			removeErr error
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			link, createErr = f.s.CreateShare(f.ctx, f.linkOn(file))
		}()
		go func() {
			defer wg.Done()
			// Every other round the folder above goes instead.
			if i%2 == 0 {
				removeErr = f.s.Remove(f.ctx, f.space.ID, file.ID, storage.Conditions{})
			} else {
				removeErr = f.s.Remove(f.ctx, f.space.ID, folder.ID, storage.Conditions{})
			}
		}()
		wg.Wait()
		if removeErr != nil {
			t.Fatalf("round %d: Remove: %v", i, removeErr)
		}
		if createErr == nil {
			f.wantNoShare(t, link)
		} else {
			wantErr(t, fmt.Sprintf("round %d: CreateShare", i), createErr, storage.ErrNotFound)
		}
		if i%2 == 1 {
			folder = f.mkdir(t, f.root(), fmt.Sprintf("folder%d", i))
		}
	}
	got, err := f.s.ItemShares(f.ctx, f.space.ID, "")
	wantShareIDs(t, "ItemShares after the races", got, err)
}
