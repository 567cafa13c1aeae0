package boltstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
)

const crashDirEnv = "BOLTSTORE_CRASH_DIR"

// crashContent is what the writer puts in name: a few KiB, kept inline,
// except f3 and f4, which are beyond DefaultInlineLimit and so are content
// files.
func crashContent(name string, version int) string {
	n := 200 + version%50
	if name >= "f3" {
		n *= 10
	}
	return strings.Repeat(fmt.Sprintf("%s version %d\n", name, version), n)
}

// crashWriter is the child process of TestCrashRecovery: it replaces files
// in a loop and reports every acknowledged commit on stdout until killed.
func crashWriter(dir string) {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "crash"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		name := fmt.Sprint("f", i%5)
		u, err := s.NewUpload(ctx, sp.ID)
		if err == nil {
			_, err = io.WriteString(u, crashContent(name, i))
		}
		if err == nil {
			_, _, err = u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: name})
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("ok", name, i)
	}
}

// TestCrashRecovery kills a writing process with SIGKILL and checks that
// every acknowledged commit survived and no partial content is visible.
func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashWriter(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	for round := range 3 {
		cmd := testpeer.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[string]int{}
		sc := bufio.NewScanner(stdout)
		lines := 0
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 0 && fields[0] == "error" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writer: %s", sc.Text())
			}
			if len(fields) != 3 || fields[0] != "ok" {
				continue
			}
			v, _ := strconv.Atoi(fields[2])
			acked[fields[1]] = v
			if lines++; lines == 40+round*17 {
				break
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		cmd.Wait()
		if len(acked) == 0 {
			t.Fatal("writer acknowledged nothing")
		}

		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		<-s.sweepDone
		sp, err := s.PersonalSpace(ctx, storage.User{ID: "crash"})
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for name, version := range acked {
			n, err := s.Child(ctx, sp.ID, sp.ID, name)
			if err != nil {
				t.Fatalf("round %d: acknowledged %s lost: %v", round, name, err)
			}
			_, c, err := s.Open(ctx, sp.ID, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(c)
			c.Close()
			var got int
			if _, err := fmt.Sscanf(string(b), name+" version %d\n", &got); err != nil {
				t.Fatalf("round %d: %s holds garbage: %.40q", round, name, b)
			}
			if string(b) != crashContent(name, got) || got < version {
				t.Fatalf("round %d: %s holds version %d (%d bytes), acknowledged %d", round, name, got, len(b), version)
			}
			w := checksum.NewWriter()
			w.Write(b)
			if n.Checksums != w.Sums() || n.Size != int64(len(b)) {
				t.Fatalf("round %d: %s metadata does not match its content", round, name)
			}
		}
		nodes, err := s.ReadDir(ctx, sp.ID, sp.ID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			total += n.Size
		}
		if root, _ := s.Node(ctx, sp.ID, sp.ID); root.Size != total {
			t.Fatalf("round %d: root size %d, files add up to %d", round, root.Size, total)
		}
		if got := countFiles(t, filepath.Join(dir, "uploads")); got != 0 {
			t.Fatalf("round %d: %d files left in uploads/", round, got)
		}
		want := withContentFile(t, s, nodes)
		if want == 0 || want == len(nodes) {
			t.Fatalf("round %d: %d of %d files have a content file, want both kinds", round, want, len(nodes))
		}
		want += versionsWithContentFile(t, s)
		if got := countFiles(t, filepath.Join(dir, "blobs")); got != want {
			t.Fatalf("round %d: %d content files for %d files and versions that have one", round, got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// withContentFile counts the files of nodes whose content is a content
// file, not inline.
func withContentFile(t *testing.T, s *Store, nodes []storage.Node) int {
	t.Helper()
	n := 0
	err := s.view(func(tx *txn) error {
		for _, node := range nodes {
			r, err := tx.nodeIn(node.SpaceID, node.ID)
			if err != nil {
				return err
			}
			if r.Blob != "" {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// versionsWithContentFile counts the versions whose content is a content
// file, not inline.
func versionsWithContentFile(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	err := s.view(func(tx *txn) error {
		return tx.versions().ForEach(func(k, v []byte) error {
			r, err := decodeVersion("", v)
			if err == nil && r.File.Blob != "" {
				n++
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
