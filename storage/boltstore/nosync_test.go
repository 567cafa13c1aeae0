package boltstore

import "testing"

// Only the bench's build (tag davspaces_nosync) may skip fsync without
// being asked: the build the tests and users run is durable.
func TestOpenSyncsUnlessAsked(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if s.noSync || s.db.NoSync {
		t.Fatalf("store opened without NoSync skips fsync (store %t, bolt %t)", s.noSync, s.db.NoSync)
	}
}
