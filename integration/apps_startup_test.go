package integration

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"testing"
)

// The calls the Nextcloud and ownCloud apps make at login besides WebDAV,
// through the real Caddy on Caddyfile.example: the avatar
// (nextcloud/desktop src/libsync/networkjobs.cpp AvatarJob; the Android
// app's /index.php/avatar), the user with the quota (nextcloud/desktop
// src/gui/userinfo.cpp; Nextcloud's Android library
// GetUserInfoRemoteOperation, -3 without a limit), the user status the
// capabilities say is off, the spaces root, 405 as from oCIS, and
// Nextcloud's paths of the trash, of a file's versions and of a preview.
func TestAppsStartupCalls(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	marie := newClient(t, s.URL, "marie")
	marie.expect(http.StatusOK, http.MethodGet, "/ocs/v1.php/cloud/user?format=json", "")
	einstein.expect(http.StatusCreated, http.MethodPut, "/remote.php/webdav/hello.txt", "hello")

	for _, tc := range []struct {
		path   string
		status int
		size   int
	}{
		{"/remote.php/dav/avatars/einstein/128.png", http.StatusOK, 128},
		{"/index.php/avatar/einstein/64", http.StatusOK, 64},
		{"/index.php/avatar/marie/32/dark", http.StatusOK, 32},
		// Nobody of that name signed in: as if there were nobody.
		{"/index.php/avatar/nobody/64", http.StatusNotFound, 0},
		{"/index.php/avatar/richard/64", http.StatusNotFound, 0},
	} {
		resp, body := einstein.expect(tc.status, http.MethodGet, tc.path, "")
		if tc.size == 0 {
			continue
		}
		img, err := png.Decode(bytes.NewReader([]byte(body)))
		if err != nil || resp.Header.Get("Content-Type") != "image/png" || img.Bounds().Dx() != tc.size {
			t.Errorf("GET %s: %s, %v", tc.path, resp.Header.Get("Content-Type"), err)
		}
	}
	newClient(t, s.URL, "").expect(http.StatusUnauthorized, http.MethodGet, "/index.php/avatar/einstein/64", "")

	var user struct {
		OCS struct {
			Data struct {
				ID    string `json:"id"`
				Quota *struct {
					Used  int64 `json:"used"`
					Quota int64 `json:"quota"`
				} `json:"quota"`
			} `json:"data"`
		} `json:"ocs"`
	}
	for _, p := range []string{"/ocs/v1.php/cloud/user?format=json", "/ocs/v2.php/cloud/users/einstein?format=json"} {
		_, body := einstein.expect(http.StatusOK, http.MethodGet, p, "", "OCS-APIREQUEST", "true")
		if err := json.Unmarshal([]byte(body), &user); err != nil {
			t.Fatal(err)
		}
		if d := user.OCS.Data; d.ID != "einstein" || d.Quota == nil || d.Quota.Used < 5 || d.Quota.Quota != -3 {
			t.Errorf("GET %s: %s", p, body)
		}
	}
	einstein.expect(http.StatusNotFound, http.MethodGet, "/ocs/v2.php/cloud/users/marie?format=json", "", "OCS-APIREQUEST", "true")

	var caps struct {
		OCS struct {
			Data struct {
				Capabilities struct {
					UserStatus *struct {
						Enabled bool `json:"enabled"`
					} `json:"user_status"`
				} `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	resp, body := einstein.expect(http.StatusOK, http.MethodGet, "/ocs/v1.php/cloud/capabilities?format=json", "", "OCS-APIREQUEST", "true")
	if err := json.Unmarshal([]byte(body), &caps); err != nil || caps.OCS.Data.Capabilities.UserStatus == nil || caps.OCS.Data.Capabilities.UserStatus.Enabled {
		t.Errorf("user_status in %s", body)
	}
	// oCIS: "listing is disabled, no auth will change that".
	einstein.expect(http.StatusMethodNotAllowed, "PROPFIND", "/remote.php/dav/spaces/", "", "Depth", "1")

	// Nextcloud's versions of a file (the Android app's
	// ReadFileVersionsRemoteOperation, RestoreFileVersionRemoteOperation).
	einstein.expect(http.StatusNoContent, http.MethodPut, "/remote.php/webdav/hello.txt", "hello again")
	fileID := einstein.prop("/remote.php/webdav/hello.txt", ocNS, "fileid")
	versions := einstein.propfind("/remote.php/dav/versions/einstein/versions/"+url.PathEscape(fileID), "1", "")
	if len(versions) != 2 {
		t.Fatalf("versions %+v", versions)
	}
	einstein.expect(http.StatusNoContent, "MOVE", versions[1].href, "", "Destination", s.URL+"/remote.php/dav/versions/einstein/restore/target")
	if _, got := einstein.expect(http.StatusOK, http.MethodGet, "/remote.php/webdav/hello.txt", ""); got != "hello" {
		t.Errorf("after restoring the version: %q", got)
	}

	// Nextcloud's trash bin (ReadTrashbinFolderRemoteOperation,
	// RestoreTrashbinFileRemoteOperation).
	einstein.expect(http.StatusNoContent, http.MethodDelete, "/remote.php/webdav/hello.txt", "")
	trash := einstein.propfind("/remote.php/dav/trashbin/einstein/trash", "1",
		`<d:propfind xmlns:d="DAV:" xmlns:nc="http://nextcloud.org/ns"><d:prop><nc:trashbin-filename/><nc:trashbin-original-location/></d:prop></d:propfind>`)
	if len(trash) != 2 || trash[1].props["http://nextcloud.org/ns trashbin-filename"] != "hello.txt" {
		t.Fatalf("trash %+v", trash)
	}
	einstein.expect(http.StatusCreated, "MOVE", trash[1].href, "", "Destination", s.URL+"/remote.php/dav/trashbin/einstein/restore/hello.txt")
	einstein.expect(http.StatusOK, http.MethodGet, "/remote.php/webdav/hello.txt", "")
	marie.expect(http.StatusNotFound, "PROPFIND", "/remote.php/dav/trashbin/einstein/trash", "", "Depth", "1")

	// A preview by the file's id (the Android app's ThumbnailsCacheManager).
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 300, 200))); err != nil {
		t.Fatal(err)
	}
	einstein.expect(http.StatusCreated, http.MethodPut, "/remote.php/webdav/pic.png", pic.String())
	picID := einstein.prop("/remote.php/webdav/pic.png", ocNS, "fileid")
	resp, body = einstein.expect(http.StatusOK, http.MethodGet, "/index.php/core/preview?fileId="+url.QueryEscape(picID)+"&x=64&y=64&a=1", "")
	if resp.Header.Get("Content-Type") != "image/png" || len(body) == 0 {
		t.Errorf("core preview: %s, %d bytes", resp.Header.Get("Content-Type"), len(body))
	}
	marie.expect(http.StatusNotFound, http.MethodGet, "/index.php/core/preview?fileId="+url.QueryEscape(picID)+"&x=64&y=64", "")
}
