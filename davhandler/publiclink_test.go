package davhandler

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/storage"
)

// linkEnv is an env whose Physics space has a folder "shared" holding
// "a.txt" (content "alpha") and a folder "sub".
type linkEnv struct {
	*env
	shared storage.Node
}

func newLinkEnv(t *testing.T, opts ...func(*Config)) *linkEnv {
	t.Helper()
	e := newEnv(t, opts...)
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/shared", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/shared/sub", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/shared/a.txt", "alpha"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/outside.txt", "secret"), http.StatusCreated)
	shared, err := e.store.Child(context.Background(), "physics", "physics", "shared")
	if err != nil {
		t.Fatal(err)
	}
	return &linkEnv{env: e, shared: shared}
}

// link creates a link on the shared folder as einstein.
func (e *linkEnv) link(role storage.ShareRole, password string) storage.Share {
	e.t.Helper()
	return e.linkOn(e.shared, role, password, time.Time{})
}

func (e *linkEnv) linkOn(item storage.Node, role storage.ShareRole, password string, expires time.Time) storage.Share {
	e.t.Helper()
	hash := linkHash(e.t, password)
	s, err := e.store.CreateShare(context.Background(), storage.Share{
		Kind: storage.ShareLink, SpaceID: item.SpaceID, NodeID: item.ID, Creator: "einstein",
		Role: role, PasswordHash: hash, Expires: expires,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// linkHash is what storage.HashLinkPassword makes of password, at bcrypt's
// lowest cost: the handler compares at the cost the hash names, and under
// the race detector each compare at the default cost takes seconds of CPU.
// The cost links get is storage's to pin.
func linkHash(t testing.TB, password string) []byte {
	t.Helper()
	if password == "" {
		return nil
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// public sends a request without a user; password "" sends none.
func (e *linkEnv) public(password, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	if password != "" {
		hdr = append(hdr, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("public:"+password)))
	}
	return e.do("", method, path, body, hdr...)
}

func linkPath(s storage.Share, below string) string {
	return "/dav/public-files/" + s.Token + below
}

// TestLinkRolesByMethod: what each link role lets a request do, and that
// the link's item itself stays where it is.
func TestLinkRolesByMethod(t *testing.T) {
	type step struct {
		method, path, body string
		hdr                []string
	}
	steps := map[string]step{
		"PROPFIND root":   {"PROPFIND", "/", "", []string{"Depth", "1"}},
		"PROPFIND file":   {"PROPFIND", "/a.txt", "", []string{"Depth", "0"}},
		"GET file":        {"GET", "/a.txt", "", nil},
		"GET zip":         {"GET", "/", "", []string{"Accept", "application/zip"}},
		"PUT new":         {"PUT", "/new.txt", "new", nil},
		"PUT overwrite":   {"PUT", "/a.txt", "changed", nil},
		"MKCOL":           {"MKCOL", "/folder", "", nil},
		"PROPPATCH":       {"PROPPATCH", "/a.txt", `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:k xmlns:x="urn:x">v</x:k></d:prop></d:set></d:propertyupdate>`, nil},
		"COPY in":         {"COPY", "/a.txt", "", []string{"Destination", "/sub/copy.txt"}},
		"MOVE in":         {"MOVE", "/a.txt", "", []string{"Destination", "/sub/moved.txt"}},
		"DELETE file":     {"DELETE", "/a.txt", "", nil},
		"DELETE root":     {"DELETE", "/", "", nil},
		"MOVE root":       {"MOVE", "/", "", []string{"Destination", "/sub/root"}},
		"LOCK":            {"LOCK", "/a.txt", "", nil},
		"COPY out":        {"COPY", "/a.txt", "", []string{"Destination", "/dav/spaces/physics/copied.txt"}},
		"GET outside ../": {"GET", "/../outside.txt", "", nil},
	}
	type want map[string]int
	tests := []struct {
		role storage.ShareRole
		want want
	}{
		{storage.ShareViewer, want{"PROPFIND root": 207, "PROPFIND file": 207, "GET file": 200, "GET zip": 200,
			"PUT new": 403, "PUT overwrite": 403, "MKCOL": 403, "PROPPATCH": 403, "COPY in": 403, "MOVE in": 403,
			"DELETE file": 403, "DELETE root": 403, "MOVE root": 403, "LOCK": 405, "COPY out": 404, "GET outside ../": 404}},
		{storage.ShareUploader, want{"PROPFIND root": 207, "PROPFIND file": 207, "GET file": 200, "GET zip": 200,
			"PUT new": 201, "PUT overwrite": 403, "MKCOL": 201, "PROPPATCH": 403, "COPY in": 201, "MOVE in": 403,
			"DELETE file": 403, "DELETE root": 403, "MOVE root": 403, "LOCK": 405, "COPY out": 404, "GET outside ../": 404}},
		{storage.ShareEditor, want{"PROPFIND root": 207, "PROPFIND file": 207, "GET file": 200, "GET zip": 200,
			"PUT new": 201, "PUT overwrite": 204, "MKCOL": 201, "PROPPATCH": 207, "COPY in": 201, "MOVE in": 201,
			"DELETE file": 204, "DELETE root": 403, "MOVE root": 403, "LOCK": 405, "COPY out": 404, "GET outside ../": 404}},
		{storage.ShareFileDrop, want{"PROPFIND root": 207, "PROPFIND file": 404, "GET file": 404, "GET zip": 403,
			"PUT new": 201, "PUT overwrite": 201, "MKCOL": 404, "PROPPATCH": 404, "COPY in": 404, "MOVE in": 404,
			"DELETE file": 404, "DELETE root": 403, "MOVE root": 403, "LOCK": 404, "COPY out": 404, "GET outside ../": 404}},
	}
	for _, tt := range tests {
		for name, st := range steps {
			t.Run(strconv.Itoa(int(tt.role))+"/"+name, func(t *testing.T) {
				e := newLinkEnv(t)
				l := e.link(tt.role, "")
				hdr := st.hdr
				if len(hdr) == 2 && hdr[0] == "Destination" && strings.HasPrefix(hdr[1], "/sub/") {
					hdr = []string{"Destination", linkPath(l, hdr[1])}
				}
				path := linkPath(l, st.path)
				if strings.Contains(st.path, "..") {
					path = "/dav/public-files/" + l.Token + st.path // not escaped away
				}
				rec := e.public("", st.method, path, st.body, hdr...)
				if rec.Code != tt.want[name] {
					t.Fatalf("%s %s: %d, want %d\n%s", st.method, st.path, rec.Code, tt.want[name], rec.Body)
				}
			})
		}
	}
}

func TestLinkPropfindLetters(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareUploader, "")
	rs := parseMultistatus(t, e.public("", "PROPFIND", linkPath(l, "/"), "", "Depth", "1"))
	if len(rs) != 3 {
		t.Fatalf("%d responses, want root, a.txt and sub", len(rs))
	}
	for _, r := range rs {
		if !strings.HasPrefix(r.Href, "/dav/public-files/"+l.Token+"/") {
			t.Errorf("href %q is not below the link", r.Href)
		}
	}
	if got := rs[0].Props[nsOC+" permissions"]; got != "CK" {
		t.Errorf("root permissions %q, want CK", got)
	}
}

func TestLinkPassword(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareViewer, "correct horse")
	root := linkPath(l, "/")

	rec := e.public("", "PROPFIND", root, "", "Depth", "0")
	wantError(t, rec, http.StatusUnauthorized, "NotAuthenticated", "No 'Authorization: Basic' header found")
	if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, `Basic realm="davspaces public link"`) {
		t.Errorf("WWW-Authenticate %q", got)
	}
	wantError(t, e.public("wrong password", "PROPFIND", root, "", "Depth", "0"), http.StatusUnauthorized, "NotAuthenticated", "incorrect")
	wantStatus(t, e.public("correct horse", "PROPFIND", root, "", "Depth", "0"), http.StatusMultiStatus)
	// A signed-in user's credentials are no password: the user is ignored.
	wantStatus(t, e.do("einstein", "PROPFIND", root, "", "Depth", "0"), http.StatusUnauthorized)

	// Ten failures in all (two above) block the link for this address,
	// the right password included; another address is not blocked.
	for range 8 {
		wantStatus(t, e.public("wrong password", "GET", linkPath(l, "/a.txt"), ""), http.StatusUnauthorized)
	}
	rec = e.public("correct horse", "GET", linkPath(l, "/a.txt"), "")
	wantStatus(t, rec, http.StatusTooManyRequests)
	if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || s <= 0 || s > 300 {
		t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
	}
	req := httptest.NewRequest("GET", linkPath(l, "/a.txt"), nil)
	req.RemoteAddr = "192.0.2.7:4242"
	req.SetBasicAuth("public", "correct horse")
	other := httptest.NewRecorder()
	e.h.ServeHTTP(other, req)
	wantStatus(t, other, http.StatusOK)
}

// TestLinkPasswordGuessesAtOnce sends 60 wrong passwords of a link at
// once from one IPv6 /64 (each from an address of its own): at most the
// budget's 10 are compared (401), the others refused (429 with
// Retry-After); then the right password from the /64 is refused as well,
// and from another /64 it opens the link. A guess that found no compare
// slot in time is a 429 as well, and counts.
func TestLinkPasswordGuessesAtOnce(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareViewer, "correct horse")
	get := func(addr, password string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", linkPath(l, "/a.txt"), nil)
		req.RemoteAddr = "[" + addr + "]:4242"
		req.SetBasicAuth("public", password)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for i := range 60 {
		wg.Go(func() {
			rec := get(fmt.Sprintf("2001:db8:0:1::%x", i+1), "wrong password")
			if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
				t.Error("a 429 without Retry-After")
			}
			mu.Lock()
			codes[rec.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusUnauthorized] > 10 || codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests] != 60 {
		t.Fatalf("answers %v: want at most 10 compared (401), the others 429", codes)
	}
	rec := get("2001:db8:0:1::ffff", "correct horse")
	wantStatus(t, rec, http.StatusTooManyRequests)
	if !strings.Contains(rec.Body.String(), "<s:message>Too many wrong passwords") {
		t.Fatalf("the right password during the block: %s", rec.Body)
	}
	wantStatus(t, get("2001:db8:0:2::1", "correct horse"), http.StatusOK)
}

func TestLinkTokensAnswerAlike(t *testing.T) {
	e := newLinkEnv(t)
	live := e.link(storage.ShareViewer, "")
	expiring := e.linkOn(e.shared, storage.ShareViewer, "", time.Now().Add(time.Second))
	wantStatus(t, e.public("", "GET", linkPath(expiring, "/a.txt"), ""), http.StatusOK)
	unknown := storage.NewLinkToken()
	paths := []string{
		"/dav/public-files/" + unknown,
		"/dav/public-files/" + unknown + "/a.txt",
		"/remote.php/dav/public-files/" + unknown + "/",
		"/dav/public-files/not%20a%20token",
		"/dav/public-files/" + strings.Repeat("A", 200),
		"/dav/public-files/" + unknown + "/../" + live.Token,
		"/dav/public-files/.uploads/" + unknown,
		"/dav/public-files/",
		"/dav/public-files/" + live.Token + "/..%2Foutside.txt",
	}
	var first string
	check := func(path string, user ...string) {
		t.Helper()
		rec := e.public("", "GET", path, "")
		if len(user) > 0 {
			rec = e.do(user[0], "GET", path, "")
		}
		if rec.Code != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404\n%s", path, rec.Code, rec.Body)
		}
		if first == "" {
			first = rec.Body.String()
		} else if rec.Body.String() != first {
			t.Fatalf("%s: body\n%s\ndiffers from\n%s", path, rec.Body, first)
		}
	}
	for _, p := range paths {
		check(p)
	}
	// A token is no space id.
	check("/dav/spaces/"+live.Token, "einstein")
	check("/dav/spaces/"+live.Token+"/a.txt", "einstein")
	time.Sleep(1100 * time.Millisecond)
	check(linkPath(expiring, "/a.txt"))

	// The creator losing the right to share kills the link.
	e.physics.Members["einstein"] = storage.RoleViewer
	if _, err := e.store.PutSpace(context.Background(), e.physics); err != nil {
		t.Fatal(err)
	}
	check(linkPath(live, "/a.txt"))
}

func TestLinkOfDeletedItem(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareViewer, "")
	wantStatus(t, e.public("", "GET", linkPath(l, "/a.txt"), ""), http.StatusOK)
	wantStatus(t, e.do("einstein", "DELETE", "/dav/spaces/physics/shared", ""), http.StatusNoContent)
	wantStatus(t, e.public("", "GET", linkPath(l, "/a.txt"), ""), http.StatusNotFound)
	items, err := storage.AllTrashItems(context.Background(), e.store, "physics")
	if err != nil || len(items) != 1 {
		t.Fatalf("trash: %v, %v", items, err)
	}
	if _, _, err := e.store.RestoreTrash(context.Background(), "physics", items[0].Key, storage.Transfer{NodeID: items[0].Node.ID, NewParentID: "physics", NewName: "shared"}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/shared/a.txt", ""), http.StatusOK)
	wantStatus(t, e.public("", "GET", linkPath(l, "/a.txt"), ""), http.StatusNotFound)
}

func TestFileDrop(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareFileDrop, "")
	wantStatus(t, e.public("", "PUT", linkPath(l, "/a.txt"), "dropped"), http.StatusCreated)
	wantStatus(t, e.public("", "PUT", linkPath(l, "/a.txt"), "again"), http.StatusCreated)
	for name, want := range map[string]string{"a.txt": "alpha", "a (2).txt": "dropped", "a (3).txt": "again"} {
		rec := e.do("einstein", "GET", "/dav/spaces/physics/shared/"+name, "")
		wantStatus(t, rec, http.StatusOK)
		if rec.Body.String() != want {
			t.Errorf("%s holds %q, want %q", name, rec.Body, want)
		}
	}
	rs := parseMultistatus(t, e.public("", "PROPFIND", linkPath(l, "/"), "", "Depth", "1"))
	if len(rs) != 1 {
		t.Fatalf("a drop lists %d responses, want its root alone", len(rs))
	}
	wantStatus(t, e.public("", "GET", linkPath(l, "/a (2).txt"), ""), http.StatusNotFound)
	wantStatus(t, e.public("", "PUT", linkPath(l, "/sub/x.txt"), "x"), http.StatusNotFound)
	wantStatus(t, e.public("", "PUT", linkPath(l, "/nosuch/x.txt"), "x"), http.StatusNotFound)
}

func TestLinkTusUpload(t *testing.T) {
	e := newLinkEnv(t, withUploads)
	l := e.link(storage.ShareFileDrop, "correct horse")
	pw := "Basic " + base64.StdEncoding.EncodeToString([]byte("public:correct horse"))
	rec := e.do("", http.MethodPost, linkPath(l, ""), "", "Authorization", pw,
		"Tus-Resumable", "1.0.0", "Upload-Length", "5", "Upload-Metadata", tusMeta("filename", "a.txt"))
	wantStatus(t, rec, http.StatusCreated)
	loc := rec.Header().Get("Location")
	i := strings.Index(loc, "/dav/public-files/.uploads/")
	if i < 0 {
		t.Fatalf("Location %q is no link upload URL", loc)
	}
	upload := loc[i:]
	patch := []string{"Tus-Resumable", "1.0.0", "Upload-Offset", "0", "Content-Type", tusContentType}
	// Without the password, or as the user who owns the space, the upload
	// is not reachable.
	wantStatus(t, e.do("", "PATCH", upload, "hello", patch...), http.StatusUnauthorized)
	wantStatus(t, e.do("einstein", "PATCH", "/dav/uploads"+strings.TrimPrefix(upload, "/dav/public-files/.uploads"), "hello", patch...), http.StatusNotFound)
	wantStatus(t, e.do("", "PATCH", upload, "hello", append(patch, "Authorization", pw)...), http.StatusNoContent)
	rec = e.do("einstein", "GET", "/dav/spaces/physics/shared/a (2).txt", "")
	wantStatus(t, rec, http.StatusOK)
	if got, _ := io.ReadAll(rec.Body); string(got) != "hello" {
		t.Fatalf("uploaded %q", got)
	}
}

func TestLinkQuotaIsTheSpaces(t *testing.T) {
	e := newLinkEnv(t)
	e.physics.Quota = 10
	if _, err := e.store.PutSpace(context.Background(), e.physics); err != nil {
		t.Fatal(err)
	}
	l := e.link(storage.ShareEditor, "")
	wantStatus(t, e.public("", "PUT", linkPath(l, "/big.txt"), strings.Repeat("x", 20)), http.StatusInsufficientStorage)
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/shared/big.txt", ""), http.StatusNotFound)
}

func TestLinkOptions(t *testing.T) {
	e := newLinkEnv(t, withUploads, func(c *Config) { c.Locks = c.Store.(storage.LockStore) })
	l := e.link(storage.ShareViewer, "")
	rec := e.public("", "OPTIONS", linkPath(l, "/"), "")
	wantStatus(t, rec, http.StatusNoContent)
	if got := rec.Header().Get("DAV"); got != "1, 3" {
		t.Errorf("DAV %q, want 1, 3: no locks through links", got)
	}
	if got := rec.Header().Get("Allow"); strings.Contains(got, "LOCK") || !strings.Contains(got, "POST") {
		t.Errorf("Allow %q", got)
	}
	rec = e.public("", "LOCK", linkPath(l, "/a.txt"), "")
	wantStatus(t, rec, http.StatusMethodNotAllowed)
	if got := rec.Header().Get("Allow"); strings.Contains(got, "LOCK") {
		t.Errorf("Allow %q of a refused LOCK", got)
	}
}

func TestPasswordCache(t *testing.T) {
	link := storage.Share{ID: "l1", PasswordHash: linkHash(t, "correct horse")}
	now := time.Now()
	c := newPasswordCache(time.Minute, 2)
	c.remember(link, "correct horse", now)
	if c.known(link, "wrong password", now) || !c.known(link, "correct horse", now) {
		t.Fatal("the passwords are judged wrongly")
	}
	if c.known(link, "correct horse", now.Add(time.Minute)) {
		t.Fatal("a password is known after its time")
	}
	// A new password: the old one no longer opens the link.
	link.PasswordHash = linkHash(t, "battery staple")
	if c.known(link, "correct horse", now) {
		t.Fatal("a changed password is judged by the old one")
	}
	for i := range 5 {
		c.remember(storage.Share{ID: strconv.Itoa(i)}, "", now)
	}
	if len(c.opened) > 2 {
		t.Fatalf("%d passwords remembered, at most 2", len(c.opened))
	}
}

func TestLinkUnderRemotePHP(t *testing.T) {
	e := newLinkEnv(t, withUploads)
	l := e.link(storage.ShareUploader, "")
	base := "/remote.php/dav/public-files/" + l.Token
	wantStatus(t, e.public("", "GET", base+"/a.txt", ""), http.StatusOK)
	for _, r := range parseMultistatus(t, e.public("", "PROPFIND", base+"/", "", "Depth", "1")) {
		if !strings.HasPrefix(r.Href, base+"/") {
			t.Errorf("href %q is not below %s", r.Href, base)
		}
	}
	rec := e.public("", http.MethodPost, base+"/", "", "Tus-Resumable", "1.0.0", "Upload-Length", "1",
		"Upload-Metadata", tusMeta("filename", "b.txt"))
	wantStatus(t, rec, http.StatusCreated)
	loc := rec.Header().Get("Location")
	i := strings.Index(loc, "/remote.php/dav/public-files/.uploads/")
	if i < 0 {
		t.Fatalf("Location %q", loc)
	}
	wantStatus(t, e.public("", "PATCH", loc[i:], "b", "Tus-Resumable", "1.0.0", "Upload-Offset", "0", "Content-Type", tusContentType), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/shared/b.txt", ""), http.StatusOK)
}
