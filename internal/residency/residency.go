// Package residency keeps the pages of the process's own executable that
// it no longer uses out of its resident set.
//
// A Go binary the size of Caddy with its modules is mostly text and
// read-only data, and what the start touches of it (every package's init,
// the module registry, the runtime's tables; each fault maps the 64 KiB
// around it too) stays mapped for the life of the process: more than half
// of the binary, and more than half of what the process is allowed at its
// peak.
// Those pages are clean copies of the file in the page cache; dropping
// this process's page-table entries for them costs nothing but a minor
// fault when code runs again, and leaves mapped what the process uses.
package residency

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

// mapping is one mapping of /proc/self/smaps: its range, permissions and
// file, and how much of it the process holds as its own (anonymous)
// copies of the file's pages.
type mapping struct {
	start, end uintptr
	perms      string
	path       string
	anonymous  bool
}

// executableReadOnly returns the mappings of file exe that the process can
// neither write nor has written: its text and read-only data. A writable
// mapping of the file (the binary's data) holds the process's own changes,
// and so may a read-only one that was written before it was made read-only
// (relocations a dynamic loader made): both are left out.
func executableReadOnly(smaps io.Reader, exe string) ([]mapping, error) {
	var all []mapping
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Bytes()
		if m, ok := parseMapping(line); ok {
			all = append(all, m)
			continue
		}
		// "Anonymous:   4 kB" below the mapping's line.
		if v, ok := bytes.CutPrefix(line, []byte("Anonymous:")); ok && len(all) > 0 {
			all[len(all)-1].anonymous = !bytes.Equal(bytes.Fields(v)[0], []byte("0"))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read memory maps: %w", err)
	}
	var found []mapping
	for _, m := range all {
		// "r-xp", "r--p": readable, not writable, private.
		if m.path == exe && len(m.perms) == 4 && m.perms[1] == '-' && m.perms[3] == 'p' && !m.anonymous {
			found = append(found, m)
		}
	}
	return found, nil
}

// parseMapping reads a mapping's line, "start-end perms offset dev inode
// path", and reports whether line is one.
func parseMapping(line []byte) (mapping, bool) {
	fields := bytes.Fields(line)
	if len(fields) < 5 || bytes.HasSuffix(fields[0], []byte(":")) {
		return mapping{}, false
	}
	var m mapping
	if _, err := fmt.Sscanf(string(fields[0]), "%x-%x", &m.start, &m.end); err != nil || m.end <= m.start {
		return mapping{}, false
	}
	m.perms = string(fields[1])
	// The path is the rest of the line, spaces included; none for
	// anonymous memory.
	if len(fields) > 5 {
		m.path = string(bytes.Join(fields[5:], []byte(" ")))
	}
	return m, true
}

// Executable is the part of the process's executable that Drop drops:
// its read-only mappings, found once, as the loader mapped them at start.
// The zero value drops nothing.
type Executable struct {
	path     string
	mappings []mapping
}

// FindExecutable finds the read-only mappings of the process's executable,
// where the platform allows dropping them (Linux); elsewhere it returns an
// Executable that drops nothing.
func FindExecutable() (*Executable, error) {
	if !supported {
		return &Executable{}, nil
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, fmt.Errorf("open memory maps: %w", err)
	}
	defer f.Close()
	mappings, err := executableReadOnly(f, exe)
	if err != nil {
		return nil, err
	}
	return &Executable{path: exe, mappings: mappings}, nil
}

// Drop drops the executable's read-only pages from the resident set. Code
// and data in use fault back in, from the page cache, as they are used.
func (e *Executable) Drop() error {
	for _, m := range e.mappings {
		if err := dropPages(m.start, m.end-m.start); err != nil {
			return fmt.Errorf("drop pages of %s at %#x: %w", e.path, m.start, err)
		}
	}
	return nil
}

// FileResident returns how many bytes of file pages (and shared memory)
// the process has mapped and resident: RssFile and RssShmem, the part of
// its resident set that MADV_DONTNEED gives back without losing anything.
// Where the platform has no /proc/self/statm it returns 0.
func FileResident() (int64, error) {
	if !supported {
		return 0, nil
	}
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("read memory use: %w", err)
	}
	return statmFileBytes(b, int64(os.Getpagesize()))
}

// statmFileBytes reads the third field of statm ("size resident shared
// text lib data dt", in pages).
func statmFileBytes(statm []byte, pageSize int64) (int64, error) {
	fields := bytes.Fields(statm)
	if len(fields) < 3 {
		return 0, fmt.Errorf("memory use %q: too few fields", statm)
	}
	pages, err := strconv.ParseInt(string(fields[2]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory use %q: %w", statm, err)
	}
	return pages * pageSize, nil
}
