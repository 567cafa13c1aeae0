package davhandler

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestAccessLetters(t *testing.T) {
	tests := []struct {
		name         string
		access       access
		folder, file string
	}{
		{"none", memberAccess(storage.RoleNone), "", ""},
		{"viewer", memberAccess(storage.RoleViewer), "", ""},
		{"editor", memberAccess(storage.RoleEditor), "DNVCK", "DNVW"},
		{"manager", memberAccess(storage.RoleManager), "RDNVCKZP", "RDNVWZP"},
		{"share viewer", shareAccess(storage.ShareViewer), "S", "S"},
		{"share uploader", shareAccess(storage.ShareUploader), "SCK", "S"},
		{"share editor", shareAccess(storage.ShareEditor), "SDNVCK", "SDNVW"},
		{"link viewer", linkAccess(storage.ShareViewer), "", ""},
		{"link uploader", linkAccess(storage.ShareUploader), "CK", ""},
		{"link editor", linkAccess(storage.ShareEditor), "DNVCK", "DNVW"},
		{"file drop", linkAccess(storage.ShareFileDrop), "CK", ""},
	}
	for _, tt := range tests {
		if got := permissions(tt.access, true); got != tt.folder {
			t.Errorf("%s: folder letters %q, want %q", tt.name, got, tt.folder)
		}
		if got := permissions(tt.access, false); got != tt.file {
			t.Errorf("%s: file letters %q, want %q", tt.name, got, tt.file)
		}
	}
	// The mount point of a share has "M" after "S", as oCIS orders them.
	mount := string(appendPermissions([]byte("<"), shareAccess(storage.ShareEditor), true, true))
	if mount != "<SMDNVCK" {
		t.Errorf("mount point letters %q, want %q", mount, "<SMDNVCK")
	}
}

// TestAccessQuestions checks each role against each question a method
// asks: links never give more than their role.
func TestAccessQuestions(t *testing.T) {
	type answers struct{ read, list, create, change, del, share, lock, trash, purge, unlockAny bool }
	tests := []struct {
		name   string
		access access
		want   answers
	}{
		{"none", memberAccess(storage.RoleNone), answers{}},
		{"viewer", memberAccess(storage.RoleViewer), answers{read: true, list: true}},
		{"editor", memberAccess(storage.RoleEditor), answers{true, true, true, true, true, true, true, true, false, false}},
		{"manager", memberAccess(storage.RoleManager), answers{true, true, true, true, true, true, true, true, true, true}},
		{"share viewer", shareAccess(storage.ShareViewer), answers{read: true, list: true}},
		{"share uploader", shareAccess(storage.ShareUploader), answers{read: true, list: true, create: true}},
		{"share editor", shareAccess(storage.ShareEditor), answers{read: true, list: true, create: true, change: true, del: true, lock: true}},
		{"file drop", shareAccess(storage.ShareFileDrop), answers{create: true}},
	}
	for _, tt := range tests {
		a := tt.access
		got := answers{a.mayRead(), a.mayList(), a.mayCreate(), a.mayChange(), a.mayDelete(), a.mayShare(),
			a.mayLock(), a.mayUseTrash(), a.mayPurge(), a.mayUnlockAny()}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestMayPlace(t *testing.T) {
	uploader := shareAccess(storage.ShareUploader)
	editor := shareAccess(storage.ShareEditor)
	free := &target{access: uploader}
	taken := &target{access: uploader, exists: true}
	if !free.mayPlace(false) || !free.mayPlace(true) {
		t.Error("an uploader may not add a new name")
	}
	if taken.mayPlace(false) || taken.mayPlace(true) {
		t.Error("an uploader may overwrite")
	}
	if e := (&target{access: editor, exists: true}); !e.mayPlace(false) || !e.mayPlace(true) {
		t.Error("an editor may not overwrite")
	}
}
