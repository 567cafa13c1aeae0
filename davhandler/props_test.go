package davhandler

import (
	"net/http"
	"testing"
	"time"
)

// TestAppendHTTPDate checks the hand-written date against the layout it
// stands for, across zones, padding and the years the layout does not pad.
func TestAppendHTTPDate(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 23, 8, 5, 9, 999, time.UTC),
		time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 30, 0, 0, berlin),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(999, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		want := tm.UTC().Format(http.TimeFormat)
		if got := string(appendHTTPDate([]byte("x"), tm)); got != "x"+want {
			t.Errorf("%v: %q, want %q", tm, got, "x"+want)
		}
	}
}

// BenchmarkAppendHTTPDate compares the hand-written date with the layout.
func BenchmarkAppendHTTPDate(b *testing.B) {
	tm := time.Date(2026, 11, 23, 8, 5, 9, 0, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("fields", func(b *testing.B) {
		for b.Loop() {
			buf = appendHTTPDate(buf[:0], tm)
		}
	})
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			buf = tm.UTC().AppendFormat(buf[:0], http.TimeFormat)
		}
	})
}
