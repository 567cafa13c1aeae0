package storage

import (
	"strings"
	"time"
)

// compareTimeThenID orders records by time, then by id, so that records of
// the same instant still list in one stable order. Listings newest first
// pass their arguments swapped.
func compareTimeThenID(at time.Time, aID string, bt time.Time, bID string) int {
	if c := at.Compare(bt); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}
