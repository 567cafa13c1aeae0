package pgstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestLoginFlowsCapped: at storage.MaxLoginFlows open flows a creation is
// refused; one expired flow among them is swept and makes room.
func TestLoginFlowsCapped(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	// The flows are written at once, as the store would keep them.
	_, err := s.pool.Exec(ctx, `INSERT INTO login_flows (login_key, poll_key, client, created, expires, poll_public)
		SELECT md5('l' || i) || md5('L' || i), md5('p' || i) || md5('P' || i), 'c', $1::timestamptz,
			CASE WHEN i = 1 THEN $1::timestamptz + interval '1 second' ELSE $2::timestamptz END, '\x01'
		FROM generate_series(1, $3) AS i`, now, now.Add(storage.LoginFlowTTL), storage.MaxLoginFlows)
	if err != nil {
		t.Fatal(err)
	}
	flow := func(n int, at time.Time) storage.LoginFlow {
		return storage.LoginFlow{
			LoginKey: storage.LoginFlowKey(fmt.Sprint("login ", n)), PollKey: storage.LoginFlowKey(fmt.Sprint("poll ", n)),
			Client: "c", Created: at, Expires: at.Add(storage.LoginFlowTTL), PollPublic: []byte{1},
		}
	}
	if err := s.CreateLoginFlow(ctx, flow(1, now)); !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("a flow beyond the cap: %v, want ErrInsufficientStorage", err)
	}
	later := now.Add(2 * time.Second)
	if err := s.CreateLoginFlow(ctx, flow(2, later)); err != nil {
		t.Fatalf("a flow once one expired: %v", err)
	}
	if err := s.CreateLoginFlow(ctx, flow(3, later)); !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("a flow beyond the cap again: %v, want ErrInsufficientStorage", err)
	}
}
