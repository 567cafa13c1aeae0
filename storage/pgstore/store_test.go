package pgstore

import (
	"errors"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestOpenMigratesOnceAndKeepsStorageID: a second node opening the same
// database finds the schema and the storage id the first one made, and a
// node configured with another id is refused.
func TestOpenMigratesOnceAndKeepsStorageID(t *testing.T) {
	a := openTestStore(t, Options{})
	b := openTestStore(t, Options{DSN: a.pool.Config().ConnString()})
	if a.StorageID() == "" || a.StorageID() != b.StorageID() {
		t.Fatalf("storage ids %q and %q", a.StorageID(), b.StorageID())
	}
	_, err := Open(t.Context(), Options{DSN: a.pool.Config().ConnString(), StorageID: "other"})
	if !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("Open with another storage id: %v", err)
	}
}
