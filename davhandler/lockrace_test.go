package davhandler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// blindLocks is a lock store whose LocksOn sees no lock: the handler's own
// check passes as it would just before a LOCK is granted, so what stops
// the change is the store's check in its write transaction.
type blindLocks struct{ storage.LockStore }

func (blindLocks) LocksOn(context.Context, string, string, bool) ([]storage.Lock, error) {
	return nil, nil
}

func withBlindLocks(cfg *Config) {
	withLocks(cfg)
	cfg.Locks = blindLocks{cfg.Locks}
}

// withToken submits token in an If header whose first list names it and
// whose second holds, although the blind lock store shows no lock the
// token could match.
func withToken(token string) []string {
	return []string{"If", "(<" + token + ">) (Not <DAV:no-lock>)"}
}

// TestStoreRefusesLockGrantedAfterCheck: a lock the handler's check missed
// still answers 423 naming its root, with the body of the handler's own
// check, for every method that hands the submitted tokens to the store;
// with the token the change goes through.
func TestStoreRefusesLockGrantedAfterCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lockPath string
		depth    string
		do       func(e *env, hdr ...string) *httptest.ResponseRecorder
		ok       int
	}{
		{"PUT", "/webdav/f.txt", "0", func(e *env, hdr ...string) *httptest.ResponseRecorder {
			return e.do("einstein", "PUT", "/webdav/f.txt", "new", hdr...)
		}, http.StatusNoContent},
		{"PUT creating", "/webdav/", "0", func(e *env, hdr ...string) *httptest.ResponseRecorder {
			return e.do("einstein", "PUT", "/webdav/new.txt", "new", hdr...)
		}, http.StatusCreated},
		{"DELETE", "/webdav/f.txt", "0", func(e *env, hdr ...string) *httptest.ResponseRecorder {
			return e.do("einstein", "DELETE", "/webdav/f.txt", "", hdr...)
		}, http.StatusNoContent},
		{"MOVE", "/webdav/f.txt", "0", func(e *env, hdr ...string) *httptest.ResponseRecorder {
			return e.do("einstein", "MOVE", "/webdav/f.txt", "", append([]string{"Destination", "/webdav/h.txt"}, hdr...)...)
		}, http.StatusCreated},
		{"COPY", "/webdav/f.txt", "0", func(e *env, hdr ...string) *httptest.ResponseRecorder {
			return e.do("einstein", "COPY", "/webdav/g.txt", "", append([]string{"Destination", "/webdav/f.txt"}, hdr...)...)
		}, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withBlindLocks)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)
			wantStatus(t, e.do("einstein", "PUT", "/webdav/g.txt", "g"), http.StatusCreated)
			token := e.lock("einstein", tc.lockPath, lockExclusive, "Depth", tc.depth)
			rec := tc.do(e)
			wantStatus(t, rec, http.StatusLocked)
			wantCondition(t, rec, "lock-token-submitted", tc.lockPath)
			wantStatus(t, tc.do(e, withToken(token)...), tc.ok)
		})
	}
	t.Run("TUS completion", func(t *testing.T) {
		e := newEnv(t, withUploads, withBlindLocks)
		loc := e.tusStart("einstein", "/webdav/", "a.txt", 3)
		token := e.lock("einstein", "/webdav/", lockExclusive, "Depth", "0")
		rec := e.tusPatch("einstein", loc, 0, "abc")
		wantStatus(t, rec, http.StatusLocked)
		wantCondition(t, rec, "lock-token-submitted", "/webdav/")
		wantNoFile(t, e, "/webdav/a.txt")
		// Like any commit the store refuses, it ended the upload.
		wantStatus(t, e.tusPatch("einstein", loc, 3, "", withToken(token)...), http.StatusNotFound)
		loc = e.tusStart("einstein", "/webdav/", "a.txt", 3, withToken(token)...)
		wantStatus(t, e.tusPatch("einstein", loc, 0, "abc", withToken(token)...), http.StatusNoContent)
		wantContent(t, e, "/webdav/a.txt", "abc")
	})
}

// TestPutsRacingLock: PUTs without a token race a LOCK of their file. No
// PUT may change the file once the lock is granted: those that start after
// the LOCK's answer are refused, and the file's last change is older than
// the lock. The store's clock ticks on every reading, so the order of its
// transactions shows in their times.
func TestPutsRacingLock(t *testing.T) {
	var ticks atomic.Int64
	base := time.Now()
	clock := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * time.Microsecond) }
	e := newEnvWith(t, boltstore.Options{Now: clock}, withLocks)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "f"), http.StatusCreated)

	const workers, putsAfter = 4, 10
	var (
		locked atomic.Bool  // the LOCK has answered
		done   atomic.Int64 // PUTs answered
		wg     sync.WaitGroup
		mu     sync.Mutex
		late   []int // statuses of PUTs started after the LOCK answered
	)
	for range workers {
		wg.Go(func() {
			for after := 0; after < putsAfter; {
				wasLocked := locked.Load()
				rec := e.do("einstein", "PUT", "/webdav/f.txt", "racing")
				done.Add(1)
				if wasLocked {
					after++
					mu.Lock()
					late = append(late, rec.Code)
					mu.Unlock()
				}
			}
		})
	}
	// Lock once the PUTs are under way, so that some are in flight.
	for done.Load() < 2*workers {
		time.Sleep(time.Millisecond)
	}
	token := e.lock("einstein", "/webdav/f.txt", lockExclusive)
	locked.Store(true)
	wg.Wait()

	for _, code := range late {
		if code != http.StatusLocked {
			t.Fatalf("a PUT started after the LOCK answered got %d, want 423", code)
		}
	}
	space, err := e.store.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	locks, err := e.store.SpaceLocks(t.Context(), space.ID)
	if err != nil || len(locks) != 1 || locks[0].Token != token {
		t.Fatalf("SpaceLocks = %v, %v; want the one lock", locks, err)
	}
	f, err := e.store.Child(t.Context(), space.ID, space.ID, "f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !f.ModTime.Before(locks[0].Created) {
		t.Fatalf("f.txt changed at %v, after its lock was granted at %v", f.ModTime, locks[0].Created)
	}
}
