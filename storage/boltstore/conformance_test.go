package boltstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		return openStore(t, t.TempDir(), nil)
	})
}
