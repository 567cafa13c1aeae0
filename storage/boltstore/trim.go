package boltstore

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// trimInterval is how often the database mapping is trimmed while the
// store is in use. Between two trims a reader or writer can map at most
// what it touches in that time, so the mapped part stays bounded by the
// throughput, not by the size of the database.
const trimInterval = time.Second

// trimMapping unmaps from this process the database pages it has touched.
//
// bbolt reads the database through a read-only shared mapping of the file,
// and every page it touches stays in the process's resident set: as small
// files live in the database, that would grow with the data stored. Dropping
// the page-table entries leaves the pages in the page cache, shared and
// clean, so the next access faults them back in from memory and readers
// see the same bytes.
//
// The trim runs in a read transaction: bbolt remaps a growing file only
// under a lock that read transactions hold shared, so the address and the
// size taken here are those of the live mapping for as long as it lasts.
func (s *Store) trimMapping() error {
	err := s.db.View(func(tx *bolt.Tx) error {
		return dropMapped(s.db.Info().Data, tx.Size())
	})
	if err != nil {
		return fmt.Errorf("trim database mapping: %w", err)
	}
	return nil
}

// trimLoop trims the database mapping every interval in which the database
// was used, until the store closes.
func (s *Store) trimLoop(interval time.Duration) {
	defer close(s.trimDone)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last uint64
	for {
		select {
		case <-s.closing:
			return
		case <-tick.C:
		}
		if used := s.dbUse(); used == last {
			continue
		}
		if err := s.trimMapping(); err != nil {
			s.log.Warn("cannot trim the database mapping", zap.Error(err))
		}
		// The trim's own read transaction is not a use.
		last = s.dbUse()
	}
}

// dbUse is a count that grows with every read transaction started and every
// page written.
func (s *Store) dbUse() uint64 {
	st := s.db.Stats()
	return uint64(st.TxN) + uint64(st.TxStats.GetWrite())
}
