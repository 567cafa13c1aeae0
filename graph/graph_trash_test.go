package graph

import (
	"context"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestDriveQuotaDeleted: a deleted file's bytes are the drive's
// quota.deleted and stay in used until the trash is emptied.
func TestDriveQuotaDeleted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.put("lab", "kept.bin", 100)
	e.put("lab", "deleted.bin", 300)
	f, err := e.store.Child(ctx, "lab", "lab", "deleted.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Remove(ctx, "lab", f.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	quotaOfLab := func() quota {
		d, ok := driveByID(e.drives("marie"), testStorageID+"$lab")
		if !ok {
			t.Fatal("no drive lab")
		}
		return d.Quota
	}
	if got, want := quotaOfLab(), (quota{Total: 1000, Used: 400, Remaining: 600, Deleted: 300, State: "normal"}); got != want {
		t.Errorf("after a delete: quota %+v, want %+v", got, want)
	}
	if err := e.store.EmptyTrash(ctx, "lab"); err != nil {
		t.Fatal(err)
	}
	if got, want := quotaOfLab(), (quota{Total: 1000, Used: 100, Remaining: 900, Deleted: 0, State: "normal"}); got != want {
		t.Errorf("after emptying the trash: quota %+v, want %+v", got, want)
	}
}
