package integration

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/shareid"
)

// TestAppPasswordScopes: alice, an OpenID Connect user, makes app
// passwords narrowed to what one client needs. A read-only one is refused
// every change with 403 on every door (WebDAV with its XML error body,
// TUS, bulk and chunked uploads, the trash-bin, OCS, Graph, auth-app) and
// reads as before; rclone copies down with it but not up. One scoped to
// her folder Photos answers 404 for everything outside it on every base
// path and every method of the hostile matrix, sees only her personal
// drive in Graph, her folder in a search and what was deleted from it in
// the trash-bin, and reaches and writes the folder itself, with rclone
// too. Nothing outside changes.
func TestAppPasswordScopes(t *testing.T) {
	t.Parallel()
	rclone := requirePeer(t, "rclone")
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: labSpace})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}

	personal := alice.prop("/webdav/", ocNS, "spaceid")
	alice.expect(http.StatusCreated, "PUT", "/webdav/doc.txt", "alice's document")
	alice.expect(http.StatusCreated, "MKCOL", "/webdav/Other", "")
	alice.expect(http.StatusCreated, "PUT", "/webdav/Other/x.txt", "outside")
	alice.expect(http.StatusCreated, "MKCOL", "/webdav/Photos", "")
	alice.expect(http.StatusCreated, "PUT", "/webdav/Photos/in.txt", "inside")
	alice.expect(http.StatusCreated, "PUT", "/webdav/Photos-old.txt", "a neighbour named alike")
	alice.expect(http.StatusCreated, "PUT", "/dav/spaces/lab/lab.txt", "the lab's")
	docID := alice.prop("/webdav/doc.txt", ocNS, "fileid")
	otherID := alice.prop("/webdav/Other/", ocNS, "fileid")
	photosID := alice.prop("/webdav/Photos/", ocNS, "fileid")
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	alice.expect(http.StatusCreated, "PUT", "/webdav/pic.png", pic.String())
	picID := alice.prop("/webdav/pic.png", ocNS, "fileid")
	alice.expect(http.StatusCreated, "PUT", "/webdav/Other/old.txt", "deleted outside")
	alice.expect(http.StatusNoContent, "DELETE", "/webdav/Other/old.txt", "")

	newPassword := func(query string) string {
		t.Helper()
		_, body := alice.expect(http.StatusOK, "POST", "/auth-app/tokens?"+query, "")
		var made struct{ Token string }
		if err := json.Unmarshal([]byte(body), &made); err != nil || made.Token == "" {
			t.Fatalf("POST /auth-app/tokens?%s answered %s", query, body)
		}
		return made.Token
	}
	readOnly := newPassword("label=backup&readonly=true&space=" + url.QueryEscape(personal))
	folder := newPassword("label=camera&path=/Photos/&space=" + url.QueryEscape(personal))

	t.Run("creation", func(t *testing.T) {
		a := alice.in(t)
		for query, status := range map[string]int{
			"space=" + url.QueryEscape(personal) + "&path=/Missing": http.StatusNotFound,
			"space=" + url.QueryEscape(personal) + "&path=/doc.txt": http.StatusNotFound,
			"space=nobodys-space":       http.StatusNotFound,
			"space=other-storage%24lab": http.StatusNotFound,
			"path=/Photos":              http.StatusBadRequest,
			"space=lab&path=/a/../b":    http.StatusBadRequest,
			"readonly=perhaps":          http.StatusBadRequest,
		} {
			a.expect(status, "POST", "/auth-app/tokens?label=refused&"+query, "")
		}
		// A scoped password makes and revokes none.
		for _, pw := range []string{readOnly, folder} {
			if resp, _ := basicClient(t, s.URL, pw).do("POST", "/auth-app/tokens?label=wider", ""); resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST /auth-app/tokens with a scoped password: %d, want 403", resp.StatusCode)
			}
		}
		_, body := a.expect(http.StatusOK, "GET", "/auth-app/tokens", "")
		var list []struct {
			Label, Space, Path string
			ReadOnly           bool `json:"read_only"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 2 {
			t.Fatalf("GET /auth-app/tokens: %s", body)
		}
		if l := list[0]; l.Label != "backup" || l.Space != personal || l.Path != "" || !l.ReadOnly {
			t.Errorf("the backup password is listed as %+v", l)
		}
		if l := list[1]; l.Label != "camera" || l.Space != personal || l.Path != "/Photos" || l.ReadOnly {
			t.Errorf("the camera password is listed as %+v", l)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		ro := basicClient(t, s.URL, readOnly)
		space := "/dav/spaces/" + url.PathEscape(personal)
		lockBody := `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
		for _, tc := range []struct {
			method, path, body string
			hdr                []string
		}{
			{"PUT", "/webdav/doc.txt", "overwritten", nil},
			{"PUT", "/webdav/new.txt", "new", nil},
			{"PUT", "/remote.php/dav/files/alice/new.txt", "new", nil},
			{"PUT", space + "/new.txt", "new", nil},
			{"PUT", "/dav/spaces/" + docID, "overwritten", nil},
			{"MKCOL", "/webdav/new", "", nil},
			{"DELETE", "/webdav/doc.txt", "", nil},
			{"MOVE", "/webdav/doc.txt", "", []string{"Destination", s.URL + "/webdav/moved.txt"}},
			{"COPY", "/webdav/doc.txt", "", []string{"Destination", s.URL + "/webdav/copied.txt"}},
			{"PROPPATCH", "/webdav/doc.txt", `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:p>v</z:p></d:prop></d:set></d:propertyupdate>`, nil},
			{"LOCK", "/webdav/doc.txt", lockBody, nil},
			{"UNLOCK", "/webdav/doc.txt", "", []string{"Lock-Token", "<opaquelocktoken:e71d4fae-5dec-22d6-fea5-00a0c91e6be4>"}},
			// TUS creation, the bulk upload, chunked uploads NG and v1.
			{"POST", space + "/", "", []string{"Tus-Resumable", "1.0.0", "Upload-Length", "3", "Upload-Metadata", "filename dHVzLnR4dA=="}},
			{"POST", "/remote.php/dav/bulk", "", []string{"Content-Type", "multipart/related; boundary=b"}},
			{"MKCOL", "/remote.php/dav/uploads/alice/transfer-1", "", nil},
			{"PUT", "/remote.php/webdav/chunked.txt-chunking-4711-2-0", "ab", []string{"OC-Chunked", "1"}},
			// The trash-bin: purge it.
			{"DELETE", "/remote.php/dav/spaces/trash-bin/" + escapeID(personal), "", nil},
			// A version: restore it.
			{"COPY", "/dav/meta/" + docID + "/v/1", "", []string{"Destination", s.URL + "/dav/meta/" + docID + "/restore/doc.txt"}},
		} {
			resp, body := ro.in(t).do(tc.method, tc.path, tc.body, tc.hdr...)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "<d:error") {
				t.Errorf("%s %s with a read-only password: %d, want 403 with a WebDAV error\n%s", tc.method, tc.path, resp.StatusCode, body)
			}
		}
		for _, tc := range []struct{ method, path string }{
			{"POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?path=/doc.txt&shareType=3&format=json"},
			{"DELETE", "/ocs/v2.php/core/apppassword?format=json"},
			{"POST", "/graph/v1beta1/drives/" + url.PathEscape(personal) + "/items/" + url.PathEscape(docID) + "/createLink"},
			{"DELETE", "/auth-app/tokens?token=" + folder[:16]},
		} {
			resp, body := ro.in(t).do(tc.method, tc.path, "", "OCS-APIRequest", "true")
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s with a read-only password: %d, want 403\n%s", tc.method, tc.path, resp.StatusCode, body)
			}
		}
		// Reading goes on.
		ro.expect(http.StatusOK, "GET", "/webdav/doc.txt", "")
		ro.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "1")
		ro.expect(http.StatusOK, "GET", "/graph/v1.0/me/drives", "")
		ro.expect(http.StatusOK, "GET", "/ocs/v2.php/cloud/user?format=json", "", "OCS-APIRequest", "true")
		if got := alice.prop("/webdav/doc.txt", "DAV:", "getcontentlength"); got != "16" {
			t.Errorf("doc.txt is %s bytes after the refused changes", got)
		}
		alice.expect(http.StatusNotFound, "GET", "/webdav/new.txt", "")

		r := newRcloneRemote(t, rclone, s.URL+"/remote.php/webdav/", "alice", readOnly)
		down := t.TempDir()
		r.mustRun(t, "copy", "dav:Photos", down)
		if got, err := os.ReadFile(filepath.Join(down, "in.txt")); err != nil || string(got) != "inside" {
			t.Errorf("rclone copied down %q, %v", got, err)
		}
		up := filepath.Join(t.TempDir(), "up.txt")
		writeFile(t, up, "up")
		if out, err := r.run(t, "copyto", up, "dav:up.txt", "--low-level-retries", "1", "--retries", "1"); err == nil {
			t.Errorf("rclone copied up with a read-only password:\n%s", out)
		}
		alice.expect(http.StatusNotFound, "GET", "/webdav/up.txt", "")
	})

	t.Run("folder", func(t *testing.T) {
		fc := basicClient(t, s.URL, folder)
		space := "/dav/spaces/" + personal
		// target is a path outside the folder; byPath when it can be a
		// Destination (the others are 400 there for anybody); control, if
		// set, a path that does not exist whose answer the target's must
		// be (the trash-bin answers 405 for a method it does not take
		// before it looks for the item).
		type target struct {
			path, control string
			byPath        bool
		}
		var targets []target
		for _, base := range []string{
			"/webdav", "/remote.php/webdav", "/dav/files/alice", "/remote.php/dav/files/alice",
			space, "/remote.php/dav/spaces/" + escapeID(personal), "/dav/spaces/lab",
		} {
			for _, p := range []string{"/", "/doc.txt", "/Other/", "/Other/x.txt", "/Photos-old.txt", "/missing.txt"} {
				targets = append(targets, target{path: base + p, byPath: true})
			}
		}
		outsideKey := undoSpace{c: alice.in(t), ref: personal}.trashItem("Other/old.txt").key
		trashPath := escapePath("/dav/spaces/trash-bin/" + personal + "/")
		targets = append(targets,
			target{path: "/dav/spaces/" + docID, byPath: true},
			target{path: "/dav/spaces/" + otherID + "/x.txt", byPath: true},
			target{path: "/dav/spaces/" + shareid.DriveID + "/", byPath: true},
			target{path: "/dav/meta/" + docID},
			target{path: "/dav/meta/" + docID + "/v"},
			target{path: trashPath + outsideKey, control: trashPath + "1700000000000000000.none"},
		)
		for _, m := range hostileMethods {
			for _, tg := range targets {
				if strings.HasSuffix(m.name, "-onto") && !tg.byPath {
					continue
				}
				want := http.StatusNotFound
				if tg.control != "" {
					resp, _ := m.send(fc.in(t), s.URL, tg.control)
					want = resp.StatusCode
				}
				resp, body := m.send(fc.in(t), s.URL, tg.path)
				if resp.StatusCode != want {
					t.Errorf("%s %s with a password for /Photos: %d, want %d\n%s", m.name, tg.path, resp.StatusCode, want, body)
				}
			}
		}
		// Out of the folder by Destination.
		for _, m := range []string{"COPY", "MOVE"} {
			resp, _ := fc.do(m, "/webdav/Photos/in.txt", "", "Destination", s.URL+"/webdav/stolen.txt")
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s out of /Photos: %d, want 404", m, resp.StatusCode)
			}
		}
		alice.expect(http.StatusNotFound, "GET", "/webdav/stolen.txt", "")
		alice.expect(http.StatusOK, "GET", "/webdav/Photos/in.txt", "")

		// The doors of ownCloud Web's journeys and of the Nextcloud apps:
		// a drive's item, a file's versions and preview by id are as
		// absent outside the folder as anything else, and the trash lists
		// nothing deleted outside it.
		alice.expect(http.StatusOK, "GET", "/index.php/core/preview?fileId="+url.QueryEscape(picID)+"&x=32&y=32", "")
		for _, path := range []string{
			"/graph/v1beta1/drives/" + url.PathEscape(personal) + "/items/" + url.PathEscape(docID),
			"/index.php/core/preview?fileId=" + url.QueryEscape(picID) + "&x=32&y=32",
		} {
			fc.expect(http.StatusNotFound, "GET", path, "")
		}
		fc.expect(http.StatusNotFound, "PROPFIND", "/remote.php/dav/versions/alice/versions/"+url.PathEscape(docID), "", "Depth", "1")
		if _, trash := fc.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/dav/trashbin/alice/trash", "", "Depth", "1"); strings.Contains(trash, "old.txt") {
			t.Errorf("Nextcloud's trash-bin path lists an item deleted outside /Photos:\n%s", trash)
		}

		// Graph shows the one drive, OCS shares nothing outside.
		_, drives := fc.expect(http.StatusOK, "GET", "/graph/v1.0/me/drives", "")
		if !strings.Contains(drives, personal) || strings.Contains(drives, `"lab"`) || strings.Count(drives, `"driveType"`) != 1 {
			t.Errorf("me/drives with a password for /Photos:\n%s", drives)
		}
		fc.expect(http.StatusNotFound, "GET", "/graph/v1beta1/drives/"+url.PathEscape(personal)+"/items/"+url.PathEscape(docID)+"/permissions", "")
		fc.expect(http.StatusNotFound, "POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?path=/doc.txt&shareType=3&format=json", "", "OCS-APIRequest", "true")
		fc.expect(http.StatusOK, "POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?path=/Photos/in.txt&shareType=3&format=json", "", "OCS-APIRequest", "true")
		_, listed := fc.expect(http.StatusOK, "GET", "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", "", "OCS-APIRequest", "true")
		if !strings.Contains(listed, "in.txt") {
			t.Errorf("the share made inside /Photos is not listed:\n%s", listed)
		}
		alice.expect(http.StatusOK, "POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?path=/doc.txt&shareType=3&format=json", "", "OCS-APIRequest", "true")
		_, listed = fc.expect(http.StatusOK, "GET", "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", "", "OCS-APIRequest", "true")
		if strings.Contains(listed, "doc.txt") {
			t.Errorf("a share outside /Photos is listed:\n%s", listed)
		}

		// A search across spaces finds only what is in the folder.
		alice.expect(http.StatusCreated, "PUT", "/webdav/Photos/findme-in.txt", "x")
		alice.expect(http.StatusCreated, "PUT", "/webdav/findme-out.txt", "x")
		alice.expect(http.StatusCreated, "PUT", "/dav/spaces/lab/findme-lab.txt", "x")
		hrefs, _ := fc.report("/dav/spaces", searchFiles("findme", 50))
		if len(hrefs) != 1 || !strings.HasSuffix(hrefs[0], "/Photos/findme-in.txt") {
			t.Errorf("search with a password for /Photos found %q", hrefs)
		}

		// Its trash-bin holds what was deleted inside: restored and
		// purged there, while the rest of the trash stays.
		alice.expect(http.StatusCreated, "PUT", "/webdav/Photos/gone.txt", "deleted inside")
		alice.expect(http.StatusNoContent, "DELETE", "/webdav/Photos/gone.txt", "")
		trash := undoSpace{c: fc.in(t), ref: personal}
		items := trash.trash()
		if len(items) != 1 || items[0].location != "Photos/gone.txt" {
			t.Fatalf("the trash through a password for /Photos lists %+v", items)
		}
		fc.expect(http.StatusCreated, "MOVE", trash.trashPath(items[0].key), "", "Destination", s.URL+"/webdav/Photos/gone.txt")
		alice.expect(http.StatusOK, "GET", "/webdav/Photos/gone.txt", "")
		alice.expect(http.StatusNoContent, "DELETE", "/webdav/Photos/gone.txt", "")
		fc.expect(http.StatusNoContent, "DELETE", trash.trashPath(""), "")
		if all := (undoSpace{c: alice.in(t), ref: personal}); all.hasTrashItem("Photos/gone.txt") || !all.hasTrashItem("Other/old.txt") {
			t.Errorf("emptying the trash through a password for /Photos left %+v", all.trash())
		}

		// Inside, everything works.
		fc.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/Photos/", "", "Depth", "1")
		fc.expect(http.StatusMultiStatus, "PROPFIND", "/dav/spaces/"+photosID+"/", "", "Depth", "1")
		fc.expect(http.StatusCreated, "PUT", "/webdav/Photos/new.jpg", "jpeg")
		fc.expect(http.StatusCreated, "MKCOL", "/webdav/Photos/2026", "")
		fc.expect(http.StatusCreated, "MOVE", "/webdav/Photos/new.jpg", "", "Destination", s.URL+"/webdav/Photos/2026/new.jpg")
		r := newRcloneRemote(t, rclone, s.URL+"/remote.php/webdav/Photos/", "alice", folder)
		local := filepath.Join(t.TempDir(), "from-camera.jpg")
		writeFile(t, local, "a photo")
		r.mustRun(t, "copyto", local, "dav:2026/from-camera.jpg")
		if out := r.mustRunQuiet(t, "lsf", "-R", "dav:"); !strings.Contains(out, "2026/from-camera.jpg") || !strings.Contains(out, "in.txt") {
			t.Errorf("rclone lsf -R inside /Photos:\n%s", out)
		}
		alice.expect(http.StatusOK, "GET", "/webdav/Photos/2026/from-camera.jpg", "")
		if got := alice.prop("/webdav/doc.txt", "DAV:", "getcontentlength"); got != "16" {
			t.Errorf("doc.txt is %s bytes after the refused changes", got)
		}
	})
}

// basicClient is a client signing in with Basic alice:password.
func basicClient(t *testing.T, base, password string) *client {
	return &client{t: t, base: base, http: &http.Client{Transport: withBasic{"alice", password}}}
}

// withBasic adds Basic credentials to every request.
type withBasic struct{ user, password string }

func (b withBasic) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.password)
	return http.DefaultTransport.RoundTrip(r)
}
