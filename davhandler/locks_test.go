package davhandler

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// withLocks offers locking, with the locks kept by the env's own store.
func withLocks(cfg *Config) {
	cfg.Locks = cfg.Store.(storage.LockStore)
	cfg.User = displayNameUser
}

// displayNameUser is basicAuthUser with a display name: "einstein" is
// "Einstein".
func displayNameUser(r *http.Request) (storage.User, bool) {
	u, ok := basicAuthUser(r)
	if u.ID != "" {
		u.DisplayName = strings.ToUpper(u.ID[:1]) + u.ID[1:]
	}
	return u, ok
}

const (
	lockExclusive = `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope>` +
		`<d:locktype><d:write/></d:locktype><d:owner>litmus test suite</d:owner></d:lockinfo>`
	lockShared = `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope>` +
		`<d:locktype><d:write/></d:locktype></d:lockinfo>`
)

// activeLock is a d:activelock as clients read it.
type activeLock struct {
	Type struct {
		Write *struct{} `xml:"DAV: write"`
	} `xml:"DAV: locktype"`
	Scope struct {
		Exclusive *struct{} `xml:"DAV: exclusive"`
		Shared    *struct{} `xml:"DAV: shared"`
	} `xml:"DAV: lockscope"`
	Depth string `xml:"DAV: depth"`
	Owner struct {
		Inner string `xml:",innerxml"`
	} `xml:"DAV: owner"`
	Timeout   string `xml:"DAV: timeout"`
	Token     string `xml:"DAV: locktoken>href"`
	Root      string `xml:"DAV: lockroot>href"`
	OwnerName string `xml:"http://owncloud.org/ns ownername"`
}

// parseActiveLocks decodes the activelocks of a LOCK reply or of a
// lockdiscovery value.
func parseActiveLocks(t testing.TB, body string) []activeLock {
	t.Helper()
	var doc struct {
		Locks []activeLock `xml:"activelock"`
	}
	if err := xml.Unmarshal([]byte("<x xmlns:d=\"DAV:\" xmlns:oc=\"http://owncloud.org/ns\">"+body+"</x>"), &doc); err != nil {
		t.Fatalf("activelock: %v\n%s", err, body)
	}
	return doc.Locks
}

// lockReply decodes the body of a successful LOCK.
func lockReply(t testing.TB, rec *httptest.ResponseRecorder) activeLock {
	t.Helper()
	var doc struct {
		XMLName xml.Name     `xml:"DAV: prop"`
		Locks   []activeLock `xml:"DAV: lockdiscovery>activelock"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || len(doc.Locks) != 1 {
		t.Fatalf("LOCK reply (%v):\n%s", err, rec.Body.String())
	}
	return doc.Locks[0]
}

// lock takes a lock and returns its token.
func (e *env) lock(user, path, body string, hdr ...string) string {
	e.t.Helper()
	rec := e.do(user, "LOCK", path, body, hdr...)
	if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
		e.t.Fatalf("LOCK %s: %d\n%s", path, rec.Code, rec.Body.String())
	}
	return strings.Trim(rec.Header().Get("Lock-Token"), "<>")
}

// wantCondition checks that an error body names a DAV: condition.
func wantCondition(t testing.TB, rec *httptest.ResponseRecorder, condition, href string) {
	t.Helper()
	var body struct {
		Elements []struct {
			XMLName xml.Name
			Href    string `xml:"DAV: href"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	for _, el := range body.Elements {
		if el.XMLName == (xml.Name{Space: nsDAV, Local: condition}) && el.Href == href {
			return
		}
	}
	t.Fatalf("error body lacks d:%s with href %q:\n%s", condition, href, rec.Body.String())
}

func TestLockReply(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	owner := `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype>` +
		`<d:owner><d:href>mailto:einstein@example.org</d:href></d:owner></d:lockinfo>`
	rec := e.do("einstein", "LOCK", "/webdav/f.txt", owner, "Timeout", "Second-600", "Depth", "0")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	got := lockReply(t, rec)
	token := rec.Header().Get("Lock-Token")
	if !strings.HasPrefix(token, "<urn:uuid:") || token != "<"+got.Token+">" {
		t.Errorf("Lock-Token %q, body token %q", token, got.Token)
	}
	if got.Type.Write == nil || got.Scope.Exclusive == nil || got.Scope.Shared != nil {
		t.Errorf("type or scope: %+v", got)
	}
	if got.Depth != "0" || got.Timeout != "Second-600" || got.Root != "/webdav/f.txt" || got.OwnerName != "Einstein" {
		t.Errorf("activelock %+v", got)
	}
	if got.Owner.Inner != `<href xmlns="DAV:">mailto:einstein@example.org</href>` {
		t.Errorf("owner %q", got.Owner.Inner)
	}
}

func TestLockStatuses(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/p.txt", "p"), http.StatusCreated)
	tests := []struct {
		name, user, path, body string
		hdr                    []string
		status                 int
		exception, msg         string
	}{
		{"malformed body", "einstein", "/webdav/f.txt", "<d:lockinfo", nil, http.StatusBadRequest, "BadRequest", "malformed XML"},
		{"wrong root", "einstein", "/webdav/f.txt", `<d:propfind xmlns:d="DAV:"/>`, nil, http.StatusBadRequest, "BadRequest", "DAV:lockinfo"},
		{"no scope", "einstein", "/webdav/f.txt", `<d:lockinfo xmlns:d="DAV:"><d:locktype><d:write/></d:locktype></d:lockinfo>`, nil, http.StatusBadRequest, "BadRequest", "lockscope"},
		{"two scopes", "einstein", "/webdav/f.txt", `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`, nil, http.StatusBadRequest, "BadRequest", "exactly one"},
		{"no type", "einstein", "/webdav/f.txt", `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope></d:lockinfo>`, nil, http.StatusBadRequest, "BadRequest", "locktype"},
		{"read type", "einstein", "/webdav/f.txt", `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope><d:locktype><d:read/></d:locktype></d:lockinfo>`, nil, http.StatusBadRequest, "BadRequest", "write"},
		{"depth 1", "einstein", "/webdav/f.txt", lockExclusive, []string{"Depth", "1"}, http.StatusBadRequest, "BadRequest", "Depth"},
		{"bad timeout", "einstein", "/webdav/f.txt", lockExclusive, []string{"Timeout", "Minute-3"}, http.StatusBadRequest, "BadRequest", "Timeout"},
		{"parent missing", "einstein", "/webdav/nope/f.txt", lockExclusive, nil, http.StatusConflict, "Conflict", "parent"},
		{"viewer", "richard", "/dav/spaces/physics/p.txt", lockExclusive, nil, http.StatusForbidden, "Forbidden", ""},
		{"viewer unmapped", "richard", "/dav/spaces/physics/new.txt", lockExclusive, nil, http.StatusForbidden, "Forbidden", ""},
		{"non-member", "marie", "/dav/spaces/" + e.personalSpacePath("einstein")[len("/dav/spaces/"):] + "/f.txt", lockExclusive, nil, http.StatusNotFound, "NotFound", ""},
		{"refresh without If", "einstein", "/webdav/f.txt", "", nil, http.StatusBadRequest, "BadRequest", "If header"},
		{"refresh with a malformed If", "einstein", "/webdav/f.txt", "", []string{"If", "(<urn:uuid:x>"}, http.StatusBadRequest, "BadRequest", "If"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.user, "LOCK", tt.path, tt.body, tt.hdr...), tt.status, tt.exception, tt.msg)
		})
	}
	// Nothing was locked or created by the refusals.
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/new.txt", ""), http.StatusNotFound)
	e.lock("einstein", "/webdav/f.txt", lockExclusive)
}

func TestLockUnmappedCreatesFile(t *testing.T) {
	e := newEnv(t, withLocks)
	rec := e.do("einstein", "LOCK", "/webdav/new.txt", lockExclusive)
	wantStatus(t, rec, http.StatusCreated)
	if got := lockReply(t, rec); got.Root != "/webdav/new.txt" {
		t.Errorf("lockroot %q", got.Root)
	}
	get := e.do("einstein", "GET", "/webdav/new.txt", "")
	wantStatus(t, get, http.StatusOK)
	if get.Body.Len() != 0 {
		t.Fatalf("content %q", get.Body.String())
	}
	wantStatus(t, e.do("einstein", "LOCK", "/webdav/new.txt", lockExclusive), http.StatusLocked)
}

func TestLockUnmappedHonoursParentLocks(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	e.lock("einstein", "/webdav/d", lockExclusive)
	rec := e.do("einstein", "LOCK", "/webdav/d/new.txt", lockShared)
	wantError(t, rec, http.StatusLocked, "Locked", "")
	wantCondition(t, rec, "no-conflicting-lock", "/webdav/d/")
	wantStatus(t, e.do("einstein", "GET", "/webdav/d/new.txt", ""), http.StatusNotFound)
}

func TestLockConflicts(t *testing.T) {
	tests := []struct {
		name                   string
		first, second          string
		firstPath, secondPath  string
		firstDepth, secondUser string
		status                 int
		conflictRoot           string
	}{
		{"exclusive then exclusive", lockExclusive, lockExclusive, "f.txt", "f.txt", "0", "marie", http.StatusLocked, "/dav/spaces/physics/f.txt"},
		{"exclusive then shared", lockExclusive, lockShared, "f.txt", "f.txt", "0", "marie", http.StatusLocked, "/dav/spaces/physics/f.txt"},
		{"shared then exclusive", lockShared, lockExclusive, "f.txt", "f.txt", "0", "marie", http.StatusLocked, "/dav/spaces/physics/f.txt"},
		{"shared then shared", lockShared, lockShared, "f.txt", "f.txt", "0", "marie", http.StatusOK, ""},
		{"same user exclusive twice", lockExclusive, lockExclusive, "f.txt", "f.txt", "0", "einstein", http.StatusLocked, "/dav/spaces/physics/f.txt"},
		{"deep folder then member", lockExclusive, lockShared, "d", "d/g.txt", "infinity", "marie", http.StatusLocked, "/dav/spaces/physics/d/"},
		{"shallow folder then member", lockExclusive, lockExclusive, "d", "d/g.txt", "0", "marie", http.StatusOK, ""},
		{"member then deep folder", lockExclusive, lockExclusive, "d/g.txt", "d", "0", "marie", http.StatusLocked, "/dav/spaces/physics/d/g.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withLocks)
			wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
			wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/d", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/d/g.txt", "g"), http.StatusCreated)
			e.lock("einstein", "/dav/spaces/physics/"+tt.firstPath, tt.first, "Depth", tt.firstDepth)
			rec := e.do(tt.secondUser, "LOCK", "/dav/spaces/physics/"+tt.secondPath, tt.second)
			if tt.status == http.StatusOK {
				wantStatus(t, rec, http.StatusOK)
				return
			}
			wantError(t, rec, tt.status, "Locked", "")
			wantCondition(t, rec, "no-conflicting-lock", tt.conflictRoot)
			if rec.Header().Get("Lock-Token") != "" {
				t.Fatal("a refused LOCK sent a Lock-Token")
			}
		})
	}
}

func TestParseTimeout(t *testing.T) {
	const maxTimeout = time.Hour
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", maxTimeout, true},
		{"Infinite", maxTimeout, true},
		{"infinite", maxTimeout, true},
		{"Second-600", 600 * time.Second, true},
		{"second-600", 600 * time.Second, true},
		{"Second-3601", maxTimeout, true},
		{"Second-99999999999999999999999", maxTimeout, true},
		{"Second-0", time.Second, true},
		{"Extended-Foo, Second-30", 30 * time.Second, true},
		{"Second-30, Infinite", 30 * time.Second, true},
		{"Infinite, Second-30", maxTimeout, true},
		{" Second-5 ", 5 * time.Second, true},
		{"Second-", 0, false},
		{"Second--5", 0, false},
		{"Second-+5", 0, false},
		{"Second-abc", 0, false},
		{"Minute-3", 0, false},
		{",", 0, false},
	}
	for _, tt := range tests {
		got, err := parseTimeout(tt.header, maxTimeout)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v, ok %v", tt.header, got, err, tt.want, tt.ok)
		}
	}
}

func TestLockTimeoutCapped(t *testing.T) {
	e := newEnv(t, withLocks, func(c *Config) { c.MaxLockTimeout = 5 * time.Minute })
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/g.txt", "g"), http.StatusCreated)
	for path, timeout := range map[string]string{"/webdav/f.txt": "Infinite", "/webdav/g.txt": "Second-86400"} {
		rec := e.do("einstein", "LOCK", path, lockShared, "Timeout", timeout)
		wantStatus(t, rec, http.StatusOK)
		if got := lockReply(t, rec).Timeout; got != "Second-300" {
			t.Errorf("%s: timeout %q, want Second-300", timeout, got)
		}
	}
	rec := e.do("einstein", "LOCK", "/webdav/f.txt", lockShared)
	wantStatus(t, rec, http.StatusOK)
	if got := lockReply(t, rec).Timeout; got != "Second-300" {
		t.Errorf("no Timeout header: timeout %q, want the maximum", got)
	}
}

func TestLockRefresh(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/d", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/d/g.txt", "g"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/other.txt", "o"), http.StatusCreated)
	token := e.lock("einstein", "/dav/spaces/physics/d", lockExclusive, "Timeout", "Second-100")
	marieToken := e.lock("marie", "/dav/spaces/physics/other.txt", lockExclusive)
	for _, path := range []string{"/dav/spaces/physics/d", "/dav/spaces/physics/d/g.txt"} {
		rec := e.do("einstein", "LOCK", path, "", "If", "(<"+token+">)", "Timeout", "Second-500")
		wantStatus(t, rec, http.StatusOK)
		got := lockReply(t, rec)
		if got.Token != token || got.Timeout != "Second-500" || got.Root != "/dav/spaces/physics/d/" || got.Depth != "infinity" {
			t.Errorf("refresh via %s: %+v", path, got)
		}
		if rec.Header().Get("Lock-Token") != "" {
			t.Errorf("refresh via %s sent a Lock-Token", path)
		}
	}
	tests := []struct {
		name, user, path, token string
	}{
		{"unknown token", "einstein", "/dav/spaces/physics/d", "urn:uuid:00000000-0000-0000-0000-000000000000"},
		{"another user's lock", "marie", "/dav/spaces/physics/d", token},
		{"a lock not covering the resource", "marie", "/dav/spaces/physics/d", marieToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, "LOCK", tt.path, "", "If", "(<"+tt.token+">)")
			wantError(t, rec, http.StatusPreconditionFailed, "PreconditionFailed", "")
		})
	}
}

func TestUnlock(t *testing.T) {
	tests := []struct {
		name, user, path string
		token            func(own, marie string) string
		status           int
	}{
		{"lock root", "einstein", "d", func(own, _ string) string { return "<" + own + ">" }, http.StatusNoContent},
		{"bare token", "einstein", "d", func(own, _ string) string { return own }, http.StatusNoContent},
		{"member of the locked folder", "einstein", "d/g.txt", func(own, _ string) string { return "<" + own + ">" }, http.StatusNoContent},
		{"missing header", "einstein", "d", func(string, string) string { return "" }, http.StatusBadRequest},
		{"empty coded URL", "einstein", "d", func(string, string) string { return "<>" }, http.StatusBadRequest},
		{"unknown token", "einstein", "d", func(string, string) string { return "<urn:uuid:nope>" }, http.StatusConflict},
		{"another user's token", "marie", "d", func(own, _ string) string { return "<" + own + ">" }, http.StatusConflict},
		{"resource the lock does not cover", "marie", "d", func(_, marie string) string { return "<" + marie + ">" }, http.StatusConflict},
		{"missing resource", "einstein", "nope", func(own, _ string) string { return "<" + own + ">" }, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withLocks)
			wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/d", ""), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/d/g.txt", "g"), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/other.txt", "o"), http.StatusCreated)
			own := e.lock("einstein", "/dav/spaces/physics/d", lockExclusive)
			marie := e.lock("marie", "/dav/spaces/physics/other.txt", lockExclusive)
			var hdr []string
			if v := tt.token(own, marie); v != "" {
				hdr = []string{"Lock-Token", v}
			}
			rec := e.do(tt.user, "UNLOCK", "/dav/spaces/physics/"+tt.path, "", hdr...)
			if tt.status == http.StatusNoContent {
				wantStatus(t, rec, tt.status)
				// The lock is gone: another user can lock, and the token
				// is stale.
				e.lock("marie", "/dav/spaces/physics/d", lockExclusive)
				stale := e.do("einstein", "UNLOCK", "/dav/spaces/physics/d", "", "Lock-Token", "<"+own+">")
				wantError(t, stale, http.StatusConflict, "Conflict", "")
				return
			}
			wantError(t, rec, tt.status, exceptionFor(tt.status)[len(`Sabre\DAV\Exception\`):], "")
			if tt.status == http.StatusConflict {
				wantCondition(t, rec, "lock-token-matches-request-uri", "")
			}
			wantStatus(t, e.do("marie", "LOCK", "/dav/spaces/physics/d", lockExclusive), http.StatusLocked)
		})
	}
}

func TestPropfindLockDiscovery(t *testing.T) {
	e := newEnv(t, withLocks, func(c *Config) { c.AllowDepthInfinity = true })
	for _, p := range []string{"a", "b", "c"} {
		wantStatus(t, e.do("einstein", "MKCOL", "/webdav/"+p, ""), http.StatusCreated)
		wantStatus(t, e.do("einstein", "PUT", "/webdav/"+p+"/f.txt", "f"), http.StatusCreated)
		wantStatus(t, e.do("einstein", "PUT", "/webdav/"+p+"/g.txt", "g"), http.StatusCreated)
	}
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a/sub", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/a/sub/h.txt", "h"), http.StatusCreated)
	deep := e.lock("einstein", "/webdav/a", lockShared)
	own := e.lock("einstein", "/webdav/a/f.txt", lockShared)
	both := []string{deep, own}
	slices.Sort(both) // locks are shown ordered by token
	shallow := e.lock("einstein", "/webdav/b", lockExclusive, "Depth", "0")
	body := strings.Replace(propfindBody, "%s", "<d:lockdiscovery/><d:supportedlock/>", 1)
	want := map[string][]string{
		"/webdav/":             nil,
		"/webdav/a/":           {deep},
		"/webdav/a/f.txt":      both,
		"/webdav/a/g.txt":      {deep},
		"/webdav/a/sub/":       {deep},
		"/webdav/a/sub/h.txt":  {deep},
		"/webdav/b/":           {shallow},
		"/webdav/b/f.txt":      nil,
		"/webdav/c/":           nil,
		"/webdav/c/g.txt":      nil,
		"/webdav/personal.txt": nil,
	}
	for _, req := range []struct{ path, depth string }{
		{"/webdav/", "1"}, {"/webdav/a", "1"}, {"/webdav/a/sub", "1"}, {"/webdav/a/f.txt", "0"},
		{"/webdav/b", "1"}, {"/webdav/", "infinity"},
	} {
		res := parseMultistatus(t, e.do("einstein", "PROPFIND", req.path, body, "Depth", req.depth))
		for _, r := range res {
			wantTokens, listed := want[r.Href]
			if !listed {
				continue
			}
			var tokens []string
			for _, l := range parseActiveLocks(t, r.Props["DAV: lockdiscovery"]) {
				tokens = append(tokens, l.Token)
			}
			if _, ok := r.Props["DAV: lockdiscovery"]; !ok || strings.Join(tokens, " ") != strings.Join(wantTokens, " ") {
				t.Errorf("PROPFIND %s depth %s: %s has locks %q, want %q", req.path, req.depth, r.Href, tokens, wantTokens)
			}
			if !strings.Contains(r.Props["DAV: supportedlock"], "<d:shared/>") || !strings.Contains(r.Props["DAV: supportedlock"], "<d:exclusive/>") {
				t.Errorf("%s: supportedlock %q", r.Href, r.Props["DAV: supportedlock"])
			}
		}
	}
}

// TestPropfindLockDiscoveryShape: PROPFIND shows a lock as the LOCK reply
// did, with the remaining time.
func TestPropfindLockDiscoveryShape(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
	reply := lockReply(t, e.do("einstein", "LOCK", "/webdav/f.txt", lockExclusive, "Timeout", "Second-3600"))
	body := strings.Replace(propfindBody, "%s", "<d:lockdiscovery/>", 1)
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", body, "Depth", "0"))
	locks := parseActiveLocks(t, res[0].Props["DAV: lockdiscovery"])
	if len(locks) != 1 {
		t.Fatalf("lockdiscovery %q", res[0].Props["DAV: lockdiscovery"])
	}
	got := locks[0]
	if got.Timeout != "Second-3600" && got.Timeout != "Second-3599" {
		t.Errorf("timeout %q", got.Timeout)
	}
	got.Timeout = reply.Timeout
	if got != reply {
		t.Errorf("PROPFIND shows %+v, LOCK replied %+v", got, reply)
	}
	if got.Owner.Inner != "litmus test suite" {
		t.Errorf("owner %q", got.Owner.Inner)
	}
}

func TestPropfindLockPropsAllprop(t *testing.T) {
	for _, locking := range []bool{false, true} {
		opts := []func(*Config){}
		if locking {
			opts = append(opts, withLocks)
		}
		e := newEnv(t, opts...)
		wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
		res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", "", "Depth", "0"))
		_, discovery := res[0].Props["DAV: lockdiscovery"]
		_, supported := res[0].Props["DAV: supportedlock"]
		if discovery != locking || supported != locking {
			t.Errorf("locking %v: allprop has lockdiscovery %v, supportedlock %v", locking, discovery, supported)
		}
		if locking && res[0].Props["DAV: lockdiscovery"] != "" {
			t.Errorf("an unlocked file shows locks: %q", res[0].Props["DAV: lockdiscovery"])
		}
		body := strings.Replace(propfindBody, "%s", "<d:lockdiscovery/><d:supportedlock/>", 1)
		res = parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", body, "Depth", "0"))
		if (len(res[0].NotFound) == 0) != locking {
			t.Errorf("locking %v: not found %q", locking, res[0].NotFound)
		}
	}
}

func TestOptionsAdvertiseLocks(t *testing.T) {
	tests := []struct {
		locking     bool
		dav         string
		lockAllowed bool
		lockStatus  int
	}{
		{false, "1, 3", false, http.StatusNotImplemented},
		{true, "1, 2, 3", true, http.StatusOK},
	}
	for _, tt := range tests {
		var opts []func(*Config)
		if tt.locking {
			opts = append(opts, withLocks)
		}
		e := newEnv(t, opts...)
		wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
		rec := e.do("", "OPTIONS", "/webdav/", "")
		allow := rec.Header().Get("Allow")
		if rec.Header().Get("DAV") != tt.dav || strings.Contains(allow, "LOCK") != tt.lockAllowed || strings.Contains(allow, "UNLOCK") != tt.lockAllowed {
			t.Errorf("locking %v: DAV %q, Allow %q", tt.locking, rec.Header().Get("DAV"), allow)
		}
		mkcol := e.do("einstein", "MKCOL", "/webdav/f.txt", "")
		wantStatus(t, mkcol, http.StatusMethodNotAllowed)
		if strings.HasSuffix(mkcol.Header().Get("Allow"), ", LOCK, UNLOCK") != tt.lockAllowed {
			t.Errorf("locking %v: 405 Allow %q", tt.locking, mkcol.Header().Get("Allow"))
		}
		wantStatus(t, e.do("einstein", "LOCK", "/webdav/f.txt", lockExclusive), tt.lockStatus)
	}
}

// TestLockHonoursIf: a LOCK changes state, so its If header must hold, and
// a LOCK that creates a file must submit the tokens a PUT there would.
func TestLockHonoursIf(t *testing.T) {
	e := newEnv(t, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", "/dav/spaces/physics/d", ""), http.StatusCreated)
	etag := e.do("einstein", "HEAD", "/dav/spaces/physics/f.txt", "").Header().Get("ETag")
	wantError(t, e.do("einstein", "LOCK", "/dav/spaces/physics/f.txt", lockShared, "If", `(["nope"])`),
		http.StatusPreconditionFailed, "PreconditionFailed", "")
	token := e.lock("einstein", "/dav/spaces/physics/f.txt", lockShared, "If", "(["+etag+"])")
	wantError(t, e.do("einstein", "LOCK", "/dav/spaces/physics/f.txt", "", "If", "(<"+token+`> ["nope"])`),
		http.StatusPreconditionFailed, "PreconditionFailed", "")

	marie := e.lock("marie", "/dav/spaces/physics/d", lockShared)
	rec := e.do("einstein", "LOCK", "/dav/spaces/physics/d/new.txt", lockShared)
	wantError(t, rec, http.StatusLocked, "Locked", "")
	wantCondition(t, rec, "lock-token-submitted", "/dav/spaces/physics/d/")
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/d/new.txt", ""), http.StatusNotFound)
	wantStatus(t, e.do("marie", "LOCK", "/dav/spaces/physics/d/new.txt", lockShared, "If", "(<"+marie+">)"), http.StatusCreated)
}
