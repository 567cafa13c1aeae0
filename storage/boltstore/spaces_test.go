package boltstore

import (
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestPersonalSpaceCreatedOnceConcurrently(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sp, err := s.PersonalSpace(ctx, storage.User{ID: "marie", DisplayName: "Marie Curie"})
			ids[i], errs[i] = sp.ID, err
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("call %d got space %s, call 0 got %s", i, ids[i], ids[0])
		}
	}
	count := 0
	s.view(func(tx *txn) error {
		return tx.spaces().ForEach(func(k, v []byte) error { count++; return nil })
	})
	if count != 1 {
		t.Fatalf("%d spaces stored, want 1", count)
	}
}
