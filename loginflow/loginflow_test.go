package loginflow

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// testClock is a clock the tests move on.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is a Handler on a fresh store. A request's X-User header names
// its signed-in user, X-App-Password the app password it signed in with,
// X-Address its client's address.
type fixture struct {
	t     *testing.T
	h     *Handler
	store *boltstore.Store
	clock *testClock
	page  []string // the clients the page was shown for, "" when not found
}

// recordedPage is a Page that records what it is shown for.
type recordedPage struct{ f *fixture }

func (p recordedPage) ServeLoginFlow(w http.ResponseWriter, r *http.Request, client string, found bool) {
	if !found {
		client = ""
		w.WriteHeader(http.StatusNotFound)
	}
	p.f.page = append(p.f.page, client)
}

const desktopAgent = "laptop (Desktop Client - Linux)"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{t: t, store: store, clock: &testClock{now: time.Now().UTC()}}
	passwords, err := apppass.New(apppass.Config{
		Store: store,
		User: func(r *http.Request) (storage.User, bool) {
			id := r.Header.Get("X-User")
			return storage.User{ID: id, DisplayName: strings.ToUpper(id)}, id != ""
		},
		UsedPassword: func(r *http.Request) string { return r.Header.Get("X-App-Password") },
		Now:          f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h, err = New(Config{
		Flows:         store,
		AppPasswords:  passwords,
		Budgets:       store,
		ClientAddress: func(r *http.Request) string { return r.Header.Get("X-Address") },
		Page:          recordedPage{f},
		Now:           f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// do serves a request; header holds name, value pairs.
func (f *fixture) do(method, target, body string, header ...string) *httptest.ResponseRecorder {
	f.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("X-Address", "192.0.2.1")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h, ok := f.h.Route(r)
	if !ok {
		f.t.Fatalf("%s %s is not routed", method, target)
	}
	h.ServeHTTP(w, r)
	return w
}

// start starts a flow and returns the answer.
func (f *fixture) start(header ...string) startAnswer {
	f.t.Helper()
	w := f.do(http.MethodPost, "http://cloud.example"+StartPath, "", append([]string{"User-Agent", desktopAgent}, header...)...)
	var a startAnswer
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &a) != nil {
		f.t.Fatalf("start: %d %s", w.Code, w.Body)
	}
	return a
}

func loginToken(t *testing.T, a startAnswer) string {
	t.Helper()
	u, err := url.Parse(a.Login)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, FlowPrefix)
}

func (f *fixture) poll(token string) *httptest.ResponseRecorder {
	f.t.Helper()
	return f.do(http.MethodPost, "http://cloud.example"+PollPath, url.Values{"token": {token}}.Encode())
}

func (f *fixture) grant(token string, header ...string) *httptest.ResponseRecorder {
	f.t.Helper()
	return f.do(http.MethodPost, "http://cloud.example"+GrantPath, url.Values{"token": {token}}.Encode(), header...)
}

// TestFlowGrantedThenPolledOnce is the flow as nextcloud/desktop's
// src/gui/creds/flow2auth.cpp drives it, answered in the shapes of
// nextcloud/server's ClientFlowLoginV2Controller.php.
func TestFlowGrantedThenPolledOnce(t *testing.T) {
	f := newFixture(t)
	a := f.start()
	login := loginToken(t, a)
	if a.Poll.Endpoint != "http://cloud.example"+PollPath || !strings.HasPrefix(a.Login, "http://cloud.example"+FlowPrefix) {
		t.Fatalf("start answered %+v", a)
	}
	// 256 bits each, not guessable, and not one another.
	if len(a.Poll.Token) != TokenLen || len(login) != TokenLen || TokenLen*5 < 256 || a.Poll.Token == login {
		t.Fatalf("tokens %q and %q", a.Poll.Token, login)
	}
	if w := f.poll(a.Poll.Token); w.Code != http.StatusNotFound || strings.TrimSpace(w.Body.String()) != "[]" {
		t.Fatalf("poll before the grant: %d %s", w.Code, w.Body)
	}

	// The browser: the page, the client's name without a user, the
	// account once signed in.
	if w := f.do(http.MethodGet, a.Login, "", "Accept", "text/html"); w.Code != http.StatusOK || len(f.page) != 1 || f.page[0] != desktopAgent {
		t.Fatalf("the login URL in a browser: %d %q", w.Code, f.page)
	}
	if w := f.do(http.MethodGet, FlowPrefix+strings.Repeat("d", TokenLen), "", "Accept", "text/html"); w.Code != http.StatusNotFound || len(f.page) != 2 || f.page[1] != "" {
		t.Fatalf("an unknown login URL in a browser: %d %q", w.Code, f.page)
	}
	if w := f.do(http.MethodGet, a.Login, "", "Accept", "application/json"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"client":"`+desktopAgent+`"`) {
		t.Fatalf("the flow's client: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodGet, "http://cloud.example"+GrantPath+"?token="+login, ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("the grant's account without a user: %d %s", w.Code, w.Body)
	}
	if w := f.grant(login); w.Code != http.StatusUnauthorized {
		t.Fatalf("a grant without a user: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodGet, "http://cloud.example"+GrantPath+"?token="+login, "", "X-User", "alice"); w.Code != http.StatusOK ||
		!strings.Contains(w.Body.String(), `"user":"alice","displayName":"ALICE"`) {
		t.Fatalf("the grant's account: %d %s", w.Code, w.Body)
	}
	if w := f.grant(login, "X-User", "alice"); w.Code != http.StatusOK {
		t.Fatalf("grant: %d %s", w.Code, w.Body)
	}
	if w := f.grant(login, "X-User", "alice"); w.Code != http.StatusConflict {
		t.Fatalf("a second grant: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodGet, "http://cloud.example"+GrantPath+"?token="+login, "", "X-User", "alice"); !strings.Contains(w.Body.String(), `"granted":true`) {
		t.Fatalf("the grant's account once granted: %d %s", w.Code, w.Body)
	}

	w := f.poll(a.Poll.Token)
	var got pollAnswer
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &got) != nil {
		t.Fatalf("poll after the grant: %d %s", w.Code, w.Body)
	}
	if got.Server != "http://cloud.example" || got.LoginName != "alice" || !apppass.LooksLike(got.AppPassword) {
		t.Fatalf("poll answered %+v", got)
	}
	list, err := f.store.AppPasswords(t.Context(), "alice")
	if err != nil || len(list) != 1 || list[0].Label != desktopAgent || !strings.HasPrefix(got.AppPassword, list[0].ID) {
		t.Fatalf("alice's app passwords: %+v, %v", list, err)
	}
	if w := f.poll(a.Poll.Token); w.Code != http.StatusNotFound {
		t.Fatalf("a second poll: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodGet, a.Login, "", "Accept", "application/json"); w.Code != http.StatusNotFound {
		t.Fatalf("the flow once polled: %d %s", w.Code, w.Body)
	}
}

// TestFlowHostile: what is not a flow's is refused and changes nothing.
func TestFlowHostile(t *testing.T) {
	f := newFixture(t)
	a := f.start()
	login := loginToken(t, a)
	for _, tc := range []struct {
		name   string
		w      *httptest.ResponseRecorder
		status int
	}{
		{"a poll with the login token", f.poll(login), http.StatusNotFound},
		{"a poll of a guess", f.poll(strings.Repeat("a", TokenLen)), http.StatusNotFound},
		{"a poll without a token", f.poll(""), http.StatusNotFound},
		{"a GET poll", f.do(http.MethodGet, PollPath+"?token="+a.Poll.Token, ""), http.StatusMethodNotAllowed},
		{"a GET start", f.do(http.MethodGet, StartPath, ""), http.StatusMethodNotAllowed},
		{"a grant with the poll token", f.grant(a.Poll.Token, "X-User", "alice"), http.StatusNotFound},
		{"a grant of an unknown flow", f.grant(strings.Repeat("b", TokenLen), "X-User", "alice"), http.StatusNotFound},
		{"a grant signed in with an app password", f.grant(login, "X-User", "alice", "X-App-Password", "aaaaaaaaaaaaaaaa"), http.StatusForbidden},
		{"the client of an unknown flow", f.do(http.MethodGet, FlowPrefix+"unknown", "", "Accept", "application/json"), http.StatusNotFound},
		{"a cancel of an unknown flow", f.do(http.MethodDelete, FlowPrefix+strings.Repeat("c", TokenLen), ""), http.StatusNotFound},
	} {
		if tc.w.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, tc.w.Code, tc.w.Body, tc.status)
		}
	}
	if list, _ := f.store.AppPasswords(t.Context(), "alice"); len(list) != 0 {
		t.Fatalf("refused grants left %d app passwords", len(list))
	}
	// Cancelled, the flow is gone for the browser and the client.
	if w := f.do(http.MethodDelete, a.Login, ""); w.Code != http.StatusNoContent {
		t.Fatalf("cancel: %d %s", w.Code, w.Body)
	}
	if w := f.grant(login, "X-User", "alice"); w.Code != http.StatusNotFound {
		t.Fatalf("a grant once cancelled: %d %s", w.Code, w.Body)
	}
}

// TestFlowExpires: 20 minutes after its start a flow is gone, granted or
// not.
func TestFlowExpires(t *testing.T) {
	f := newFixture(t)
	waiting, granted := f.start(), f.start()
	if w := f.grant(loginToken(t, granted), "X-User", "alice"); w.Code != http.StatusOK {
		t.Fatalf("grant: %d %s", w.Code, w.Body)
	}
	f.clock.Advance(storage.LoginFlowTTL)
	if w := f.grant(loginToken(t, waiting), "X-User", "alice"); w.Code != http.StatusNotFound {
		t.Fatalf("a grant of an expired flow: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodGet, waiting.Login, "", "Accept", "application/json"); w.Code != http.StatusNotFound {
		t.Fatalf("an expired flow's client: %d %s", w.Code, w.Body)
	}
	if w := f.poll(granted.Poll.Token); w.Code != http.StatusNotFound {
		t.Fatalf("a poll of an expired grant: %d %s", w.Code, w.Body)
	}
}

// TestStartsCappedPerAddress: an address starts DefaultStartsPerAddress
// flows within their lifetime, then waits; another address does not.
func TestStartsCappedPerAddress(t *testing.T) {
	f := newFixture(t)
	for range DefaultStartsPerAddress {
		f.start()
	}
	w := f.do(http.MethodPost, StartPath, "")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("a start beyond the budget: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	f.start("X-Address", "198.51.100.7")
	f.clock.Advance(storage.LoginFlowTTL)
	f.start()
}

// TestPrettyPaths: the paths without /index.php are the same.
func TestPrettyPaths(t *testing.T) {
	f := newFixture(t)
	w := f.do(http.MethodPost, "/login/v2", "", "User-Agent", "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")
	var a startAnswer
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &a) != nil {
		t.Fatalf("start: %d %s", w.Code, w.Body)
	}
	if w := f.grant(loginToken(t, a), "X-User", "alice"); w.Code != http.StatusOK {
		t.Fatalf("grant: %d %s", w.Code, w.Body)
	}
	if w := f.do(http.MethodPost, "/login/v2/poll", url.Values{"token": {a.Poll.Token}}.Encode()); w.Code != http.StatusOK {
		t.Fatalf("poll: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/login/v2/flow/x", FlowPrefix + "x"} {
		if !IsPage(p) {
			t.Errorf("IsPage(%q) = false", p)
		}
	}
	for _, p := range []string{FlowPrefix, FlowPrefix + "x/y", "/index.php/login/v2", "/login/flow"} {
		if IsPage(p) {
			t.Errorf("IsPage(%q) = true", p)
		}
	}
}

// TestSealOpensWithItsPollTokenOnly: what the store keeps of a grant opens
// with the poll token and nothing else.
func TestSealOpensWithItsPollTokenOnly(t *testing.T) {
	token, other := newToken(), newToken()
	public, err := publicOf(token)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := seal(public, "the app password")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "the app password") {
		t.Fatal("the sealed password holds the password")
	}
	if got, err := open(token, sealed); err != nil || got != "the app password" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := open(other, sealed); err == nil {
		t.Fatal("another poll token opened the password")
	}
	if !validToken(token) || validToken(token[1:]) || validToken(strings.ToUpper(token)) {
		t.Fatal("validToken")
	}
}
