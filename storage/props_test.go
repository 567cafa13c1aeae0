package storage

import (
	"errors"
	"strings"
	"testing"
)

func TestValidProperty(t *testing.T) {
	long := strings.Repeat("n", MaxPropNameBytes+1)
	tests := []struct {
		name  string
		p     Property
		valid bool
	}{
		{"valid", Property{Name: PropName{Space: "ns", Local: "a"}, Value: "v\x00"}, true},
		{"empty namespace", Property{Name: PropName{Local: "a"}}, true},
		{"empty local name", Property{Name: PropName{Space: "ns"}}, false},
		{"long namespace", Property{Name: PropName{Space: long, Local: "a"}}, false},
		{"long local name", Property{Name: PropName{Space: "ns", Local: long}}, false},
		{"NUL in namespace", Property{Name: PropName{Space: "n\x00s", Local: "a"}}, false},
		{"NUL in local name", Property{Name: PropName{Space: "ns", Local: "a\x00"}}, false},
		{"NUL in user", Property{Name: PropName{Space: "ns", Local: "a"}, User: "u\x00"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidProperty(tt.p)
			if tt.valid != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("ValidProperty = %v, want valid %v", err, tt.valid)
			}
		})
	}
}

func TestValidPropUser(t *testing.T) {
	for user, valid := range map[string]bool{"": true, "alice": true, "a\x00b": false} {
		if err := ValidPropUser(user); valid != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("ValidPropUser(%q) = %v, want valid %v", user, err, valid)
		}
	}
}

func TestCheckPropGrowth(t *testing.T) {
	full := PropUsage{Count: MaxPropsPerNode, Bytes: MaxPropBytesPerNode}
	tests := []struct {
		name          string
		before, after PropUsage
		refused       bool
	}{
		{"within both limits", PropUsage{}, PropUsage{Count: 1, Bytes: 10}, false},
		{"up to the limits", PropUsage{}, full, false},
		{"one property over", full, PropUsage{Count: MaxPropsPerNode + 1, Bytes: 1}, true},
		{"one byte over", full, PropUsage{Count: 1, Bytes: MaxPropBytesPerNode + 1}, true},
		{"already over, shrinking", PropUsage{Count: MaxPropsPerNode + 5, Bytes: MaxPropBytesPerNode + 5},
			PropUsage{Count: MaxPropsPerNode + 4, Bytes: MaxPropBytesPerNode + 4}, false},
		{"already over, the same", PropUsage{Count: MaxPropsPerNode + 5}, PropUsage{Count: MaxPropsPerNode + 5}, false},
		{"already over, growing", PropUsage{Count: MaxPropsPerNode + 5}, PropUsage{Count: MaxPropsPerNode + 6}, true},
		{"bytes over, count shrinking", PropUsage{Count: 3, Bytes: MaxPropBytesPerNode}, PropUsage{Count: 2, Bytes: MaxPropBytesPerNode + 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPropGrowth(tt.before, tt.after)
			if tt.refused != (err != nil) || (err != nil && !errors.Is(err, ErrInsufficientStorage)) {
				t.Fatalf("CheckPropGrowth(%+v, %+v) = %v, want refused %v", tt.before, tt.after, err, tt.refused)
			}
		})
	}
}
