package storage

import (
	"errors"
	"testing"
)

func TestUsageFreeAndCheck(t *testing.T) {
	u := Usage{Files: 300, Props: 100, Reserved: 200}
	if free, limited := u.Free(1000); free != 400 || !limited {
		t.Fatalf("Free(1000) = %d, %v", free, limited)
	}
	if free, _ := u.Free(500); free != 0 {
		t.Fatalf("Free over the quota = %d, want 0", free)
	}
	if _, limited := u.Free(NoQuota); limited {
		t.Fatal("NoQuota is limited")
	}
	if err := u.Check(1000, 400); err != nil {
		t.Fatalf("Check of what is free: %v", err)
	}
	if err := u.Check(1000, 401); !errors.Is(err, ErrInsufficientStorage) {
		t.Fatalf("Check past what is free: %v", err)
	}
	if err := u.Check(100, 0); err != nil {
		t.Fatalf("a change that grows nothing in a space over its quota: %v", err)
	}
	if err := u.Check(NoQuota, 1<<40); err != nil {
		t.Fatalf("Check without a quota: %v", err)
	}
}

func TestReservations(t *testing.T) {
	if got := UploadReservation(UploadSession{Length: 100, Replaces: 30}); got != 70 {
		t.Fatalf("UploadReservation = %d, want 70", got)
	}
	if got := UploadReservation(UploadSession{Length: 10, Replaces: 30}); got != 0 {
		t.Fatalf("UploadReservation of a shrinking file = %d, want 0", got)
	}
	for _, c := range []struct{ announced, stored, replaces, want int64 }{
		{100, 0, 0, 100}, {0, 50, 0, 50}, {100, 150, 0, 150}, {100, 50, 40, 60}, {0, 10, 40, 0},
	} {
		if got := ChunkedReservation(c.announced, c.stored, c.replaces); got != c.want {
			t.Fatalf("ChunkedReservation(%d, %d, %d) = %d, want %d", c.announced, c.stored, c.replaces, got, c.want)
		}
	}
}

func TestOpenUploadsAndDiskChecks(t *testing.T) {
	if err := CheckOpenUploads(2, 3); err != nil {
		t.Fatalf("below the cap: %v", err)
	}
	if err := CheckOpenUploads(3, 3); !errors.Is(err, ErrTooManyUploads) || !errors.Is(err, ErrInsufficientStorage) {
		t.Fatalf("at the cap: %v", err)
	}
	if err := CheckOpenUploads(1000, 0); err != nil {
		t.Fatalf("without a cap: %v", err)
	}
	if err := CheckDiskFree(1000, 600, 400); err != nil {
		t.Fatalf("what the disk holds: %v", err)
	}
	if err := CheckDiskFree(1000, 600, 401); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("past the disk: %v", err)
	}
}

func TestEffectiveQuota(t *testing.T) {
	tests := []struct {
		name            string
		sp              Space
		personalDefault int64
		want            int64
	}{
		{"personal without quota", Space{Type: SpacePersonal, Quota: NoQuota}, 100, 100},
		{"personal, no default", Space{Type: SpacePersonal, Quota: NoQuota}, 0, NoQuota},
		{"personal with its own quota", Space{Type: SpacePersonal, Quota: 50}, 100, 50},
		{"personal with quota 0", Space{Type: SpacePersonal, Quota: 0}, 100, 0},
		{"project without quota", Space{Type: SpaceProject, Quota: NoQuota}, 100, NoQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EffectiveQuota(tt.sp, tt.personalDefault).Quota; got != tt.want {
				t.Fatalf("EffectiveQuota = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestUsageCheckWithin(t *testing.T) {
	u := Usage{Files: 300, Props: 100, Reserved: 200}
	tests := []struct {
		quota int64
		want  error
	}{
		{NoQuota, nil},
		{600, nil},
		{599, ErrInsufficientStorage},
		{0, ErrInsufficientStorage},
	}
	for _, tt := range tests {
		if err := u.CheckWithin(tt.quota); !errors.Is(err, tt.want) {
			t.Errorf("CheckWithin(%d) = %v, want %v", tt.quota, err, tt.want)
		}
	}
}

func TestUsageUndo(t *testing.T) {
	u := Usage{Files: 100, Props: 10, Reserved: 20, Trash: 30, Versions: 40}
	if got := u.Undo(); got != 70 {
		t.Fatalf("Undo = %d, want 70", got)
	}
	if got := u.Used(); got != 180 {
		t.Fatalf("Used = %d, want 180 (files, props, trash and versions; not reserved)", got)
	}
	if free, _ := u.Free(250); free != 50 {
		t.Fatalf("Free = %d, want 50", free)
	}
}

func TestUsageShortfall(t *testing.T) {
	for _, tc := range []struct {
		name         string
		u            Usage
		quota, delta int64
		want         int64
	}{
		{"fits", Usage{Files: 50, Trash: 30}, 100, 10, 0},
		{"fits exactly", Usage{Files: 50, Trash: 30}, 100, 20, 0},
		{"short, undo makes room", Usage{Files: 50, Trash: 30}, 100, 40, 20},
		{"short by all undo", Usage{Files: 50, Trash: 30}, 100, 50, 30},
		{"even all undo would not do", Usage{Files: 50, Trash: 30}, 100, 51, 0},
		{"versions count as undo", Usage{Files: 50, Versions: 30}, 100, 45, 25},
		{"reserved is not free", Usage{Files: 50, Trash: 30, Reserved: 10}, 100, 20, 10},
		{"props are not undo", Usage{Props: 60, Trash: 30}, 100, 40, 30},
		{"props are not undo, past it", Usage{Props: 60, Trash: 30}, 100, 41, 0},
		{"shrinking", Usage{Files: 50, Trash: 50}, 100, -10, 0},
		{"no growth", Usage{Files: 50, Trash: 50}, 100, 0, 0},
		{"no quota", Usage{Files: 50, Trash: 50}, NoQuota, 1 << 40, 0},
		// A quota lowered below what the space keeps: the excess must go too,
		// or the check after the evictions would refuse.
		{"over quota, undo covers the excess", Usage{Files: 50, Trash: 80}, 100, 10, 40},
		{"over quota, undo does not cover it", Usage{Files: 120, Trash: 30}, 100, 10, 0},
		{"over quota by files alone", Usage{Files: 120, Trash: 80}, 100, 10, 0},
	} {
		got := tc.u.Shortfall(tc.quota, tc.delta)
		if got != tc.want {
			t.Errorf("%s: Shortfall(%d, %d) = %d, want %d", tc.name, tc.quota, tc.delta, got, tc.want)
			continue
		}
		if got == 0 {
			continue
		}
		// Freeing the shortfall from the undo makes the change pass Check.
		after := tc.u
		after.Trash -= min(got, after.Trash)
		after.Versions -= got - (tc.u.Trash - after.Trash)
		if err := after.Check(tc.quota, tc.delta); err != nil {
			t.Errorf("%s: after freeing %d bytes of undo: %v", tc.name, got, err)
		}
	}
}

// TestUsageRoom: an upload is refused early exactly when the store would
// refuse it after its evictions, and the room shown is what it can have.
func TestUsageRoom(t *testing.T) {
	for _, tc := range []struct {
		u            Usage
		quota, delta int64
	}{
		{Usage{Files: 50, Trash: 30}, 100, 10},
		{Usage{Files: 50, Trash: 30}, 100, 50},
		{Usage{Files: 50, Trash: 30}, 100, 51},
		{Usage{Files: 50, Versions: 30, Reserved: 10}, 100, 40},
		{Usage{Files: 50, Versions: 30, Reserved: 10}, 100, 41},
		{Usage{Props: 60, Trash: 30}, 100, 41},
		{Usage{Files: 50, Trash: 80}, 100, 10},
		{Usage{Files: 120, Trash: 80}, 100, 10},
		{Usage{Files: 50, Trash: 50}, NoQuota, 1 << 40},
	} {
		storeRefuses := tc.u.Shortfall(tc.quota, tc.delta) == 0 && tc.u.Check(tc.quota, tc.delta) != nil
		err := tc.u.CheckRoom(tc.quota, tc.delta)
		if (err != nil) != storeRefuses || (err != nil && !errors.Is(err, ErrInsufficientStorage)) {
			t.Errorf("%+v: CheckRoom(%d, %d) = %v, the store refuses: %v", tc.u, tc.quota, tc.delta, err, storeRefuses)
		}
		room, limited := tc.u.Room(tc.quota)
		if limited && (tc.delta <= room) == storeRefuses {
			t.Errorf("%+v: Room(%d) = %d for %d bytes, the store refuses: %v", tc.u, tc.quota, room, tc.delta, storeRefuses)
		}
	}
}
