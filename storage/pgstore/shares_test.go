package pgstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// shareFixture is a store with einstein's personal space holding folder
// "docs" and, in it, the file "docs/a.txt".
type shareFixture struct {
	s      *Store
	space  storage.Space
	folder storage.Node
	file   storage.Node
}

func newShareFixture(t *testing.T, opts Options) shareFixture {
	t.Helper()
	s := openTestStore(t, opts)
	sp := personal(t, s)
	dir, err := s.Mkdir(t.Context(), sp.ID, sp.ID, "docs")
	if err != nil {
		t.Fatalf("Mkdir: %v", err)
	}
	return shareFixture{s: s, space: sp, folder: dir, file: put(t, s, sp.ID, dir.ID, "a.txt", "hello")}
}

// userShare is a share of node with user grantee, made by einstein.
func (f shareFixture) userShare(node storage.Node, grantee string, role storage.ShareRole) storage.Share {
	return storage.Share{Kind: storage.ShareWithUser, SpaceID: f.space.ID, NodeID: node.ID,
		Creator: "einstein", Role: role, Grantee: grantee}
}

// link is a link to node, made by einstein.
func (f shareFixture) link(node storage.Node, role storage.ShareRole) storage.Share {
	return storage.Share{Kind: storage.ShareLink, SpaceID: f.space.ID, NodeID: node.ID,
		Creator: "einstein", Role: role}
}

func (f shareFixture) create(t *testing.T, sh storage.Share) storage.Share {
	t.Helper()
	out, err := f.s.CreateShare(t.Context(), sh)
	if err != nil {
		t.Fatalf("CreateShare(%+v): %v", sh, err)
	}
	return out
}

// ids are the ids of shares, in order.
func ids(shares []storage.Share) []string {
	out := make([]string, len(shares))
	for i, sh := range shares {
		out[i] = sh.ID
	}
	return out
}

func sameIDs(t *testing.T, what string, got []storage.Share, want ...storage.Share) {
	t.Helper()
	if g, w := fmt.Sprint(ids(got)), fmt.Sprint(ids(want)); g != w {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

func TestShareCreateAndRead(t *testing.T) {
	f := newShareFixture(t, Options{})
	ctx := t.Context()
	expires := time.Now().Add(time.Hour).Round(0)
	hash, err := storage.HashLinkPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	l := f.link(f.folder, storage.ShareFileDrop)
	l.PasswordHash, l.DisplayName, l.Expires = hash, "drop box", expires
	link := f.create(t, l)
	if link.ID == "" || link.Token == "" || link.Created.IsZero() || !link.Expires.Equal(expires) {
		t.Fatalf("created link = %+v", link)
	}
	if err := storage.ValidLinkToken(link.Token); err != nil {
		t.Fatalf("token %q: %v", link.Token, err)
	}
	user := f.create(t, f.userShare(f.file, "marie", storage.ShareEditor))
	if user.Token != "" || user.PasswordHash != nil {
		t.Fatalf("created share with a user = %+v", user)
	}

	for _, want := range []storage.Share{link, user} {
		got, err := f.s.Share(ctx, want.ID)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Share(%s) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}
	got, err := f.s.LinkByToken(ctx, link.Token)
	if err != nil || got.ID != link.ID || !storage.CheckLinkPassword(got, "correct horse") || storage.CheckLinkPassword(got, "wrong") {
		t.Errorf("LinkByToken = %+v, %v", got, err)
	}
	for _, token := range []string{"", "no such token", "x/../y", storage.NewLinkToken()} {
		if _, err := f.s.LinkByToken(ctx, token); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("LinkByToken(%q) = %v, want ErrNotFound", token, err)
		}
	}
	if _, err := f.s.Share(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Share(nope) = %v, want ErrNotFound", err)
	}
}

func TestShareCreateRefusals(t *testing.T) {
	f := newShareFixture(t, Options{})
	ctx := t.Context()
	f.create(t, f.userShare(f.file, "marie", storage.ShareViewer))
	missing := f.userShare(f.file, "marie", storage.ShareViewer)
	missing.NodeID = "no-such-node"
	otherSpace := f.userShare(f.file, "marie", storage.ShareViewer)
	otherSpace.SpaceID = "no-such-space"
	withToken := f.link(f.file, storage.ShareViewer)
	withToken.Kind, withToken.Grantee, withToken.Token = storage.ShareWithGroup, "physics", "chosen"
	for _, tc := range []struct {
		name string
		sh   storage.Share
		want error
	}{
		{"the same grantee again", f.userShare(f.file, "marie", storage.ShareEditor), storage.ErrExists},
		{"a missing node", missing, storage.ErrNotFound},
		{"a missing space", otherSpace, storage.ErrNotFound},
		{"the root", f.userShare(storage.Node{ID: f.space.ID}, "marie", storage.ShareViewer), storage.ErrInvalid},
		{"oneself", f.userShare(f.file, "einstein", storage.ShareViewer), storage.ErrInvalid},
		{"an upload role on a file", f.link(f.file, storage.ShareUploader), storage.ErrInvalid},
		{"a group share with a token", withToken, storage.ErrInvalid},
	} {
		if _, err := f.s.CreateShare(ctx, tc.sh); !errors.Is(err, tc.want) {
			t.Errorf("%s: CreateShare = %v, want %v", tc.name, err, tc.want)
		}
	}
	if all, err := f.s.ItemShares(ctx, f.space.ID, ""); err != nil || len(all) != 1 {
		t.Errorf("ItemShares after the refusals = %d shares, %v; want the first one", len(all), err)
	}
	// Two links of one item are two links.
	f.create(t, f.link(f.file, storage.ShareViewer))
	f.create(t, f.link(f.file, storage.ShareViewer))
}

func TestShareListings(t *testing.T) {
	f := newShareFixture(t, Options{})
	ctx := t.Context()
	project, err := f.s.PutSpace(ctx, storage.Space{ID: "physics", Type: storage.SpaceProject, Name: "Physics", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"einstein": storage.RoleManager, "bohr": storage.RoleEditor}})
	if err != nil {
		t.Fatal(err)
	}
	paper := put(t, f.s, project.ID, project.ID, "paper.tex", "E=mc²")
	a := f.create(t, f.userShare(f.file, "marie", storage.ShareViewer))
	b := f.create(t, storage.Share{Kind: storage.ShareWithGroup, SpaceID: f.space.ID, NodeID: f.folder.ID,
		Creator: "einstein", Role: storage.ShareEditor, Grantee: "chemists"})
	c := f.create(t, f.link(f.folder, storage.ShareViewer))
	d := f.create(t, storage.Share{Kind: storage.ShareWithUser, SpaceID: project.ID, NodeID: paper.ID,
		Creator: "bohr", Role: storage.ShareViewer, Grantee: "marie"})
	e := f.create(t, storage.Share{Kind: storage.ShareWithGroup, SpaceID: project.ID, NodeID: paper.ID,
		Creator: "einstein", Role: storage.ShareViewer, Grantee: "marie"})

	list := func(shares []storage.Share, err error) []storage.Share {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return shares
	}
	sameIDs(t, "ItemShares(file)", list(f.s.ItemShares(ctx, f.space.ID, f.file.ID)), a)
	sameIDs(t, "ItemShares(folder)", list(f.s.ItemShares(ctx, f.space.ID, f.folder.ID)), b, c)
	sameIDs(t, "ItemShares(space)", list(f.s.ItemShares(ctx, f.space.ID, "")), a, b, c)
	sameIDs(t, "ItemShares(project)", list(f.s.ItemShares(ctx, project.ID, "")), d, e)
	sameIDs(t, "ItemShares(file of another space)", list(f.s.ItemShares(ctx, project.ID, f.file.ID)))
	sameIDs(t, "SharesBy(einstein)", list(f.s.SharesBy(ctx, "einstein")), a, b, c, e)
	sameIDs(t, "SharesBy(bohr)", list(f.s.SharesBy(ctx, "bohr")), d)
	// A group named as a user is not the user: e is with group "marie".
	sameIDs(t, "SharesWith(marie)", list(f.s.SharesWith(ctx, storage.User{ID: "marie"})), a, d)
	sameIDs(t, "SharesWith(marie, chemists)",
		list(f.s.SharesWith(ctx, storage.User{ID: "marie", Groups: []string{"chemists", "x"}})), a, b, d)
	sameIDs(t, "SharesWith(a stranger)", list(f.s.SharesWith(ctx, storage.User{ID: "nobody"})))
}

func TestShareUpdateAndDelete(t *testing.T) {
	clk := &testClock{}
	f := newShareFixture(t, Options{Now: clk.Now})
	ctx := t.Context()
	link := f.create(t, f.link(f.folder, storage.ShareViewer))
	user := f.create(t, f.userShare(f.file, "marie", storage.ShareViewer))

	hash, _ := storage.HashLinkPassword("correct horse")
	expires := clk.Now().Add(time.Hour)
	update := storage.Share{Role: storage.ShareUploader, PasswordHash: hash, DisplayName: "inbox", Expires: expires,
		// Fields an update does not change.
		Creator: "mallory", Grantee: "mallory", NodeID: f.file.ID, Token: "t"}
	got, err := f.s.UpdateShare(ctx, link.ID, update)
	if err != nil {
		t.Fatalf("UpdateShare: %v", err)
	}
	want := link
	want.Role, want.PasswordHash, want.DisplayName, want.Expires = update.Role, hash, "inbox", expires.UTC()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("UpdateShare = %+v, want %+v", got, want)
	}
	if byToken, err := f.s.LinkByToken(ctx, link.Token); err != nil || fmt.Sprint(byToken) != fmt.Sprint(want) {
		t.Errorf("LinkByToken after the update = %+v, %v", byToken, err)
	}
	// Taking the password and expiry off again.
	got, err = f.s.UpdateShare(ctx, link.ID, storage.Share{Role: storage.ShareViewer})
	if err != nil || got.PasswordHash != nil || !got.Expires.IsZero() || got.DisplayName != "" {
		t.Errorf("UpdateShare to no password = %+v, %v", got, err)
	}
	// An expired link is still found; the caller tells.
	if _, err := f.s.UpdateShare(ctx, link.ID, storage.Share{Role: storage.ShareViewer, Expires: clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	if got, err := f.s.LinkByToken(ctx, link.Token); err != nil || !got.Expired(clk.Now()) {
		t.Errorf("LinkByToken of an expired link = %+v, %v", got, err)
	}

	for _, tc := range []struct {
		name   string
		id     string
		update storage.Share
		want   error
	}{
		{"a password on a share with a user", user.ID, storage.Share{Role: storage.ShareViewer, PasswordHash: hash}, storage.ErrInvalid},
		{"an upload role on a file", user.ID, storage.Share{Role: storage.ShareUploader}, storage.ErrInvalid},
		{"a past expiry", user.ID, storage.Share{Role: storage.ShareViewer, Expires: clk.Now().Add(-time.Second)}, storage.ErrInvalid},
		{"no role", user.ID, storage.Share{}, storage.ErrInvalid},
		{"a missing share", "nope", storage.Share{Role: storage.ShareViewer}, storage.ErrNotFound},
	} {
		if _, err := f.s.UpdateShare(ctx, tc.id, tc.update); !errors.Is(err, tc.want) {
			t.Errorf("%s: UpdateShare = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got, err := f.s.Share(ctx, user.ID); err != nil || fmt.Sprint(got) != fmt.Sprint(user) {
		t.Errorf("a refused update changed %+v into %+v, %v", user, got, err)
	}

	if err := f.s.DeleteShare(ctx, link.ID); err != nil {
		t.Fatalf("DeleteShare: %v", err)
	}
	if err := f.s.DeleteShare(ctx, link.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("DeleteShare again = %v, want ErrNotFound", err)
	}
	if _, err := f.s.LinkByToken(ctx, link.Token); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("LinkByToken of a deleted link = %v, want ErrNotFound", err)
	}
	if _, err := f.s.Share(ctx, link.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Share of a deleted link = %v, want ErrNotFound", err)
	}
}

func TestShareCountPerCreator(t *testing.T) {
	f := newShareFixture(t, Options{})
	ctx := t.Context()
	// The shares up to the limit, but one, made in SQL: ten thousand
	// bcrypt-free creations would still take long.
	_, err := f.s.pool.Exec(ctx, `
		INSERT INTO shares (id, kind, space_id, node_id, creator, role, token, created_ns)
		SELECT 'bulk-' || i, $1, $2, $3, 'einstein', $4, 'token-' || i, i FROM generate_series(2, $5) AS i`,
		storage.ShareLink, f.space.ID, f.file.ID, storage.ShareViewer, storage.MaxSharesPerCreator)
	if err != nil {
		t.Fatal(err)
	}
	last := f.create(t, f.link(f.file, storage.ShareViewer))
	if _, err := f.s.CreateShare(ctx, f.link(f.file, storage.ShareViewer)); !errors.Is(err, storage.ErrTooManyShares) {
		t.Fatalf("CreateShare over the limit = %v, want ErrTooManyShares", err)
	}
	// Another creator is not counted against einstein.
	other := f.userShare(f.file, "marie", storage.ShareViewer)
	other.Creator = "bohr"
	f.create(t, other)
	if err := f.s.DeleteShare(ctx, last.ID); err != nil {
		t.Fatal(err)
	}
	f.create(t, f.link(f.file, storage.ShareViewer))
}

// TestSharesFollowTheirItem: a share follows its item through a move and
// goes with it when it leaves the space; a restore does not bring it back.
func TestSharesFollowTheirItem(t *testing.T) {
	for _, keepsTrash := range []bool{true, false} {
		t.Run(fmt.Sprintf("trash=%v", keepsTrash), func(t *testing.T) {
			f := newShareFixture(t, Options{})
			if !keepsTrash {
				f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
			}
			ctx := t.Context()
			sub, err := f.s.Mkdir(ctx, f.space.ID, f.folder.ID, "sub")
			if err != nil {
				t.Fatal(err)
			}
			deep := put(t, f.s, f.space.ID, sub.ID, "deep.txt", "x")
			other := put(t, f.s, f.space.ID, f.space.ID, "other.txt", "y")
			onDeep := f.create(t, f.userShare(deep, "marie", storage.ShareViewer))
			onSub := f.create(t, f.link(sub, storage.ShareViewer))
			onFile := f.create(t, f.link(f.file, storage.ShareViewer))
			onOther := f.create(t, f.link(other, storage.ShareViewer))

			// A move keeps them.
			moved, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: sub.ID, NewParentID: f.space.ID, NewName: "moved"})
			if err != nil {
				t.Fatal(err)
			}
			sameIDs(t, "ItemShares after the move", mustList(t)(f.s.ItemShares(ctx, f.space.ID, "")), onDeep, onSub, onFile, onOther)

			// Copy replacing a.txt takes its shares, not the source's.
			_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: other.ID, NewParentID: f.folder.ID, NewName: "a.txt", Overwrite: true})
			if err != nil {
				t.Fatal(err)
			}
			sameIDs(t, "ItemShares after the copy", mustList(t)(f.s.ItemShares(ctx, f.space.ID, "")), onDeep, onSub, onOther)

			// Remove of a folder above takes the shares of all below.
			if err := f.s.Remove(ctx, f.space.ID, moved.ID, storage.Conditions{}); err != nil {
				t.Fatal(err)
			}
			sameIDs(t, "ItemShares after the remove", mustList(t)(f.s.ItemShares(ctx, f.space.ID, "")), onOther)
			for _, gone := range []storage.Share{onDeep, onSub, onFile} {
				if _, err := f.s.Share(ctx, gone.ID); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Share of a removed item = %v, want ErrNotFound", err)
				}
			}
			if _, err := f.s.LinkByToken(ctx, onSub.Token); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("LinkByToken of a removed item = %v, want ErrNotFound", err)
			}
			sameIDs(t, "SharesWith(marie) after the remove", mustList(t)(f.s.SharesWith(ctx, storage.User{ID: "marie"})))

			// Move replacing other.txt takes its shares.
			_, _, err = f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: f.folder.ID, NewParentID: f.space.ID, NewName: "other.txt", Overwrite: true})
			if err != nil {
				t.Fatal(err)
			}
			sameIDs(t, "ItemShares after the replacing move", mustList(t)(f.s.ItemShares(ctx, f.space.ID, "")))
			if keepsTrash {
				restoreAll(t, f)
				sameIDs(t, "ItemShares after the restores", mustList(t)(f.s.ItemShares(ctx, f.space.ID, "")))
			}
			if count := shareRows(t, f.s); count != 0 {
				t.Errorf("%d share rows left", count)
			}
		})
	}
}

// restoreAll restores every trash item of the fixture's space to its
// root, under its key.
func restoreAll(t *testing.T, f shareFixture) {
	t.Helper()
	items, err := f.s.TrashItems(t.Context(), f.space.ID)
	if err != nil || len(items) == 0 {
		t.Fatalf("TrashItems = %v, %v", items, err)
	}
	for i, it := range items {
		_, _, err := f.s.RestoreTrash(t.Context(), f.space.ID, it.Key,
			storage.Transfer{NodeID: it.Node.ID, NewParentID: f.space.ID, NewName: fmt.Sprintf("restored-%d", i)})
		if err != nil {
			t.Fatalf("RestoreTrash(%s): %v", it.Location, err)
		}
	}
}

func mustList(t *testing.T) func([]storage.Share, error) []storage.Share {
	return func(shares []storage.Share, err error) []storage.Share {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return shares
	}
}

// shareRows counts the rows of shares, live or not.
func shareRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM shares`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestShareCreateRacesRemove: creating shares on two nodes while a third
// removes their folder never leaves a share on a trashed item.
func TestShareCreateRacesRemove(t *testing.T) {
	nodes := openNodes(t, 2)
	ctx := t.Context()
	sp := personal(t, nodes[0])
	var created atomic.Int32
	for round := range 10 {
		dir, err := nodes[0].Mkdir(ctx, sp.ID, sp.ID, fmt.Sprintf("round-%d", round))
		if err != nil {
			t.Fatal(err)
		}
		file := put(t, nodes[0], sp.ID, dir.ID, "f", "x")
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				target := file
				if i%2 == 0 {
					target = dir
				}
				sh := storage.Share{Kind: storage.ShareWithUser, SpaceID: sp.ID, NodeID: target.ID,
					Creator: "einstein", Role: storage.ShareViewer, Grantee: fmt.Sprintf("user-%d", i)}
				_, err := nodes[i%2].CreateShare(ctx, sh)
				if err == nil {
					created.Add(1)
				} else if !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("CreateShare: %v", err)
				}
			}()
		}
		if err := nodes[1].Remove(ctx, sp.ID, dir.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	t.Logf("%d of 40 shares were made before their item went", created.Load())
	if n := shareRows(t, nodes[0]); n != 0 {
		t.Errorf("%d share rows left on trashed items", n)
	}
}
