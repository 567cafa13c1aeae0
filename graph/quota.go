package graph

import (
	"math"

	"github.com/davspaces/davspaces/storage"
)

// quota is a drive's quota in libre-graph's shape.
type quota struct {
	Total     int64 `json:"total"`
	Used      int64 `json:"used"`
	Remaining int64 `json:"remaining"`
	// Deleted is what the space's trash holds ("space in the recycle
	// bin"), a part of Used: emptying the trash gives it back.
	Deleted int64  `json:"deleted"`
	State   string `json:"state"`
}

// quotaOf describes a space with limit bytes of quota (storage.NoQuota or
// negative for none) and usage u: used is all the space holds against its
// quota (files, dead properties, trash and versions), deleted the trash's
// part of it, remaining what the quota leaves after used and the
// reservations of unfinished uploads. Without a quota the total is 0 and
// the remaining bytes unbounded, as oCIS answers.
func quotaOf(limit int64, u storage.Usage) quota {
	used := u.Used()
	free, limited := u.Free(limit)
	if !limited {
		return quota{Total: 0, Used: used, Remaining: math.MaxInt64, Deleted: u.Trash, State: "normal"}
	}
	return quota{Total: limit, Used: used, Remaining: free, Deleted: u.Trash, State: quotaState(limit, limit-free)}
}

// quotaState follows oCIS's thresholds: up to 75% used is "normal", up to
// 90% "nearing", up to 99% "critical", beyond that "exceeded".
func quotaState(limit, used int64) string {
	if limit == 0 {
		if used == 0 {
			return "normal"
		}
		return "exceeded"
	}
	// A percentage in floating point: exact enough at these thresholds and
	// free of the overflow used*1000 would risk.
	pct := float64(used) / float64(limit) * 100
	switch {
	case pct <= 75:
		return "normal"
	case pct <= 90:
		return "nearing"
	case pct <= 99:
		return "critical"
	default:
		return "exceeded"
	}
}
