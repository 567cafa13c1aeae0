package residency

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const smapsSample = `00400000-01fea000 r-xp 00000000 08:01 123 /srv/caddy
Size:              29608 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
01fea000-04140000 r--p 01bea000 08:01 123 /srv/caddy
Size:              34136 kB
Anonymous:             0 kB
04140000-042d1000 rw-p 03d40000 08:01 123 /srv/caddy
Anonymous:           200 kB
042d1000-04300000 r--p 03ed1000 08:01 123 /srv/caddy
Anonymous:             8 kB
7f0000000000-7f0000100000 r--s 00000000 08:01 456 /data/davspaces.db
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 08:01 789 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000400000-7f0000500000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
7f0000600000-7f0000700000 r--p 00000000 08:01 999 /srv/caddy dir/caddy
Anonymous:             0 kB
`

// The text and read-only data of the executable are dropped; its data, a
// read-only mapping with pages of its own (relocated), the database's
// shared mapping, libraries and anonymous memory are not.
func TestExecutableReadOnly(t *testing.T) {
	got, err := executableReadOnly(strings.NewReader(smapsSample), "/srv/caddy")
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, m := range got {
		starts = append(starts, strconv.FormatUint(uint64(m.start), 16))
	}
	if want := "400000,1fea000"; strings.Join(starts, ",") != want {
		t.Fatalf("mappings at %v, want %s", starts, want)
	}
	spaced, err := executableReadOnly(strings.NewReader(smapsSample), "/srv/caddy dir/caddy")
	if err != nil || len(spaced) != 1 {
		t.Fatalf("path with a space: %v, %v", spaced, err)
	}
}

// The test binary drops its own text and keeps running it: what was
// dropped faults back in.
func TestDropExecutable(t *testing.T) {
	e, err := FindExecutable()
	if err != nil {
		t.Fatal(err)
	}
	if supported && len(e.mappings) == 0 {
		t.Fatal("no read-only mapping of the executable found")
	}
	before := fileResident(t)
	if err := e.Drop(); err != nil {
		t.Fatal(err)
	}
	after := fileResident(t)
	if supported && after >= before {
		t.Errorf("file-backed resident memory %d kB before the drop, %d kB after", before, after)
	}
	if got := strings.Repeat("x", 3); got != "xxx" {
		t.Fatalf("code after the drop: %q", got)
	}
}

// fileResident returns RssFile of the process in kB, or 0 where there is
// no /proc.
func fileResident(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("RssFile %q: %v", v, err)
			}
			return kb
		}
	}
	return 0
}

func TestFileResident(t *testing.T) {
	for _, tt := range []struct {
		statm string
		want  int64
		ok    bool
	}{
		{"61234 15234 12000 4000 0 9000 0\n", 12000 * 4096, true},
		{"1 2 0 0 0 0 0", 0, true},
		{"1 2", 0, false},
		{"1 2 x 0 0 0 0", 0, false},
	} {
		got, err := statmFileBytes([]byte(tt.statm), 4096)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("statmFileBytes(%q) = %d, %v; want %d, ok %v", tt.statm, got, err, tt.want, tt.ok)
		}
	}
	if n, err := FileResident(); err != nil || (supported && n <= 0) {
		t.Errorf("FileResident() = %d, %v: the test binary has file pages", n, err)
	}
}
