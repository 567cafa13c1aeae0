package davhandler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

const physicsPath = "/dav/spaces/" + testStorageID + "$physics"

// lockedFile is an env with locking, einstein's /webdav/f.txt locked
// exclusively by him, and its token and quoted ETag.
func lockedFile(t *testing.T) (e *env, token, etag string) {
	t.Helper()
	e = newEnv(t, withLocks)
	rec := e.do("einstein", "PUT", "/webdav/f.txt", "f")
	wantStatus(t, rec, http.StatusCreated)
	token = e.lock("einstein", "/webdav/f.txt", lockExclusive)
	return e, token, rec.Header().Get("ETag")
}

// TestIfHeaderOnPut evaluates the If header of a PUT on a locked file: the
// forms of RFC 4918 §10.4 and litmus's conditional PUTs.
func TestIfHeaderOnPut(t *testing.T) {
	for _, tc := range []struct {
		name, ifHeader string
		want           int
	}{
		{"token", "(<%t>)", http.StatusNoContent},
		{"token and etag (cond_put)", "(<%t> [%e])", http.StatusNoContent},
		{"no-lock and etag (fail_cond_put)", "(<DAV:no-lock> [%e])", http.StatusPreconditionFailed},
		{"no-lock (fail_cond_put_unlocked)", "(<DAV:no-lock>)", http.StatusPreconditionFailed},
		{"token or not no-lock (cond_put_with_not)", "(<%t>) (Not <DAV:no-lock>)", http.StatusNoContent},
		{"corrupt token or not no-lock (cond_put_corrupt_token)", "(<%tx>) (Not <DAV:no-lock>)", http.StatusLocked},
		{"complex_cond_put", "(<%t> [%e]) (Not <DAV:no-lock> [%e])", http.StatusNoContent},
		{"fail_complex_cond_put", `(<%t> ["bad"]) (Not <DAV:no-lock> ["bad"])`, http.StatusPreconditionFailed},
		{"weak etag never matches strongly", "(<%t> [W/%e])", http.StatusPreconditionFailed},
		{"not the etag", "(Not [%e]) (<%t> Not [%e])", http.StatusPreconditionFailed},
		{"not the token", "(Not <%t>)", http.StatusPreconditionFailed},
		{"an unknown token", "(<urn:uuid:00000000-0000-0000-0000-000000000000>)", http.StatusPreconditionFailed},
		{"tagged with a path", "</webdav/f.txt> (<%t>)", http.StatusNoContent},
		{"tagged with this host's URI", "<http://example.com/remote.php/webdav/f.txt> (<%t>)", http.StatusNoContent},
		{"tagged through the spaces path", "<%s/f.txt> (<%t>)", http.StatusNoContent},
		{"tagged with another host", "<http://other.example/webdav/f.txt> (<%t>)", http.StatusPreconditionFailed},
		{"tagged with another resource that holds", "</webdav/> (Not <DAV:no-lock>) </webdav/f.txt> (<%t>)", http.StatusNoContent},
		{"the token only in a false list still submits it", "(<%t> [\"bad\"]) (Not <DAV:no-lock>)", http.StatusNoContent},
		{"malformed", "(<%t>", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, token, etag := lockedFile(t)
			v := strings.NewReplacer("%t", token, "%e", etag, "%s", e.personalSpacePath("einstein")).Replace(tc.ifHeader)
			rec := e.do("einstein", "PUT", "/webdav/f.txt", "new", "If", v)
			wantStatus(t, rec, tc.want)
			if tc.want == http.StatusLocked {
				wantCondition(t, rec, "lock-token-submitted", "/webdav/f.txt")
			}
		})
	}
}

// TestIfHeaderWithoutLocking: without a lock store the If header's entity
// tags still count, and no state token matches.
func TestIfHeaderWithoutLocking(t *testing.T) {
	for _, tc := range []struct {
		name, ifHeader string
		want           int
	}{
		{"etag", "([%e])", http.StatusNoContent},
		{"another etag", `(["bad"])`, http.StatusPreconditionFailed},
		{"not another etag", `(Not ["bad"])`, http.StatusNoContent},
		{"a token", "(<urn:uuid:00000000-0000-0000-0000-000000000000>)", http.StatusPreconditionFailed},
		{"not no-lock", "(Not <DAV:no-lock>)", http.StatusNoContent},
		{"malformed", "([%e]", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			put := e.do("einstein", "PUT", "/webdav/f.txt", "f")
			wantStatus(t, put, http.StatusCreated)
			v := strings.ReplaceAll(tc.ifHeader, "%e", put.Header().Get("ETag"))
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "new", "If", v), tc.want)
		})
	}
}

// TestIfHeaderUnmappedURL: an unmapped URL has no entity tag (RFC 4918
// §10.4.11) and lies in the scope of its folder's Depth infinity lock.
func TestIfHeaderUnmappedURL(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	token := e.lock("einstein", "/webdav/d", lockExclusive)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/d/a.txt", "a", "If", `(["x"])`), http.StatusPreconditionFailed)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/d/a.txt", "a", "If", `(Not ["x"]) (<`+token+`>)`), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/d/b.txt", "b", "If", `(<`+token+`>)`), http.StatusCreated)
}

// TestLocksEnforced: each state-changing method refuses a change to what a
// lock covers without its token (423 naming the lock's root), and proceeds
// with it in a tagged If list or, where ownCloud clients send it, in a
// Lock-Token header.
func TestLocksEnforced(t *testing.T) {
	for _, tc := range []struct {
		name         string
		lock         string // the path locked; folders are locked Depth 0 unless deep
		deep         bool
		method, path string
		body         string
		hdr          []string
		lockTokenHdr bool // the method also takes a Lock-Token header
		ok           int
	}{
		{name: "PUT", lock: "/webdav/f.txt", method: "PUT", path: "/webdav/f.txt", body: "x", lockTokenHdr: true, ok: 204},
		{name: "PUT into a folder", lock: "/webdav/d", method: "PUT", path: "/webdav/d/new.txt", body: "x", lockTokenHdr: true, ok: 201},
		{name: "PUT into a deep locked folder", lock: "/webdav/d", deep: true, method: "PUT", path: "/webdav/d/g.txt", body: "x", lockTokenHdr: true, ok: 204},
		{name: "DELETE", lock: "/webdav/f.txt", method: "DELETE", path: "/webdav/f.txt", lockTokenHdr: true, ok: 204},
		{name: "DELETE a folder with a locked member", lock: "/webdav/d/g.txt", method: "DELETE", path: "/webdav/d", lockTokenHdr: true, ok: 204},
		{name: "DELETE a member of a folder", lock: "/webdav/d", method: "DELETE", path: "/webdav/d/g.txt", lockTokenHdr: true, ok: 204},
		{name: "MOVE the source", lock: "/webdav/f.txt", method: "MOVE", path: "/webdav/f.txt", hdr: []string{"Destination", "/webdav/moved.txt"}, lockTokenHdr: true, ok: 201},
		{name: "MOVE a folder with a locked member", lock: "/webdav/d/g.txt", method: "MOVE", path: "/webdav/d", hdr: []string{"Destination", "/webdav/e"}, lockTokenHdr: true, ok: 201},
		{name: "MOVE onto the destination", lock: "/webdav/f.txt", method: "MOVE", path: "/webdav/d/g.txt", hdr: []string{"Destination", "/webdav/f.txt"}, lockTokenHdr: true, ok: 204},
		{name: "MOVE into a locked folder", lock: "/webdav/d", method: "MOVE", path: "/webdav/f.txt", hdr: []string{"Destination", "/webdav/d/f.txt"}, lockTokenHdr: true, ok: 201},
		{name: "COPY onto the destination", lock: "/webdav/f.txt", method: "COPY", path: "/webdav/d/g.txt", hdr: []string{"Destination", "/webdav/f.txt"}, ok: 204},
		{name: "COPY into a locked folder", lock: "/webdav/d", method: "COPY", path: "/webdav/f.txt", hdr: []string{"Destination", "/webdav/d/f.txt"}, ok: 201},
		{name: "PROPPATCH", lock: "/webdav/f.txt", method: "PROPPATCH", path: "/webdav/f.txt", body: proppatchBody, lockTokenHdr: true, ok: 207},
		{name: "MKCOL", lock: "/webdav/d", method: "MKCOL", path: "/webdav/d/sub", ok: 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			try := func(e *env, hdr ...string) int {
				return e.do("einstein", tc.method, tc.path, tc.body, append(hdr, tc.hdr...)...).Code
			}
			e, token := lockedTree(t, tc.lock, tc.deep)
			rec := e.do("einstein", tc.method, tc.path, tc.body, tc.hdr...)
			wantStatus(t, rec, http.StatusLocked)
			wantCondition(t, rec, "lock-token-submitted", hrefFor(tc.lock, !strings.HasSuffix(tc.lock, ".txt")))
			if got := try(e, "If", "<"+tc.lock+"> (<"+token+">)"); got != tc.ok {
				t.Fatalf("with the token in the If header: %d, want %d", got, tc.ok)
			}
			e, token = lockedTree(t, tc.lock, tc.deep)
			want := http.StatusLocked
			if tc.lockTokenHdr {
				want = tc.ok
			}
			if got := try(e, "Lock-Token", "<"+token+">"); got != want {
				t.Fatalf("with the token in a Lock-Token header: %d, want %d", got, want)
			}
		})
	}
}

const proppatchBody = `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>v</x:p></d:prop></d:set></d:propertyupdate>`

// lockedTree is an env with einstein's /webdav/f.txt, /webdav/d/ and
// /webdav/d/g.txt, and einstein's exclusive lock on path.
func lockedTree(t *testing.T, path string, deep bool) (*env, string) {
	t.Helper()
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/d/g.txt", "g"), http.StatusCreated)
	depth := "0"
	if deep {
		depth = "infinity"
	}
	return e, e.lock("einstein", path, lockExclusive, "Depth", depth)
}

// TestLockTokenOfAnotherUser: a token counts only when its holder submits
// it; shared locks let each holder write with their own token.
func TestLockTokenOfAnotherUser(t *testing.T) {
	e := newEnv(t, withLocks)
	f := physicsPath + "/f.txt"
	wantStatus(t, e.do("einstein", "PUT", f, "f"), http.StatusCreated)
	mine := e.lock("einstein", f, lockExclusive)
	for _, hdr := range [][]string{{"If", "(<" + mine + ">)"}, {"Lock-Token", "<" + mine + ">"}} {
		rec := e.do("marie", "PUT", f, "x", hdr...)
		wantStatus(t, rec, http.StatusLocked)
		wantCondition(t, rec, "lock-token-submitted", f)
	}
	wantStatus(t, e.do("einstein", "UNLOCK", f, "", "Lock-Token", "<"+mine+">"), http.StatusNoContent)

	hers := e.lock("marie", f, lockShared)
	his := e.lock("einstein", f, lockShared)
	wantStatus(t, e.do("marie", "PUT", f, "m", "If", "(<"+hers+">)"), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "PUT", f, "e", "If", "(<"+his+">)"), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "PUT", f, "e", "If", "(<"+hers+">)"), http.StatusLocked)
	wantStatus(t, e.do("einstein", "PUT", f, "e"), http.StatusLocked)
}

// TestIfHeaderTagsDoNotLeak: a tagged list about another space, a space
// the user cannot see, or a missing resource never holds, and all answer
// alike.
func TestIfHeaderTagsDoNotLeak(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/secret.txt", "s"), http.StatusCreated)
	wantStatus(t, e.do("marie", "PUT", "/webdav/m.txt", "m"), http.StatusCreated)
	wantStatus(t, e.do("marie", "PUT", physicsPath+"/p.txt", "p"), http.StatusCreated)
	var bodies []string
	for _, tag := range []string{
		e.personalSpacePath("einstein") + "/secret.txt", // a space marie cannot see
		e.personalSpacePath("einstein") + "/nothing.txt",
		"/dav/spaces/nospace/x.txt",
		physicsPath + "/p.txt", // visible, but another space than the request's
		"/webdav/missing.txt",
		"/dav/files/einstein/secret.txt",
	} {
		rec := e.do("marie", "PUT", "/webdav/m.txt", "x", "If", "<"+tag+"> (Not <DAV:no-lock>)")
		wantError(t, rec, http.StatusPreconditionFailed, "PreconditionFailed", "If header")
		bodies = append(bodies, rec.Body.String())
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Fatalf("answers differ:\n%s\n%s", bodies[0], b)
		}
	}
	wantStatus(t, e.do("marie", "PUT", "/webdav/m.txt", "x", "If", "</webdav/m.txt> (Not <DAV:no-lock>)"), http.StatusNoContent)
}

// TestCheckLockRequest: what LOCK asks before it refreshes or takes a lock.
func TestCheckLockRequest(t *testing.T) {
	e, token, etag := lockedFile(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	e.lock("einstein", "/webdav/d", lockExclusive, "Depth", "0")
	for _, tc := range []struct {
		name, user, path, ifHeader string
		want                       int // 0: allowed
	}{
		{"no If header on a locked file: the store decides", "einstein", "/webdav/f.txt", "", 0},
		{"a refresh naming the token", "einstein", "/webdav/f.txt", "(<" + token + ">)", 0},
		{"a refresh naming another token", "einstein", "/webdav/f.txt", "(<urn:uuid:00000000-0000-0000-0000-000000000000>)", http.StatusPreconditionFailed},
		{"the wrong etag", "einstein", "/webdav/f.txt", "([\"bad\"])", http.StatusPreconditionFailed},
		{"the etag", "einstein", "/webdav/f.txt", "([" + etag + "])", 0},
		{"malformed", "einstein", "/webdav/f.txt", "(", http.StatusBadRequest},
		{"a new file in a locked folder", "einstein", "/webdav/d/new.txt", "", http.StatusLocked},
		{"a new file in an unlocked folder", "einstein", "/webdav/new.txt", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("LOCK", tc.path, nil)
			if tc.ifHeader != "" {
				r.Header.Set("If", tc.ifHeader)
			}
			req := &request{user: storage.User{ID: tc.user}}
			dp, _, _ := parseDAVPath(tc.path)
			tgt, err := e.h.resolve(r.Context(), req.user, dp)
			if err != nil {
				t.Fatal(err)
			}
			err = e.h.checkLockRequest(r, req, tgt)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if de := storageError(err); de.status != tc.want {
				t.Fatalf("got %v, want %d", err, tc.want)
			}
		})
	}
}
