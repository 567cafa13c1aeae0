package davhandler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// lockBody is a LOCK body of scope ("exclusive" or "shared") with owner as
// the content of d:owner.
func lockBody(scope, owner string) string {
	return `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:` + scope + `/></d:lockscope>` +
		`<d:locktype><d:write/></d:locktype><d:owner>` + owner + `</d:owner></d:lockinfo>`
}

// lockDiscoveryOf returns the tokens each href of a PROPFIND shows in
// d:lockdiscovery, and the longest lockdiscovery value.
func lockDiscoveryOf(t *testing.T, e *env, path, depth string) (map[string]int, int) {
	t.Helper()
	body := strings.Replace(propfindBody, "%s", "<d:lockdiscovery/>", 1)
	counts, longest := map[string]int{}, 0
	for _, r := range parseMultistatus(t, e.do("richard", "PROPFIND", path, body, "Depth", depth)) {
		v := r.Props["DAV: lockdiscovery"]
		counts[r.Href] = len(parseActiveLocks(t, v))
		longest = max(longest, len(v))
	}
	return counts, longest
}

func TestLockOwnerCap(t *testing.T) {
	e := newEnv(t, withLocks, func(c *Config) { c.LockLimits.MaxOwnerBytes = 64 })
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	// The owner is counted as it is kept: the re-encoded XML.
	fits := `<href xmlns="DAV:">` + strings.Repeat("o", 64-len(`<href xmlns="DAV:"></href>`)) + `</href>`
	e.lock("einstein", "/webdav/f.txt", lockBody("shared", fits))
	for _, path := range []string{"/webdav/f.txt", "/webdav/new.txt"} {
		rec := e.do("einstein", "LOCK", path, lockBody("shared", fits+"o"))
		wantError(t, rec, http.StatusBadRequest, "BadRequest", "more than the 64 allowed")
	}
	// Nothing was stored: no lock, no file.
	wantStatus(t, e.do("einstein", "GET", "/webdav/new.txt", ""), http.StatusNotFound)
	body := strings.Replace(propfindBody, "%s", "<d:lockdiscovery/>", 1)
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", body, "Depth", "0"))
	if n := len(parseActiveLocks(t, res[0].Props["DAV: lockdiscovery"])); n != 1 {
		t.Fatalf("f.txt shows %d locks, want 1", n)
	}
}

func TestOwnerCapDefault(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	big := strings.Repeat("o", DefaultMaxLockOwnerBytes+1)
	wantError(t, e.do("einstein", "LOCK", "/webdav/f.txt", lockBody("exclusive", big)), http.StatusBadRequest, "BadRequest", "allowed")
	e.lock("einstein", "/webdav/f.txt", lockBody("exclusive", big[:DefaultMaxLockOwnerBytes/2]))
}

// No resource is covered by more locks than the cap: further LOCKs get
// 423 with no-conflicting-lock, and a listing shows at most the cap of
// locks for each entry.
func TestLocksCoveringCap(t *testing.T) {
	const limit = 3
	e := newEnv(t, withLocks, func(c *Config) { c.LockLimits.MaxCovering = limit })
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/p", ""), http.StatusCreated)
	for i := range 5 {
		wantStatus(t, e.do("einstein", "PUT", fmt.Sprintf("/dav/spaces/physics/p/f%d.txt", i), "f"), http.StatusCreated)
	}
	granted := 0
	for i := range 6 {
		who := []string{"einstein", "marie"}[i%2]
		rec := e.do(who, "LOCK", "/dav/spaces/physics/p", lockBody("shared", "owner"))
		if rec.Code == http.StatusOK {
			granted++
			continue
		}
		wantError(t, rec, http.StatusLocked, "Locked", "most locks allowed (3)")
		wantCondition(t, rec, "no-conflicting-lock", "")
	}
	if granted != limit {
		t.Fatalf("%d shared locks granted on one folder, want %d", granted, limit)
	}
	// A lock on a member would make it covered a fourth time; on an
	// unmapped URL below, the file it would create is not left behind.
	wantStatus(t, e.do("marie", "LOCK", "/dav/spaces/physics/p/f0.txt", lockBody("shared", "o")), http.StatusLocked)
	wantStatus(t, e.do("marie", "LOCK", "/dav/spaces/physics/p/new.txt", lockBody("shared", "o")), http.StatusLocked)
	wantStatus(t, e.do("marie", "GET", "/dav/spaces/physics/p/new.txt", ""), http.StatusNotFound)
	counts, _ := lockDiscoveryOf(t, e, "/dav/spaces/physics/p", "1")
	if len(counts) != 6 {
		t.Fatalf("listing of %d entries, want 6", len(counts))
	}
	for href, n := range counts {
		if n != limit {
			t.Errorf("%s shows %d locks, want %d", href, n, limit)
		}
	}
}

// A user holds at most the count of locks set in a space: one more is
// 423 (never 507, which clients read as a full disk), and nothing is
// kept; other users are not held back by it.
func TestLocksPerUserCap(t *testing.T) {
	e := newEnv(t, withLocks, func(c *Config) { c.LockLimits.MaxPerUser = 2 })
	for i := range 4 {
		wantStatus(t, e.do("einstein", "PUT", fmt.Sprintf("/dav/spaces/physics/f%d.txt", i), "f"), http.StatusCreated)
	}
	e.lock("marie", "/dav/spaces/physics/f0.txt", lockExclusive)
	e.lock("marie", "/dav/spaces/physics/f1.txt", lockExclusive)
	rec := e.do("marie", "LOCK", "/dav/spaces/physics/f2.txt", lockExclusive)
	wantError(t, rec, http.StatusLocked, "Locked", "most locks allowed in this space (2 locks)")
	wantCondition(t, rec, "no-conflicting-lock", "")
	rec = e.do("marie", "LOCK", "/dav/spaces/physics/new.txt", lockExclusive)
	wantStatus(t, rec, http.StatusLocked)
	wantStatus(t, e.do("marie", "GET", "/dav/spaces/physics/new.txt", ""), http.StatusNotFound)
	wantStatus(t, e.do("marie", "PUT", "/dav/spaces/physics/f2.txt", "x"), http.StatusNoContent)
	e.lock("einstein", "/dav/spaces/physics/f2.txt", lockExclusive)
	// In their personal space, the user has a cap of their own.
	wantStatus(t, e.do("marie", "PUT", "/webdav/mine.txt", "m"), http.StatusCreated)
	e.lock("marie", "/webdav/mine.txt", lockExclusive)
}

// What a user's locks in a space cost is capped in bytes: a LOCK beyond
// is 423 with no-conflicting-lock, keeps nothing (not the file a LOCK of
// a new name would create), and a lock ended makes room again.
func TestLockBytesPerUserCap(t *testing.T) {
	// Room for two locks of up to 400 bytes of text (an owner of 100
	// bytes, the token, node id, path and user), not three.
	owner := strings.Repeat("o", 100)
	e := newEnv(t, withLocks, func(c *Config) { c.LockLimits.MaxBytesPerUser = 2 * (storage.LockOverheadBytes + 400) })
	for i := range 3 {
		wantStatus(t, e.do("einstein", "PUT", fmt.Sprintf("/dav/spaces/physics/f%d.txt", i), "f"), http.StatusCreated)
	}
	first := e.lock("marie", "/dav/spaces/physics/f0.txt", lockBody("exclusive", owner))
	e.lock("marie", "/dav/spaces/physics/f1.txt", lockBody("exclusive", owner))
	rec := e.do("marie", "LOCK", "/dav/spaces/physics/f2.txt", lockBody("exclusive", owner))
	wantError(t, rec, http.StatusLocked, "Locked", "most locks allowed in this space")
	wantCondition(t, rec, "no-conflicting-lock", "")
	wantStatus(t, e.do("marie", "LOCK", "/dav/spaces/physics/new.txt", lockBody("exclusive", owner)), http.StatusLocked)
	wantStatus(t, e.do("marie", "GET", "/dav/spaces/physics/new.txt", ""), http.StatusNotFound)
	// Another user has room of their own; an UNLOCK gives the bytes back.
	e.lock("einstein", "/dav/spaces/physics/f2.txt", lockBody("exclusive", owner))
	wantStatus(t, e.do("marie", "UNLOCK", "/dav/spaces/physics/f0.txt", "", "Lock-Token", "<"+first+">"), http.StatusNoContent)
	e.lock("marie", "/dav/spaces/physics/new.txt", lockBody("exclusive", owner))
}

// davfs2Lock is the LOCK body davfs2 1.6 sends for a file it creates
// (with Depth: 0 and Timeout: Second-1800): its owner is the user name.
const davfs2Lock = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<lockinfo xmlns='DAV:'>\n <lockscope><exclusive/></lockscope>\n" +
	"<locktype><write/></locktype><owner>einstein</owner>\n</lockinfo>\n"

// On the default caps a user holds the locks of a client that locks
// every new file of a copied folder until it uploads it, as davfs2 does:
// 128 of them were the cap once, and davfs2 stopped the copy at the
// 129th. The copy here goes well past that; what a copy of 10,000 files
// takes is reckoned from what its locks cost.
func TestDefaultLockCapsHoldDavfs2Copy(t *testing.T) {
	const files = 300
	e := newEnvWith(t, boltstore.Options{NoSync: true}, withLocks) // the caps, not durability
	wantStatus(t, e.do("einstein", "MKCOL", "/remote.php/dav/files/einstein/copy", ""), http.StatusCreated)
	for i := range files {
		path := fmt.Sprintf("/remote.php/dav/files/einstein/copy/file-%04d.txt", i)
		rec := e.do("einstein", "LOCK", path, davfs2Lock, "Depth", "0", "Timeout", "Second-1800")
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
			t.Fatalf("LOCK of new file %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	// What they cost, and how many of them the default holds.
	home, err := e.store.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	locks, err := e.store.SpaceLocks(t.Context(), home.ID)
	if err != nil {
		t.Fatalf("SpaceLocks: %v", err)
	}
	cost := int64(0)
	for _, l := range locks {
		cost += storage.LockBytes(l)
	}
	t.Logf("%d locks of %d bytes each: the default of %d bytes holds %d of them",
		len(locks), cost/int64(len(locks)), DefaultMaxLockBytesPerUser, DefaultMaxLockBytesPerUser/(cost/int64(len(locks))))
	if perLock := cost / int64(len(locks)); DefaultMaxLockBytesPerUser/perLock < 10_000 {
		t.Fatalf("the default holds %d such locks, fewer than a copy of 10,000 files takes", DefaultMaxLockBytesPerUser/perLock)
	}
}

// A manager may UNLOCK anybody's lock in the space; an editor or a viewer
// only their own.
func TestManagerUnlocksAnyLock(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/d", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/d/f.txt", "f"), http.StatusCreated)
	token := e.lock("marie", "/dav/spaces/physics/d", lockExclusive)
	for _, who := range []string{"richard"} {
		rec := e.do(who, "UNLOCK", "/dav/spaces/physics/d", "", "Lock-Token", "<"+token+">")
		wantError(t, rec, http.StatusConflict, "Conflict", "")
	}
	// Through a member of the locked folder, as an owner may.
	wantStatus(t, e.do("einstein", "UNLOCK", "/dav/spaces/physics/d/f.txt", "", "Lock-Token", "<"+token+">"), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/d/f.txt", "new"), http.StatusNoContent)
	// A manager's UNLOCK still names a lock covering the request URI.
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/g.txt", "g"), http.StatusCreated)
	other := e.lock("marie", "/dav/spaces/physics/g.txt", lockExclusive)
	rec := e.do("einstein", "UNLOCK", "/dav/spaces/physics/d", "", "Lock-Token", "<"+other+">")
	wantError(t, rec, http.StatusConflict, "Conflict", "")
}

// A lock of a user taken out of the space stops counting at once: it
// blocks no write and shows in no listing.
func TestRemovedMembersLocksStopCounting(t *testing.T) {
	e := newEnv(t, withLocks, func(c *Config) {
		c.User = func(r *http.Request) (storage.User, bool) {
			u, ok := basicAuthUser(r)
			if u.ID == "richard" {
				u.Groups = []string{"physicists"}
			}
			return u, ok
		}
	})
	members := func(m map[string]storage.Role) {
		t.Helper()
		sp := e.physics
		sp.Members = m
		if _, err := e.store.PutSpace(context.Background(), sp); err != nil {
			t.Fatal(err)
		}
	}
	members(map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleEditor,
		storage.GroupPrefix + "physicists": storage.RoleEditor})
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/g.txt", "g"), http.StatusCreated)
	e.lock("marie", "/dav/spaces/physics/f.txt", lockExclusive)
	e.lock("richard", "/dav/spaces/physics/g.txt", lockExclusive)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "x"), http.StatusLocked)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/g.txt", "x"), http.StatusLocked)

	// marie is taken out; the physicists' group becomes viewers.
	members(map[string]storage.Role{"einstein": storage.RoleManager, storage.GroupPrefix + "physicists": storage.RoleViewer})
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "x"), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/g.txt", "x"), http.StatusNoContent)
	counts, _ := lockDiscoveryOf(t, e, "/dav/spaces/physics/", "1")
	for href, n := range counts {
		if n != 0 {
			t.Errorf("%s shows %d locks of former editors", href, n)
		}
	}
	e.lock("einstein", "/dav/spaces/physics/f.txt", lockExclusive)
}
