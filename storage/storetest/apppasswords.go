package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/storage"
)

// appPasswordTests are the conformance tests of storage.AppPasswords.
var appPasswordTests = []conformanceTest{
	{"AppPasswordsKeptListedAndChecked", testAppPasswordsKept},
	{"AppPasswordDeletedOnlyByItsUser", testAppPasswordDelete},
	{"AppPasswordTouchedOncePerInterval", testAppPasswordTouch},
	{"AppPasswordsCappedPerUserConcurrently", testAppPasswordsCap},
	{"AppPasswordsExpiredForgottenAtCreation", testAppPasswordsExpired},
	{"AppPasswordsRefuseInvalid", testAppPasswordsInvalid},
}

// appPasswordStart is a time of the passwords: the stores keep whole
// microseconds.
func appPasswordStart() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// appPasswordIDs numbers the ids newAppPassword gives.
var appPasswordIDs atomic.Int64

// newAppPassword makes a record of a password of owner created at now,
// with a new id and a stand-in hash: bcrypt's cost is not what these
// tests pin, and a hundred hashes would take seconds.
func newAppPassword(t *testing.T, owner, label string, now time.Time) storage.AppPassword {
	t.Helper()
	// Hexadecimal digits written as the letters a to p.
	id := strings.Map(func(r rune) rune {
		if r <= '9' {
			return 'a' + r - '0'
		}
		return 'k' + r - 'a'
	}, fmt.Sprintf("%016x", appPasswordIDs.Add(1)))
	return storage.AppPassword{ID: id, User: owner, Label: label, Hash: []byte("stand-in"), Created: now}
}

func (f *fixture) createAppPassword(t *testing.T, p storage.AppPassword) {
	t.Helper()
	if err := f.s.CreateAppPassword(f.ctx, p); err != nil {
		t.Fatalf("CreateAppPassword: %v", err)
	}
}

func (f *fixture) appPassword(t *testing.T, id string) storage.AppPassword {
	t.Helper()
	p, err := f.s.AppPassword(f.ctx, id)
	if err != nil {
		t.Fatalf("AppPassword: %v", err)
	}
	return p
}

func testAppPasswordsKept(t *testing.T, f *fixture) {
	now := appPasswordStart()
	p, password, err := storage.NewAppPassword(user.ID, "rclone on the laptop", now.Add(72*time.Hour), now, storage.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	p.Space, p.Path, p.ReadOnly = "space-1", "/Photos", true
	// The checks below compare at the cost the hash names: the lowest
	// spares the race detector seconds of CPU; what is pinned is that the
	// store keeps the hash as made.
	_, secret, _ := storage.SplitAppPassword(password)
	if p.Hash, err = bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost); err != nil {
		t.Fatal(err)
	}
	f.createAppPassword(t, p)
	older := newAppPassword(t, user.ID, "older", now.Add(-time.Hour))
	f.createAppPassword(t, older)
	f.createAppPassword(t, newAppPassword(t, "marie", "hers", now))

	got := f.appPassword(t, p.ID)
	if got.User != p.User || got.Label != p.Label || !got.Created.Equal(p.Created) || !got.Expires.Equal(p.Expires) ||
		!got.LastUsed.IsZero() || got.Space != p.Space || got.Path != p.Path || !got.ReadOnly {
		t.Fatalf("AppPassword = %+v, want %+v", got, p)
	}
	id, secret, ok := storage.SplitAppPassword(password)
	if !ok || id != p.ID || !storage.CheckAppPassword(got, secret) || storage.CheckAppPassword(got, secret[1:]+"a") {
		t.Fatal("the kept hash does not check the password alone")
	}
	list, err := f.s.AppPasswords(f.ctx, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != older.ID || list[1].ID != p.ID || !list[0].Expires.IsZero() {
		t.Fatalf("AppPasswords = %+v, want the older then the newer", list)
	}
	if list, _ := f.s.AppPasswords(f.ctx, "nobody"); len(list) != 0 {
		t.Fatalf("a user without passwords has %d", len(list))
	}
	wantErr(t, "AppPassword of an unknown id", func() error { _, err := f.s.AppPassword(f.ctx, "aaaaaaaaaaaaaaaa"); return err }(), storage.ErrNotFound)
	wantErr(t, "CreateAppPassword of a taken id", f.s.CreateAppPassword(f.ctx, p), storage.ErrExists)
}

func testAppPasswordDelete(t *testing.T, f *fixture) {
	now := appPasswordStart()
	p := newAppPassword(t, user.ID, "", now)
	f.createAppPassword(t, p)
	wantErr(t, "DeleteAppPassword by another user", f.s.DeleteAppPassword(f.ctx, "marie", p.ID), storage.ErrNotFound)
	f.appPassword(t, p.ID)
	if err := f.s.DeleteAppPassword(f.ctx, user.ID, p.ID); err != nil {
		t.Fatalf("DeleteAppPassword: %v", err)
	}
	_, err := f.s.AppPassword(f.ctx, p.ID)
	wantErr(t, "AppPassword after its deletion", err, storage.ErrNotFound)
	wantErr(t, "DeleteAppPassword twice", f.s.DeleteAppPassword(f.ctx, user.ID, p.ID), storage.ErrNotFound)
	if list, _ := f.s.AppPasswords(f.ctx, user.ID); len(list) != 0 {
		t.Fatalf("%d passwords listed after the deletion", len(list))
	}
}

func testAppPasswordTouch(t *testing.T, f *fixture) {
	now := appPasswordStart()
	p := newAppPassword(t, user.ID, "", now)
	f.createAppPassword(t, p)
	for _, tc := range []struct {
		at, want time.Time
	}{
		{now.Add(time.Second), now.Add(time.Second)},
		{now.Add(30 * time.Second), now.Add(time.Second)},
		{now.Add(time.Second + storage.AppPasswordTouchInterval), now.Add(time.Second + storage.AppPasswordTouchInterval)},
	} {
		if err := f.s.TouchAppPassword(f.ctx, p.ID, tc.at); err != nil {
			t.Fatalf("TouchAppPassword: %v", err)
		}
		if got := f.appPassword(t, p.ID).LastUsed; !got.Equal(tc.want) {
			t.Fatalf("touched at %s: last used %s, want %s", tc.at, got, tc.want)
		}
	}
	if err := f.s.TouchAppPassword(f.ctx, "aaaaaaaaaaaaaaaa", now); err != nil {
		t.Fatalf("TouchAppPassword of a password gone: %v", err)
	}
}

func testAppPasswordsCap(t *testing.T, f *fixture) {
	now := appPasswordStart()
	// Hashing is what costs: made before, outside the race.
	extra := 20
	passwords := make([]storage.AppPassword, storage.MaxAppPasswordsPerUser+extra)
	for i := range passwords {
		passwords[i] = newAppPassword(t, user.ID, fmt.Sprint(i), now)
	}
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		created, capped int
	)
	for _, p := range passwords {
		wg.Go(func() {
			err := f.s.CreateAppPassword(f.ctx, p)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, storage.ErrInsufficientStorage):
				capped++
			default:
				t.Errorf("CreateAppPassword: %v", err)
			}
		})
	}
	wg.Wait()
	if created != storage.MaxAppPasswordsPerUser || capped != extra {
		t.Fatalf("%d created, %d refused; want %d and %d", created, capped, storage.MaxAppPasswordsPerUser, extra)
	}
	f.createAppPassword(t, newAppPassword(t, "marie", "another user's", now))
}

func testAppPasswordsExpired(t *testing.T, f *fixture) {
	now := appPasswordStart()
	for i := range storage.MaxAppPasswordsPerUser {
		p := newAppPassword(t, user.ID, "", now)
		p.Expires = now.Add(time.Hour + time.Duration(i)*time.Microsecond)
		f.createAppPassword(t, p)
	}
	wantErr(t, "CreateAppPassword past the cap", f.s.CreateAppPassword(f.ctx, newAppPassword(t, user.ID, "", now)), storage.ErrInsufficientStorage)
	// Two hours on every one has expired: the next creation forgets them.
	f.createAppPassword(t, newAppPassword(t, user.ID, "", now.Add(2*time.Hour)))
	if list, _ := f.s.AppPasswords(f.ctx, user.ID); len(list) != 1 {
		t.Fatalf("%d passwords kept, want the new one alone", len(list))
	}
}

func testAppPasswordsInvalid(t *testing.T, f *fixture) {
	now := appPasswordStart()
	valid := newAppPassword(t, user.ID, "", now)
	for _, tc := range []struct {
		name   string
		change func(*storage.AppPassword)
	}{
		{"a short id", func(p *storage.AppPassword) { p.ID = p.ID[1:] }},
		{"an id in capitals", func(p *storage.AppPassword) { p.ID = "AAAAAAAAAAAAAAAA" }},
		{"no user", func(p *storage.AppPassword) { p.User = "" }},
		{"a long label", func(p *storage.AppPassword) { p.Label = string(make([]byte, storage.MaxAppPasswordLabel+1)) }},
		{"a label not UTF-8", func(p *storage.AppPassword) { p.Label = "\xff" }},
		{"no hash", func(p *storage.AppPassword) { p.Hash = nil }},
		{"an expiry before its creation", func(p *storage.AppPassword) { p.Expires = p.Created }},
		{"a scope's folder without its space", func(p *storage.AppPassword) { p.Path = "/Photos" }},
		{"a scope's folder not clean", func(p *storage.AppPassword) { p.Space, p.Path = "space-1", "/a/../b" }},
	} {
		p := valid
		tc.change(&p)
		wantErr(t, "CreateAppPassword with "+tc.name, f.s.CreateAppPassword(f.ctx, p), storage.ErrInvalid)
	}
	if list, _ := f.s.AppPasswords(f.ctx, user.ID); len(list) != 0 {
		t.Fatalf("%d passwords kept after invalid ones", len(list))
	}
}
