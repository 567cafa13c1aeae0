package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 17, finding 4, through the real Caddy: in a space with a 1 MiB
// quota, unfinished uploads of all three kinds reserve their bytes, so a
// burst of TUS sessions and NG uploads cannot make the server keep many
// times the quota, and what the quota shows leaves them out; on both
// deployments.
func TestUnfinishedUploadsCountAgainstTheQuota(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"personal_quota 1MiB"}}, uploadsReserveScenario)
}

func uploadsReserveScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	const part = 100 << 10 // 100 KiB

	// 40 TUS sessions of 60 MiB: none fits.
	for i := range 40 {
		resp, _, err := c.tusCreate("/webdav/", fmt.Sprint("huge", i), 60<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusInsufficientStorage {
			t.Fatalf("TUS session %d of 60 MiB in a 1 MiB space: %d, want 507", i, resp.StatusCode)
		}
	}
	// 40 sessions of 100 KiB, each sent in full: ten fit.
	accepted := 0
	for i := range 40 {
		resp, _, err := c.tusCreate("/webdav/", fmt.Sprint("s", i), part, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusCreated:
			accepted++
			upload := uploadPath(t, s.URL, resp.Header.Get("Location"))
			if resp, _, err := c.tusPatch(upload, 0, make([]byte, part-1)); err != nil || resp.StatusCode != http.StatusNoContent {
				t.Fatalf("PATCH of an accepted session: %v %v", resp, err)
			}
		case http.StatusInsufficientStorage:
		default:
			t.Fatalf("TUS session %d: %d", i, resp.StatusCode)
		}
	}
	if accepted != 10 {
		t.Fatalf("%d sessions of 100 KiB taken in a 1 MiB space, want 10", accepted)
	}
	// 40 NG uploads: each starts, but no part fits any more.
	for i := range 40 {
		base := fmt.Sprintf("/remote.php/dav/uploads/einstein/t%d", i)
		c.expect(http.StatusCreated, "MKCOL", base, "")
		c.expect(http.StatusInsufficientStorage, http.MethodPut, base+"/1", strings.Repeat("x", part))
	}
	// OC-Total-Length past the free quota is refused at MKCOL.
	c.expect(http.StatusInsufficientStorage, "MKCOL", "/remote.php/dav/uploads/einstein/big", "", "OC-Total-Length", "200000")

	if got := c.prop("/webdav/", "DAV:", "quota-available-bytes"); got != strconv.Itoa(1<<20-10*part) {
		t.Fatalf("quota-available-bytes = %s, want %d (the quota less the reservations)", got, 1<<20-10*part)
	}
	_, body := c.expect(http.StatusOK, http.MethodGet, "/graph/v1.0/me/drives", "")
	var drives struct {
		Value []struct {
			DriveType string `json:"driveType"`
			Quota     struct {
				Remaining int64 `json:"remaining"`
			} `json:"quota"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(body), &drives); err != nil {
		t.Fatal(err)
	}
	for _, d := range drives.Value {
		if d.DriveType == "personal" && d.Quota.Remaining != 1<<20-10*part {
			t.Fatalf("Graph quota.remaining = %d, want %d", d.Quota.Remaining, 1<<20-10*part)
		}
	}
	if s.Root == "" {
		return // the cluster keeps its bytes in the bucket
	}
	kept := bytesUnder(t, filepath.Join(s.Root, "sessions"), filepath.Join(s.Root, "chunks"))
	t.Logf("unfinished uploads keep %d bytes on disk in a 1 MiB space", kept)
	if kept > 1<<20 {
		t.Fatalf("unfinished uploads keep %d bytes on disk in a 1 MiB space", kept)
	}
}

// An NG upload belongs to the space its MKCOL named: a part that names a
// space without a quota in its Destination is checked against the upload's
// own space all the same.
func TestNGPartsStayInTheirUploadsSpace(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"personal_quota 100KiB"}}, ngPartsScenario)
}

func ngPartsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	physics := projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics")
	c.expect(http.StatusCreated, "MKCOL", "/remote.php/dav/uploads/einstein/t", "")
	c.expect(http.StatusInsufficientStorage, http.MethodPut, "/remote.php/dav/uploads/einstein/t/1", strings.Repeat("x", 200<<10),
		"Destination", s.URL+"/remote.php/dav/spaces/"+physics+"/big")
}

// Open uploads per user are capped (max_open_uploads), also in a space
// without a quota, with the WebDAV error body.
func TestOpenUploadsPerUserCapped(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"max_open_uploads 20"}}, openUploadsScenario)
}

func openUploadsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "marie")
	physics := "/remote.php/dav/spaces/" + projectSpaceRef(personalSpaceRef(t, s, "marie"), "Physics") + "/"
	for i := range 20 {
		resp, _, err := c.tusCreate(physics, fmt.Sprint("f", i), 1, nil)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload %d of 20: %v %v", i, resp, err)
		}
	}
	resp, body, err := c.tusCreate(physics, "one-more", 1, nil)
	if err != nil || resp.StatusCode != http.StatusInsufficientStorage || !strings.Contains(string(body), "Too many unfinished uploads") {
		t.Fatalf("upload 21: %v %s %v", resp, body, err)
	}
	c.expect(http.StatusInsufficientStorage, "MKCOL", "/remote.php/dav/uploads/marie/t", "")
	// Another user has a cap of their own.
	newClient(t, s.URL, "einstein").expect(http.StatusCreated, "MKCOL", "/remote.php/dav/uploads/einstein/t", "")
}

// Issue 17, finding 5, through the real Caddy: dead properties count
// against the quota; a PROPPATCH past it is 507 and changes nothing.
func TestDeadPropertiesCountAgainstTheQuota(t *testing.T) {
	t.Parallel()
	onEachDeployment(t, serverOptions{davspaces: []string{"personal_quota 1MiB"}}, deadPropsScenario)
}

func deadPropsScenario(t *testing.T, s *server) {
	c := newClient(t, s.URL, "einstein")
	value := strings.Repeat("v", 250<<10)
	set := `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>` + value + `</x:p></d:prop></d:set></d:propertyupdate>`
	stored := 0
	for i := range 100 {
		name := fmt.Sprintf("/webdav/f%d", i)
		c.expect(http.StatusCreated, http.MethodPut, name, "")
		resp, _ := c.do("PROPPATCH", name, set)
		if resp.StatusCode == http.StatusInsufficientStorage {
			break
		}
		if resp.StatusCode != http.StatusMultiStatus {
			t.Fatalf("PROPPATCH %d: %d", i, resp.StatusCode)
		}
		stored++
	}
	if stored != 4 {
		t.Fatalf("%d properties of 250 KiB stored in a 1 MiB space, want 4", stored)
	}
	refused := c.propfind(fmt.Sprintf("/webdav/f%d", stored), "0", `<d:propfind xmlns:d="DAV:"><d:prop><x:p xmlns:x="urn:x"/></d:prop></d:propfind>`)
	if v, found := refused[0].props["urn:x p"]; found {
		t.Fatalf("the refused PROPPATCH stored %d bytes", len(v))
	}
	free, _ := strconv.Atoi(c.prop("/webdav/", "DAV:", "quota-available-bytes"))
	if free >= 1<<20-4*len(value) {
		t.Fatalf("quota-available-bytes = %d: the properties are not counted", free)
	}
}

// bytesUnder adds up the sizes of the files below dirs.
func bytesUnder(t *testing.T, dirs ...string) int64 {
	t.Helper()
	var n int64
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}
