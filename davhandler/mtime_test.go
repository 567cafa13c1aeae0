package davhandler

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestParseMtime(t *testing.T) {
	tests := []struct {
		header string
		want   time.Time
		ok     bool
	}{
		{"", time.Time{}, true},
		{"1500000000", time.Unix(1500000000, 0), true},
		{" 1500000000 ", time.Unix(1500000000, 0), true},
		{"1500000000.5", time.Unix(1500000000, 500000000), true},
		{"1500000000.123456789", time.Unix(1500000000, 123456789), true},
		{"1500000000.1234567891", time.Unix(1500000000, 123456789), true},
		{"0", time.Unix(0, 0), true},
		{"253402300799", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{"253402300800", time.Time{}, false},
		{"NaN", time.Time{}, false},
		{"nan", time.Time{}, false},
		{"Inf", time.Time{}, false},
		{"+Inf", time.Time{}, false},
		{"-Inf", time.Time{}, false},
		{"infinity", time.Time{}, false},
		{"1e400", time.Time{}, false},
		{"1e9", time.Time{}, false},
		{"0x1p30", time.Time{}, false},
		{"1_500_000_000", time.Time{}, false},
		{"-1", time.Time{}, false},
		{"+1500000000", time.Time{}, false},
		{"1500000000.", time.Time{}, false},
		{".5", time.Time{}, false},
		{"1.2.3", time.Time{}, false},
		{"99999999999999999999", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodPut, "/webdav/f", nil)
		r.Header.Set("X-OC-Mtime", tt.header)
		got, err := parseMtime(r)
		if (err == nil) != tt.ok {
			t.Errorf("parseMtime(%q) error %v, want ok=%v", tt.header, err, tt.ok)
			continue
		}
		if err != nil {
			wantDAVStatus(t, err, http.StatusBadRequest)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("parseMtime(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// wantDAVStatus checks that err is a protocol error with the status.
func wantDAVStatus(t testing.TB, err error, status int) {
	t.Helper()
	de, ok := err.(*davError)
	if !ok || de.status != status {
		t.Fatalf("error %v (%T), want a davError with status %d", err, err, status)
	}
}
