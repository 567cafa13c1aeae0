package boltstore

import (
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Expired uploads release what they reserved and count no more against
// their user's cap once the sweep has ended them.
func TestExpiredUploadsReleaseTheirReservation(t *testing.T) {
	f := newFixture(t)
	f.s.SetPersonalQuota(100)
	us := storage.UploadSession{SpaceID: f.space.ID, User: f.space.Owner, Length: 60,
		Target: storage.Commit{ParentID: f.root(), Name: "f"}, Expires: f.clk.Now().Add(time.Hour), OpenLimit: 2}
	if _, err := f.s.CreateSession(ctx, us); err != nil {
		t.Fatal(err)
	}
	cu := storage.ChunkedUpload{ID: "c", User: f.space.Owner, SpaceID: f.space.ID, Length: 40,
		Expires: f.clk.Now().Add(time.Hour), OpenLimit: 2}
	if _, err := f.s.CreateChunkedUpload(ctx, cu); err != nil {
		t.Fatal(err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Reserved != 100 {
		t.Fatalf("usage = %+v, %v", u, err)
	}
	_, err := f.s.CreateSession(ctx, us)
	wantErr(t, err, storage.ErrTooManyUploads)
	f.clk.Advance(2 * time.Hour)
	if _, err := f.s.purgeSessions(100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.purgeChunkedUploads(100); err != nil {
		t.Fatal(err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Reserved != 0 {
		t.Fatalf("usage after expiry = %+v, %v", u, err)
	}
	us.Expires = f.clk.Now().Add(time.Hour)
	if _, err := f.s.CreateSession(ctx, us); err != nil {
		t.Fatalf("an upload after the expired ones ended: %v", err)
	}
}
