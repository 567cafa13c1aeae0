package storage

import (
	"testing"
	"time"
)

func TestLockExpiry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Time
	}{
		{"no timeout never ends", 0, time.Time{}},
		{"a second", time.Second, now.Add(time.Second)},
		{"a day", 24 * time.Hour, now.Add(24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LockExpiry(now, tt.timeout); !got.Equal(tt.want) {
				t.Fatalf("LockExpiry(now, %v) = %v, want %v", tt.timeout, got, tt.want)
			}
		})
	}
}
