package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestNoTerminalWritesOneSummaryLine(t *testing.T) {
	var out bytes.Buffer
	r := New(&out, "backup", 10, Options{Bytes: true})
	r.Add(3)
	r.Set(7, 10)
	r.SetTotal(20)
	r.Finish("%d blobs copied", 7)
	if got, want := out.String(), "backup: 7 blobs copied\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestTerminalDrawsABarThenTheSummary(t *testing.T) {
	var out bytes.Buffer
	on := true
	r := New(&out, "check", 0, Options{Terminal: &on})
	r.Set(5, 10)
	r.Add(5)
	r.Finish("no problems")
	s := out.String()
	if !strings.HasSuffix(s, "check: no problems\n") {
		t.Fatalf("output %q does not end with the summary", s)
	}
	if !strings.Contains(s, "check") || len(s) <= len("check: no problems\n") {
		t.Fatalf("output %q shows no bar", s)
	}
}

func TestNilReporterIsQuiet(t *testing.T) {
	var r *Reporter
	r.Add(1)
	r.Set(1, 2)
	r.SetTotal(3)
	r.Finish("x")
}
