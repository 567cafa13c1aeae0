package apppass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/passwordguard"
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

func openStore(t *testing.T) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newService serves the user named by the X-User header; X-App-Password
// names the app password the request signed in with.
func newService(t *testing.T, store storage.AppPasswords, revoked func(string)) *Service {
	t.Helper()
	s, err := New(Config{
		Store: store,
		User: func(r *http.Request) (storage.User, bool) {
			id := r.Header.Get("X-User")
			return storage.User{ID: id}, id != ""
		},
		UsedPassword: func(r *http.Request) string { return r.Header.Get("X-App-Password") },
		Revoked:      revoked,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(s *Service, method, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h, ok := s.Route(r)
	if !ok {
		w.WriteHeader(http.StatusTeapot)
		return w
	}
	h.ServeHTTP(w, r)
	return w
}

// TestTokens drives oCIS's auth-app API as its clients do; the JSON
// shape (token, expiration_date, created_date, label) is oCIS's
// AuthAppToken, owncloud/ocis services/auth-app/pkg/service/service.go.
func TestTokens(t *testing.T) {
	var revoked []string
	s := newService(t, openStore(t), func(id string) { revoked = append(revoked, id) })
	w := serve(s, http.MethodPost, TokensPath+"?expiry=72h&label=rclone", "X-User", "einstein")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	var made map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &made); err != nil {
		t.Fatal(err)
	}
	password, _ := made["token"].(string)
	id, _, ok := storage.SplitAppPassword(password)
	created, _ := time.Parse(time.RFC3339, fmt.Sprint(made["created_date"]))
	expires, _ := time.Parse(time.RFC3339, fmt.Sprint(made["expiration_date"]))
	if !ok || made["label"] != "rclone" || expires.Sub(created) != 72*time.Hour {
		t.Fatalf("POST answered %s", w.Body)
	}

	w = serve(s, http.MethodGet, TokensPath, "X-User", "einstein")
	var list []map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
	if len(list) != 1 || list[0]["token"] != id || strings.Contains(w.Body.String(), password) {
		t.Fatalf("GET lists %s, want the id alone", w.Body)
	}
	if w := serve(s, http.MethodGet, TokensPath, "X-User", "marie"); strings.TrimSpace(w.Body.String()) != "[]" {
		t.Fatalf("another user's list: %s", w.Body)
	}
	if w := serve(s, http.MethodDelete, TokensPath+"?token="+id, "X-User", "marie"); w.Code != http.StatusNotFound {
		t.Fatalf("DELETE of another user's: %d", w.Code)
	}
	if w := serve(s, http.MethodDelete, TokensPath+"?token="+password, "X-User", "einstein"); w.Code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	if len(revoked) != 1 || revoked[0] != id {
		t.Fatalf("revoked %v, want %s", revoked, id)
	}
	if w := serve(s, http.MethodDelete, TokensPath+"?token="+id, "X-User", "einstein"); w.Code != http.StatusNotFound {
		t.Fatalf("DELETE twice: %d", w.Code)
	}
}

func TestTokensRefused(t *testing.T) {
	s := newService(t, openStore(t), nil)
	for _, tc := range []struct {
		name, method, target string
		hdr                  []string
		want                 int
	}{
		{"no user", http.MethodPost, TokensPath, nil, http.StatusUnauthorized},
		{"an app password's request", http.MethodPost, TokensPath, []string{"X-App-Password", "aaaaaaaaaaaaaaaa"}, http.StatusForbidden},
		{"an expiry not a duration", http.MethodPost, TokensPath + "?expiry=3days", nil, http.StatusBadRequest},
		{"a negative expiry", http.MethodPost, TokensPath + "?expiry=-1h", nil, http.StatusBadRequest},
		{"a long label", http.MethodPost, TokensPath + "?label=" + strings.Repeat("x", storage.MaxAppPasswordLabel+1), nil, http.StatusBadRequest},
		{"no token to delete", http.MethodDelete, TokensPath, nil, http.StatusBadRequest},
		{"a method", http.MethodPut, TokensPath, nil, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr
			if tc.name != "no user" {
				hdr = append([]string{"X-User", "einstein"}, hdr...)
			}
			w := serve(s, tc.method, tc.target, hdr...)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), "<d:error") {
				t.Fatalf("%d %s, want %d with the WebDAV error body", w.Code, w.Body, tc.want)
			}
		})
		if w := serve(s, http.MethodGet, TokensPath, "X-User", "einstein"); strings.TrimSpace(w.Body.String()) != "[]" {
			t.Fatalf("%s made a password: %s", tc.name, w.Body)
		}
	}
}

func TestTokensCap(t *testing.T) {
	store := openStore(t)
	now := time.Now()
	for i := range storage.MaxAppPasswordsPerUser {
		id := fmt.Sprintf("%016d", i)
		id = strings.Map(func(r rune) rune { return 'a' + r - '0' }, id)
		p := storage.AppPassword{ID: id, User: "einstein", Hash: []byte("h"), Created: now}
		if err := store.CreateAppPassword(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	s := newService(t, store, nil)
	if w := serve(s, http.MethodPost, TokensPath, "X-User", "einstein"); w.Code != http.StatusInsufficientStorage {
		t.Fatalf("POST past the cap: %d %s", w.Code, w.Body)
	}
	if w := serve(s, http.MethodPost, TokensPath, "X-User", "marie"); w.Code != http.StatusOK {
		t.Fatalf("another user's POST: %d %s", w.Code, w.Body)
	}
}

func newVerifier(t *testing.T, store storage.Backend, clk *testClock) *Verifier {
	t.Helper()
	g, err := passwordguard.New(passwordguard.Options{Budgets: store, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifierConfig{Store: store, Guard: g, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// makePassword stores a new app password of user and returns it, its hash
// made again at bcrypt's lowest cost: the verifier compares at the cost the
// hash names, and under the race detector a compare at the default cost
// takes seconds of CPU. The cost app passwords get is storage's to pin.
func makePassword(t *testing.T, store storage.AppPasswords, user string, expires, now time.Time) (storage.AppPassword, string) {
	t.Helper()
	p, password, err := storage.NewAppPassword(user, "", expires, now, storage.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, _ := storage.SplitAppPassword(password)
	if p.Hash, err = bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateAppPassword(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p, password
}

// TestVerifierRemembersUntilRevoked checks that a verified password is
// taken without a compare, that a revocation on another node reaches this
// one within DefaultRecheck, and one here at once.
func TestVerifierRemembersUntilRevoked(t *testing.T) {
	store := openStore(t)
	clk := &testClock{now: time.Now()}
	v := newVerifier(t, store, clk)
	p, password := makePassword(t, store, "einstein", time.Time{}, clk.Now())
	check := func() error {
		_, err := v.Check(t.Context(), "einstein", password, "192.0.2.1")
		return err
	}
	if err := check(); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if got, _ := store.AppPassword(t.Context(), p.ID); got.LastUsed.IsZero() {
		t.Fatal("last used not written")
	}
	// Another node revokes it: this one takes it until its recheck.
	if err := store.DeleteAppPassword(t.Context(), "einstein", p.ID); err != nil {
		t.Fatal(err)
	}
	if err := check(); err != nil {
		t.Fatalf("within the recheck: %v", err)
	}
	clk.Advance(DefaultRecheck)
	if err := check(); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("after the recheck: %v, want refused", err)
	}

	p, password = makePassword(t, store, "einstein", time.Time{}, clk.Now())
	if err := check(); err != nil {
		t.Fatalf("right password: %v", err)
	}
	v.Forget(p.ID)
	if err := store.DeleteAppPassword(t.Context(), "einstein", p.ID); err != nil {
		t.Fatal(err)
	}
	if err := check(); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("revoked here: %v, want refused at once", err)
	}
}

func TestVerifierRefuses(t *testing.T) {
	store := openStore(t)
	clk := &testClock{now: time.Now()}
	v := newVerifier(t, store, clk)
	_, password := makePassword(t, store, "einstein", clk.Now().Add(time.Hour), clk.Now())
	for _, tc := range []struct{ name, user, password string }{
		{"another user", "marie", password},
		{"a wrong secret", "einstein", password[:storage.AppPasswordIDLen] + strings.Repeat("a", len(password)-storage.AppPasswordIDLen)},
		{"an unknown id", "einstein", strings.Repeat("b", len(password))},
		{"no app password", "einstein", "relativity"},
	} {
		if _, err := v.Check(t.Context(), tc.user, tc.password, "192.0.2.9"); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("%s: %v, want ErrWrongPassword", tc.name, err)
		}
	}
	clk.Advance(time.Hour)
	if _, err := v.Check(t.Context(), "einstein", password, "192.0.2.10"); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("expired: %v, want ErrWrongPassword", err)
	}
}

// TestVerifierBudgets sends wrong passwords from one address until it is
// refused without a compare; another address still gets checked, and the
// user's budget, over every address, refuses too in the end.
func TestVerifierBudgets(t *testing.T) {
	store := openStore(t)
	clk := &testClock{now: time.Now()}
	v := newVerifier(t, store, clk)
	_, password := makePassword(t, store, "einstein", time.Time{}, clk.Now())
	wrong := password[:storage.AppPasswordIDLen] + strings.Repeat("a", len(password)-storage.AppPasswordIDLen)
	var refusal *passwordguard.Refusal
	for i := range AddressBudget.Limit {
		if _, err := v.Check(t.Context(), "einstein", wrong, "192.0.2.1"); !errors.Is(err, ErrWrongPassword) {
			t.Fatalf("guess %d: %v", i+1, err)
		}
	}
	if _, err := v.Check(t.Context(), "einstein", password, "192.0.2.1"); !errors.As(err, &refusal) || refusal.RetryAfter <= 0 {
		t.Fatalf("past the address budget: %v, want a refusal", err)
	}
	if _, err := v.Check(t.Context(), "einstein", password, "192.0.2.2"); err != nil {
		t.Fatalf("from another address: %v", err)
	}
}

// countingStore counts the attempts taken and the records read.
type countingStore struct {
	*boltstore.Store
	mu           sync.Mutex
	taken, reads int
}

func (c *countingStore) TakeAttempt(ctx context.Context, key string, b storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	c.mu.Lock()
	c.taken++
	c.mu.Unlock()
	return c.Store.TakeAttempt(ctx, key, b, now)
}

func (c *countingStore) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Store.AppPassword(ctx, id)
}

// TestVerifierOneCompareForASync checks the requests of a sync of 5,000
// files over two minutes: one compare (one attempt per budget) in all,
// and a read of the record at most once per DefaultRecheck.
func TestVerifierOneCompareForASync(t *testing.T) {
	store := &countingStore{Store: openStore(t)}
	clk := &testClock{now: time.Now()}
	v := newVerifier(t, store, clk)
	_, password := makePassword(t, store, "einstein", time.Time{}, clk.Now())
	const requests, span = 5000, 2 * time.Minute
	for i := range requests {
		if _, err := v.Check(t.Context(), "einstein", password, "192.0.2.1"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		clk.Advance(span / requests)
	}
	wantReads := int(span/DefaultRecheck) + 1
	t.Logf("%d requests: %d attempts taken, %d reads of the record", requests, store.taken, store.reads)
	if store.taken != 2 || store.reads > wantReads {
		t.Fatalf("%d attempts taken and %d reads, want 2 (one compare) and at most %d", store.taken, store.reads, wantReads)
	}
}
