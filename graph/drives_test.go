package graph

import (
	"context"
	"math"
	"net/http"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestDrivesVisibility(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		user string
		want []string // drive aliases, in order
	}{
		// einstein manages "archive" too, but it is not configured.
		{"einstein", []string{"personal/einstein", "project/physics"}},
		{"marie", []string{"personal/marie", "project/physics", "project/lab-notes"}},
		{"richard", []string{"personal/richard"}},
		{"richard:chemists", []string{"personal/richard", "project/physics"}},
		{"richard:physics", []string{"personal/richard"}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			var got []string
			for _, d := range e.drives(tt.user) {
				got = append(got, d.DriveAlias)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("drives %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDriveShape(t *testing.T) {
	e := newEnv(t)
	ds := e.drives("einstein")
	personalID := testStorageID + "$" + e.personalID("einstein")
	p, ok := driveByID(ds, personalID)
	if !ok {
		t.Fatalf("no personal drive %s in %+v", personalID, ds)
	}
	if p.DriveType != "personal" || p.Name != "Einstein" || p.Root.ID != personalID ||
		p.Root.WebDavURL != "https://cloud.example.org/dav/spaces/"+personalID {
		t.Fatalf("personal drive %+v", p)
	}
	if p.Owner == nil || p.Owner.User.ID != "einstein" || p.Owner.User.DisplayName != "Einstein" {
		t.Fatalf("personal owner %+v", p.Owner)
	}
	if len(p.Root.ETag) < 3 || p.Root.ETag[0] != '"' || p.Root.ETag[len(p.Root.ETag)-1] != '"' {
		t.Fatalf("root etag %q is not a quoted etag", p.Root.ETag)
	}
	if p.LastModifiedDateTime == nil {
		t.Fatal("no lastModifiedDateTime")
	}
	pr, ok := driveByID(ds, testStorageID+"$physics")
	if !ok {
		t.Fatalf("no physics drive in %+v", ds)
	}
	if pr.DriveType != "project" || pr.Name != "Physics" || pr.Owner != nil {
		t.Fatalf("project drive %+v", pr)
	}
}

func TestDriveWebDavURLScheme(t *testing.T) {
	e := newEnv(t)
	rec := e.do("einstein", http.MethodGet, "http://localhost:9200/graph/v1beta1/me/drives")
	wantStatus(t, rec, http.StatusOK)
	want := `"webDavUrl":"http://localhost:9200/dav/spaces/storage-1$physics"`
	if !contains(rec.Body.String(), want) {
		t.Fatalf("body lacks %s:\n%s", want, rec.Body.String())
	}
}

func TestDriveQuota(t *testing.T) {
	tests := []struct {
		name  string
		user  string
		space string // "" for the personal space
		put   int
		want  quota
	}{
		{"no quota", "einstein", "physics", 100, quota{Total: 0, Used: 100, Remaining: math.MaxInt64, State: "normal"}},
		{"empty", "marie", "lab", 0, quota{Total: 1000, Used: 0, Remaining: 1000, State: "normal"}},
		{"normal", "marie", "lab", 750, quota{Total: 1000, Used: 750, Remaining: 250, State: "normal"}},
		{"nearing", "marie", "lab", 900, quota{Total: 1000, Used: 900, Remaining: 100, State: "nearing"}},
		{"critical", "marie", "lab", 990, quota{Total: 1000, Used: 990, Remaining: 10, State: "critical"}},
		{"exceeded", "marie", "lab", 1000, quota{Total: 1000, Used: 1000, Remaining: 0, State: "exceeded"}},
		{"personal quota", "richard", "", 1000, quota{Total: 4000, Used: 1000, Remaining: 3000, State: "normal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			space := tt.space
			if space == "" {
				space = e.personalID(tt.user)
			}
			if tt.put > 0 {
				e.put(space, "data.bin", tt.put)
			}
			d, ok := driveByID(e.drives(tt.user), testStorageID+"$"+space)
			if !ok {
				t.Fatalf("no drive %s", space)
			}
			if d.Quota != tt.want {
				t.Fatalf("quota %+v, want %+v", d.Quota, tt.want)
			}
		})
	}
}

// TestQuotaOfUndo: the trash and versions count in used, as the stores
// count them against the quota; deleted is the trash's part.
func TestQuotaOfUndo(t *testing.T) {
	u := storage.Usage{Files: 500, Props: 10, Trash: 200, Versions: 90, Reserved: 100}
	for _, tt := range []struct {
		name  string
		limit int64
		want  quota
	}{
		{"no quota", storage.NoQuota, quota{Total: 0, Used: 800, Remaining: math.MaxInt64, Deleted: 200, State: "normal"}},
		{"quota", 1000, quota{Total: 1000, Used: 800, Remaining: 100, Deleted: 200, State: "nearing"}},
		{"over quota", 700, quota{Total: 700, Used: 800, Remaining: 0, Deleted: 200, State: "exceeded"}},
	} {
		if got := quotaOf(tt.limit, u); got != tt.want {
			t.Errorf("%s: quotaOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestDriveETagChangesAfterPut(t *testing.T) {
	e := newEnv(t)
	for _, space := range []string{"physics", e.personalID("einstein")} {
		id := testStorageID + "$" + space
		before, _ := driveByID(e.drives("einstein"), id)
		e.put(space, "notes.txt", 5)
		after, _ := driveByID(e.drives("einstein"), id)
		if before.Root.ETag == "" || before.Root.ETag == after.Root.ETag {
			t.Fatalf("%s: root etag %q before and %q after a PUT", space, before.Root.ETag, after.Root.ETag)
		}
	}
}

func TestQuotaState(t *testing.T) {
	tests := []struct {
		limit, used int64
		want        string
	}{
		{0, 0, "normal"},
		{0, 1, "exceeded"},
		{100, 75, "normal"},
		{100, 76, "nearing"},
		{100, 90, "nearing"},
		{100, 91, "critical"},
		{100, 99, "critical"},
		{100, 100, "exceeded"},
		{100, 150, "exceeded"},
		{math.MaxInt64, math.MaxInt64 / 2, "normal"},
	}
	for _, tt := range tests {
		if got := quotaState(tt.limit, tt.used); got != tt.want {
			t.Errorf("quotaState(%d, %d) = %q, want %q", tt.limit, tt.used, got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Physics", "physics"},
		{"Lab Notes", "lab-notes"},
		{"  R&D -- 2026 ", "r-d-2026"},
		{"Ärzte", "ärzte"},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := slug(tt.in); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A configured project id that names somebody's personal space must not
// list that space to others: only project spaces are taken from the list.
func TestConfiguredIDOfPersonalSpace(t *testing.T) {
	e := newEnv(t)
	marie := e.personalID("marie")
	h, err := New(Config{Store: e.store, Shares: e.store, Directory: e.store, User: testUser, Spaces: storage.NewSpacePolicy([]string{marie, "physics"})})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	for _, d := range e.drives("einstein") {
		if d.ID == testStorageID+"$"+marie {
			t.Fatalf("marie's personal space listed to einstein: %+v", d)
		}
	}
	if got := len(e.drives("marie")); got != 2 {
		t.Fatalf("marie has %d drives, want her personal space and physics", got)
	}
}

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
