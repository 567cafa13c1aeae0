package caddymodule

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func TestStoreAppPasswordsRevoke(t *testing.T) {
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	var ids []string
	for _, user := range []string{"alice", "alice", "alice", "bob"} {
		p, _, err := storage.NewAppPassword(user, "x", time.Time{}, now, storage.Scope{Space: "lab", Path: "/a", ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.CreateAppPassword(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	var forgotten []string
	k := storeAppPasswords{store: store, forget: func(id string) { forgotten = append(forgotten, id) }}
	if n, err := k.revoke(t.Context(), "alice", ids[3]); !errors.Is(err, storage.ErrNotFound) || n != 0 {
		t.Fatalf("revoking bob's password as alice's: %d, %v", n, err)
	}
	if n, err := k.revoke(t.Context(), "alice", ids[0]); err != nil || n != 1 {
		t.Fatalf("revoking one: %d, %v", n, err)
	}
	if n, err := k.revoke(t.Context(), "alice", ""); err != nil || n != 2 {
		t.Fatalf("revoking all: %d, %v", n, err)
	}
	// The three were made at one time: listed, and so revoked, by id.
	slices.Sort(forgotten[1:])
	want := slices.Clone(ids[:3])
	slices.Sort(want[1:])
	if !slices.Equal(forgotten, want) {
		t.Errorf("forgot %v, want %v", forgotten, want)
	}
	list, err := k.list(t.Context(), "bob")
	if err != nil || len(list) != 1 || list[0].ID != ids[3] {
		t.Fatalf("bob's list: %+v, %v", list, err)
	}
	var out bytes.Buffer
	if err := writeAppPasswords(&out, list); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "lab:/a read-only") || !strings.Contains(out.String(), ids[3]) {
		t.Errorf("listing:\n%s", out.String())
	}
}
