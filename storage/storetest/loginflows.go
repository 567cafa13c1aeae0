package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// loginFlowTests are the conformance tests of storage.LoginFlows.
var loginFlowTests = []conformanceTest{
	{"LoginFlowGrantedThenTakenOnce", testLoginFlowTakenOnce},
	{"LoginFlowTakenOnceConcurrently", testLoginFlowTakenConcurrently},
	{"LoginFlowExpires", testLoginFlowExpires},
	{"LoginFlowsExpiredSweptAtCreation", testLoginFlowsSwept},
	{"LoginFlowCancelled", testLoginFlowCancelled},
	{"LoginFlowsRefuseInvalid", testLoginFlowsInvalid},
}

// loginFlowTokens numbers the tokens newLoginFlow makes.
var loginFlowTokens atomic.Int64

// newLoginFlow makes a flow created at now, open for storage.LoginFlowTTL,
// with new keys.
func newLoginFlow(now time.Time) storage.LoginFlow {
	n := loginFlowTokens.Add(1)
	return storage.LoginFlow{
		LoginKey:   storage.LoginFlowKey(fmt.Sprint("login ", n)),
		PollKey:    storage.LoginFlowKey(fmt.Sprint("poll ", n)),
		Client:     "nextcloudcmd (Desktop Client - Linux)",
		Created:    now,
		Expires:    now.Add(storage.LoginFlowTTL),
		PollPublic: []byte("public key"),
	}
}

func (f *fixture) createLoginFlow(t *testing.T, flow storage.LoginFlow) {
	t.Helper()
	if err := f.s.CreateLoginFlow(f.ctx, flow); err != nil {
		t.Fatalf("CreateLoginFlow: %v", err)
	}
}

func testLoginFlowTakenOnce(t *testing.T, f *fixture) {
	now := appPasswordStart()
	flow := newLoginFlow(now)
	f.createLoginFlow(t, flow)
	got, err := f.s.LoginFlow(f.ctx, flow.LoginKey, now)
	if err != nil || got.PollKey != flow.PollKey || got.Client != flow.Client || !got.Created.Equal(now) ||
		!got.Expires.Equal(flow.Expires) || !bytes.Equal(got.PollPublic, flow.PollPublic) || got.Granted() || len(got.Sealed) != 0 {
		t.Fatalf("LoginFlow = %+v, %v; want %+v", got, err, flow)
	}
	_, err = f.s.TakeLoginFlow(f.ctx, flow.PollKey, now)
	wantErr(t, "TakeLoginFlow before the grant", err, storage.ErrNotFound)
	_, err = f.s.LoginFlow(f.ctx, flow.PollKey, now)
	wantErr(t, "LoginFlow by the poll key", err, storage.ErrNotFound)
	_, err = f.s.TakeLoginFlow(f.ctx, flow.LoginKey, now)
	wantErr(t, "TakeLoginFlow by the login key", err, storage.ErrNotFound)

	sealed := []byte("sealed password")
	if err := f.s.GrantLoginFlow(f.ctx, flow.LoginKey, user.ID, sealed, now.Add(time.Minute)); err != nil {
		t.Fatalf("GrantLoginFlow: %v", err)
	}
	wantErr(t, "a second grant", f.s.GrantLoginFlow(f.ctx, flow.LoginKey, "marie", []byte("hers"), now.Add(time.Minute)), storage.ErrConflict)
	taken, err := f.s.TakeLoginFlow(f.ctx, flow.PollKey, now.Add(2*time.Minute))
	if err != nil || taken.User != user.ID || !bytes.Equal(taken.Sealed, sealed) || taken.LoginKey != flow.LoginKey || taken.Client != flow.Client {
		t.Fatalf("TakeLoginFlow = %+v, %v; want the grant of %s", taken, err, user.ID)
	}
	_, err = f.s.TakeLoginFlow(f.ctx, flow.PollKey, now.Add(2*time.Minute))
	wantErr(t, "a second take", err, storage.ErrNotFound)
	_, err = f.s.LoginFlow(f.ctx, flow.LoginKey, now.Add(2*time.Minute))
	wantErr(t, "LoginFlow once taken", err, storage.ErrNotFound)
}

func testLoginFlowTakenConcurrently(t *testing.T, f *fixture) {
	now := appPasswordStart()
	flow := newLoginFlow(now)
	f.createLoginFlow(t, flow)
	if err := f.s.GrantLoginFlow(f.ctx, flow.LoginKey, user.ID, []byte("sealed"), now); err != nil {
		t.Fatalf("GrantLoginFlow: %v", err)
	}
	const polls = 16
	var (
		wg          sync.WaitGroup
		won, missed atomic.Int32
		start       = make(chan struct{})
	)
	for range polls {
		wg.Go(func() {
			<-start
			_, err := f.s.TakeLoginFlow(f.ctx, flow.PollKey, now)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, storage.ErrNotFound):
				missed.Add(1)
			default:
				t.Errorf("TakeLoginFlow: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if won.Load() != 1 || missed.Load() != polls-1 {
		t.Fatalf("%d of %d concurrent polls took the flow, %d found none; want exactly one", won.Load(), polls, missed.Load())
	}
}

func testLoginFlowExpires(t *testing.T, f *fixture) {
	now := appPasswordStart()
	flow := newLoginFlow(now)
	f.createLoginFlow(t, flow)
	granted := newLoginFlow(now)
	f.createLoginFlow(t, granted)
	if err := f.s.GrantLoginFlow(f.ctx, granted.LoginKey, user.ID, []byte("sealed"), now); err != nil {
		t.Fatalf("GrantLoginFlow: %v", err)
	}
	end := now.Add(storage.LoginFlowTTL)
	if _, err := f.s.LoginFlow(f.ctx, flow.LoginKey, end.Add(-time.Microsecond)); err != nil {
		t.Fatalf("LoginFlow just before its end: %v", err)
	}
	_, err := f.s.LoginFlow(f.ctx, flow.LoginKey, end)
	wantErr(t, "LoginFlow at its end", err, storage.ErrNotFound)
	wantErr(t, "GrantLoginFlow at its end", f.s.GrantLoginFlow(f.ctx, flow.LoginKey, user.ID, []byte("sealed"), end), storage.ErrNotFound)
	_, err = f.s.TakeLoginFlow(f.ctx, granted.PollKey, end)
	wantErr(t, "TakeLoginFlow of a grant at its end", err, storage.ErrNotFound)
}

func testLoginFlowsSwept(t *testing.T, f *fixture) {
	now := appPasswordStart()
	old := now.Add(-2 * storage.LoginFlowTTL)
	var expired []storage.LoginFlow
	for range 3 {
		flow := newLoginFlow(old)
		f.createLoginFlow(t, flow)
		expired = append(expired, flow)
	}
	open := newLoginFlow(now.Add(-time.Minute))
	f.createLoginFlow(t, open)
	f.createLoginFlow(t, newLoginFlow(now))
	for _, flow := range expired {
		// Read at a time they were open: gone, not just expired.
		_, err := f.s.LoginFlow(f.ctx, flow.LoginKey, old)
		wantErr(t, "an expired flow after a creation", err, storage.ErrNotFound)
	}
	if _, err := f.s.LoginFlow(f.ctx, open.LoginKey, now); err != nil {
		t.Fatalf("an open flow after a creation: %v", err)
	}
}

func testLoginFlowCancelled(t *testing.T, f *fixture) {
	now := appPasswordStart()
	flow := newLoginFlow(now)
	f.createLoginFlow(t, flow)
	if err := f.s.DeleteLoginFlow(f.ctx, flow.LoginKey); err != nil {
		t.Fatalf("DeleteLoginFlow: %v", err)
	}
	wantErr(t, "DeleteLoginFlow twice", f.s.DeleteLoginFlow(f.ctx, flow.LoginKey), storage.ErrNotFound)
	_, err := f.s.LoginFlow(f.ctx, flow.LoginKey, now)
	wantErr(t, "LoginFlow once cancelled", err, storage.ErrNotFound)
	wantErr(t, "GrantLoginFlow once cancelled", f.s.GrantLoginFlow(f.ctx, flow.LoginKey, user.ID, []byte("sealed"), now), storage.ErrNotFound)
	// Its keys are free again, as a new flow of new tokens never needs.
	f.createLoginFlow(t, flow)
}

func testLoginFlowsInvalid(t *testing.T, f *fixture) {
	now := appPasswordStart()
	for name, change := range map[string]func(*storage.LoginFlow){
		"a short login key":     func(fl *storage.LoginFlow) { fl.LoginKey = fl.LoginKey[:10] },
		"a poll key not hex":    func(fl *storage.LoginFlow) { fl.PollKey = strings.Repeat("z", 64) },
		"the same key twice":    func(fl *storage.LoginFlow) { fl.PollKey = fl.LoginKey },
		"a long client":         func(fl *storage.LoginFlow) { fl.Client = strings.Repeat("a", storage.MaxLoginFlowClient+1) },
		"a client not UTF-8":    func(fl *storage.LoginFlow) { fl.Client = "\xff" },
		"no public key":         func(fl *storage.LoginFlow) { fl.PollPublic = nil },
		"an expiry at creation": func(fl *storage.LoginFlow) { fl.Expires = fl.Created },
		"a grant at creation":   func(fl *storage.LoginFlow) { fl.User = user.ID },
	} {
		flow := newLoginFlow(now)
		change(&flow)
		wantErr(t, "CreateLoginFlow of "+name, f.s.CreateLoginFlow(f.ctx, flow), storage.ErrInvalid)
		_, err := f.s.LoginFlow(f.ctx, flow.LoginKey, now)
		wantErr(t, "LoginFlow of "+name, err, storage.ErrNotFound)
	}
	flow := newLoginFlow(now)
	f.createLoginFlow(t, flow)
	again := newLoginFlow(now)
	again.PollKey = flow.PollKey
	wantErr(t, "CreateLoginFlow of a taken poll key", f.s.CreateLoginFlow(f.ctx, again), storage.ErrExists)
	again = newLoginFlow(now)
	again.LoginKey = flow.LoginKey
	wantErr(t, "CreateLoginFlow of a taken login key", f.s.CreateLoginFlow(f.ctx, again), storage.ErrExists)
	wantErr(t, "GrantLoginFlow to no user", f.s.GrantLoginFlow(f.ctx, flow.LoginKey, "", []byte("sealed"), now), storage.ErrInvalid)
	wantErr(t, "GrantLoginFlow of nothing", f.s.GrantLoginFlow(f.ctx, flow.LoginKey, user.ID, nil, now), storage.ErrInvalid)
	if got, err := f.s.LoginFlow(f.ctx, flow.LoginKey, now); err != nil || got.Granted() {
		t.Fatalf("after refused grants: %+v, %v", got, err)
	}
}
