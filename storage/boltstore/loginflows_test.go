package boltstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// TestLoginFlowsCapped: at storage.MaxLoginFlows open flows a creation is
// refused; one expired flow among them is swept and makes room.
func TestLoginFlowsCapped(t *testing.T) {
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Now().UTC().Truncate(time.Microsecond)
	flow := func(n int, at time.Time) storage.LoginFlow {
		return storage.LoginFlow{
			LoginKey: storage.LoginFlowKey(fmt.Sprint("login ", n)), PollKey: storage.LoginFlowKey(fmt.Sprint("poll ", n)),
			Client: "c", Created: at, Expires: at.Add(storage.LoginFlowTTL), PollPublic: []byte{1},
		}
	}
	// The flows are written in one transaction, as CreateLoginFlow would
	// keep them.
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := openLoginFlowBuckets(tx)
		if err != nil {
			return err
		}
		for i := range storage.MaxLoginFlows {
			f := flow(-i, now)
			if i == 0 {
				f.Expires = now.Add(time.Second)
			}
			if err := b.add(&f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
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
