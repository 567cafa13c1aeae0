package storage

import (
	"errors"
	"testing"

	"github.com/davspaces/davspaces/checksum"
)

func TestCheckReceived(t *testing.T) {
	sums := checksum.Sums{SHA1: "aa", Adler32: "01"}
	tests := []struct {
		name     string
		expected *checksum.Expected
		want     error
	}{
		{"nothing announced", nil, nil},
		{"matches", &checksum.Expected{Algorithm: checksum.SHA1, Digest: "aa"}, nil},
		{"differs", &checksum.Expected{Algorithm: checksum.SHA1, Digest: "bb"}, ErrChecksum},
		{"other algorithm matches", &checksum.Expected{Algorithm: checksum.Adler32, Digest: "01"}, nil},
		{"unknown algorithm", &checksum.Expected{Algorithm: "CRC", Digest: "aa"}, ErrChecksum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckReceived(tt.expected, sums); !errors.Is(err, tt.want) {
				t.Fatalf("CheckReceived = %v, want %v", err, tt.want)
			}
		})
	}
}
