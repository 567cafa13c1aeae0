package storage

import (
	"errors"
	"testing"
)

func TestNodeCap(t *testing.T) {
	for _, c := range []struct {
		name            string
		quota, maxNodes int64
		want            int64
	}{
		{"a quota buys one node per 4 KiB", 64 << 20, 0, 16384},
		{"a small quota still holds the floor", 1 << 20, 0, MinNodeCap},
		{"a zero quota holds the floor", 0, 0, MinNodeCap},
		{"the setting does not apply under a quota", 64 << 20, 10, 16384},
		{"no quota: the setting", NoQuota, 5000, 5000},
		{"no quota, no setting: the default", NoQuota, 0, DefaultMaxNodes},
	} {
		if got := NodeCap(c.quota, c.maxNodes); got != c.want {
			t.Errorf("%s: NodeCap(%d, %d) = %d, want %d", c.name, c.quota, c.maxNodes, got, c.want)
		}
	}
}

func TestCheckNodes(t *testing.T) {
	for _, c := range []struct {
		name                string
		nodes, limit, delta int64
		refused             bool
	}{
		{"below the cap", 998, 1000, 1, false},
		{"up to the cap", 999, 1000, 1, false},
		{"past the cap", 1000, 1000, 1, true},
		{"a tree past the cap", 900, 1000, 101, true},
		{"nothing added over the cap", 2000, 1000, 0, false},
		{"removing over the cap", 2000, 1000, -5, false},
	} {
		err := CheckNodes(c.nodes, c.limit, c.delta)
		if refused := err != nil; refused != c.refused {
			t.Errorf("%s: CheckNodes(%d, %d, %d) = %v", c.name, c.nodes, c.limit, c.delta, err)
		}
		if err != nil && (!errors.Is(err, ErrTooManyNodes) || !errors.Is(err, ErrInsufficientStorage)) {
			t.Errorf("%s: %v is not ErrTooManyNodes and ErrInsufficientStorage", c.name, err)
		}
	}
}
