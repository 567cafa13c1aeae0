package boltstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		// The conformance tests are about behaviour, not durability.
		s, err := Open(t.TempDir(), Options{NoSync: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
