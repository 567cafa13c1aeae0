package graph

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/davspaces/davspaces/shareid"
)

// ownCloud Web reads a drive after every upload, delete and restore
// (packages/web-client/src/graph/drives/drives.ts getDrive) and opens a
// "Shared with me" entry by its mount point's item
// (packages/web-client/src/graph/driveItems/driveItems.ts getDriveItem).
func TestGetDriveAndItem(t *testing.T) {
	e := newEnv(t)
	personal := e.personalID("einstein")
	folderDrive, folder := e.folder(personal, "drafts")
	invite := map[string]any{
		"recipients": []map[string]string{{"objectId": "marie", "@libre.graph.recipient.type": "user"}},
		"roles":      []string{RoleViewerID},
	}
	var made struct{ Value []linkPermission }
	wantStatus(t, e.doJSON("einstein", http.MethodPost, itemURL(folderDrive, folder, "invite"), invite, &made), http.StatusOK)
	mountID := shareid.Mount(made.Value[0].ID)

	drive := func(id string) string { return "/graph/v1beta1/drives/" + url.PathEscape(id) }
	item := func(driveID, itemID string) string { return drive(driveID) + "/items/" + url.PathEscape(itemID) }
	tests := []struct {
		name, user, method, target string
		status                     int
		id, parentPath             string
	}{
		{"own personal space", "einstein", http.MethodGet, drive(folderDrive), http.StatusOK, folderDrive, ""},
		{"v1.0 alike", "einstein", http.MethodGet, "/graph/v1.0/drives/" + url.PathEscape(folderDrive), http.StatusOK, folderDrive, ""},
		{"another's personal space", "marie", http.MethodGet, drive(folderDrive), http.StatusNotFound, "", ""},
		{"project member", "marie", http.MethodGet, drive(testStorageID + "$physics"), http.StatusOK, testStorageID + "$physics", ""},
		{"group member", "richard:chemists", http.MethodGet, drive(testStorageID + "$physics"), http.StatusOK, testStorageID + "$physics", ""},
		{"non-member", "richard", http.MethodGet, drive(testStorageID + "$physics"), http.StatusNotFound, "", ""},
		{"unconfigured space", "einstein", http.MethodGet, drive(testStorageID + "$archive"), http.StatusNotFound, "", ""},
		{"missing space", "einstein", http.MethodGet, drive(testStorageID + "$nothing"), http.StatusNotFound, "", ""},
		{"another storage", "einstein", http.MethodGet, drive("other$" + personal), http.StatusNotFound, "", ""},
		{"shares drive", "richard", http.MethodGet, drive(shareid.DriveID), http.StatusOK, shareid.DriveID, ""},
		{"mount point drive", "marie", http.MethodGet, drive(mountID), http.StatusOK, mountID, ""},
		{"another's mount point", "richard", http.MethodGet, drive(mountID), http.StatusNotFound, "", ""},
		{"drive by POST", "einstein", http.MethodPost, drive(folderDrive), http.StatusMethodNotAllowed, "", ""},
		{"without a user", "", http.MethodGet, drive(folderDrive), http.StatusUnauthorized, "", ""},
		{"own item", "einstein", http.MethodGet, item(folderDrive, folder), http.StatusOK, folder, "."},
		{"item shared with me", "marie", http.MethodGet, item(folderDrive, folder), http.StatusOK, folder, ""},
		{"item of another", "richard", http.MethodGet, item(folderDrive, folder), http.StatusNotFound, "", ""},
		{"item of another drive", "einstein", http.MethodGet, item(testStorageID+"$physics", folder), http.StatusNotFound, "", ""},
		{"mount point item", "marie", http.MethodGet, item(shareid.DriveID, mountID), http.StatusOK, mountID, ""},
		{"another's mount point item", "richard", http.MethodGet, item(shareid.DriveID, mountID), http.StatusNotFound, "", ""},
		{"item by DELETE", "einstein", http.MethodDelete, item(folderDrive, folder), http.StatusMethodNotAllowed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.target)
			wantStatus(t, rec, tt.status)
			if tt.status != http.StatusOK {
				return
			}
			var got struct {
				ID              string `json:"id"`
				ParentReference *struct {
					Path string `json:"path"`
				} `json:"parentReference"`
				RemoteItem *struct {
					ID string `json:"id"`
				} `json:"remoteItem"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("decoding %s: %v", rec.Body, err)
			}
			if got.ID != tt.id {
				t.Errorf("id %q, want %q in %s", got.ID, tt.id, rec.Body)
			}
			if tt.parentPath != "" && (got.ParentReference == nil || got.ParentReference.Path != tt.parentPath) {
				t.Errorf("parent path in %s, want %q", rec.Body, tt.parentPath)
			}
			if tt.name == "mount point item" && (got.RemoteItem == nil || got.RemoteItem.ID != folder) {
				t.Errorf("mount point item %s: no remoteItem %s", rec.Body, folder)
			}
		})
	}
}
