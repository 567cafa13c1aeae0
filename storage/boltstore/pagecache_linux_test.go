package boltstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSnapshotPastThePageCache: a snapshot reads the database file past
// the page cache: it leaves none of the file cached that was not, which
// would be mapped by the server's later faults in large folios.
func TestSnapshotPastThePageCache(t *testing.T) {
	f := newFixture(t)
	for i := range 2000 {
		f.put(t, f.root(), fmt.Sprintf("f%04d", i), strings.Repeat("content ", 100))
	}
	path := filepath.Join(f.dir, dbFile)
	// Pages the server has mapped stay cached whatever is advised.
	if err := f.s.trimMapping(); err != nil {
		t.Fatal(err)
	}
	evict(t, path)
	n, err := f.s.SnapshotTo(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	read := int(n) / os.Getpagesize()
	if cached, _ := cachedPages(t, path); cached > read/4 {
		t.Fatalf("after a snapshot that read %d pages, %d of the database's pages are in the page cache, want few", read, cached)
	}
}

// TestSnapshotWithoutDirectReads: on a file system that refuses direct
// reads (tmpfs) a snapshot reads through the page cache.
func TestSnapshotWithoutDirectReads(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "boltstore-snapshot")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := openStore(t, dir, newClock())
	var b bytes.Buffer
	n, err := s.SnapshotTo(&b)
	if err != nil || n == 0 || int64(b.Len()) != n {
		t.Fatalf("SnapshotTo on tmpfs = %d, %v (%d bytes written)", n, err, b.Len())
	}
}

// evict drops the file's clean pages from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Fdatasync(fd); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// cachedPages counts the pages of the file that are in the page cache.
func cachedPages(t *testing.T, path string) (cached, total int) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := unix.Mmap(int(file.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	vec := make([]byte, (len(data)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			cached++
		}
	}
	return cached, len(vec)
}
