package boltstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
)

const trashCrashDirEnv = "BOLTSTORE_TRASH_CRASH_DIR"

// trashCrashWriter is the child process of TestTrashCrashRecovery: it
// replaces, deletes and re-creates files in a loop, so that content moves
// into versions and the trash and back, and reports every acknowledged
// content on stdout until killed.
func trashCrashWriter(dir string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fail(err)
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "crash"})
	if err != nil {
		fail(err)
	}
	for i := 0; ; i++ {
		name := fmt.Sprint("f", i%5)
		if i%4 == 3 {
			n, err := s.Child(ctx, sp.ID, sp.ID, name)
			if err == nil {
				err = s.Remove(ctx, sp.ID, n.ID, storage.Conditions{})
			}
			if err != nil && !strings.Contains(err.Error(), storage.ErrNotFound.Error()) {
				fail(err)
			}
			fmt.Println("deleted", name, i)
			continue
		}
		u, err := s.NewUpload(ctx, sp.ID)
		if err == nil {
			_, err = io.WriteString(u, crashContent(name, i))
		}
		if err == nil {
			_, _, err = u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: name})
		}
		if err != nil {
			fail(err)
		}
		fmt.Println("ok", name, i)
	}
}

// TestTrashCrashRecovery kills a process that moves content into the
// trash and versions with SIGKILL and checks that no acknowledged content
// is lost, that every content file is referenced, and that the counters
// match what is stored.
func TestTrashCrashRecovery(t *testing.T) {
	if dir := os.Getenv(trashCrashDirEnv); dir != "" {
		trashCrashWriter(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	acked := map[string]bool{} // contents acknowledged, over all rounds
	for round := range 3 {
		cmd := testpeer.Command(os.Args[0], "-test.run=^TestTrashCrashRecovery$")
		cmd.Env = append(os.Environ(), trashCrashDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		lines := 0
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 0 && fields[0] == "error" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writer: %s", sc.Text())
			}
			if len(fields) == 3 && fields[0] == "ok" {
				var v int
				fmt.Sscan(fields[2], &v)
				acked[crashContent(fields[1], v)] = true
			}
			if lines++; lines == 40+round*17 {
				break
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		cmd.Wait()

		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		<-s.sweepDone
		sp, err := s.PersonalSpace(ctx, storage.User{ID: "crash"})
		if err != nil {
			t.Fatal(err)
		}
		held := heldContents(t, s, sp.ID)
		for content := range acked {
			if !held[content] {
				t.Fatalf("round %d: acknowledged content lost: %.30q", round, content)
			}
		}
		if got, want := countFiles(t, filepath.Join(dir, "blobs")), s.referencedContentFiles(t); got != want {
			t.Fatalf("round %d: %d content files for %d references", round, got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// heldContents reads every content the space holds, live, in its trash and
// as versions, checking each against its record, and checks the counters.
func heldContents(t *testing.T, s *Store, spaceID string) map[string]bool {
	t.Helper()
	held := map[string]bool{}
	var trash, versions int64
	err := s.view(func(tx *txn) error {
		add := func(r rec) error {
			var b []byte
			var err error
			if r.inlined() {
				b, err = tx.inlineContent(r)
			} else {
				b, err = os.ReadFile(s.blobPath(r.Blob))
			}
			if err != nil {
				return fmt.Errorf("content of %s: %w", r.ID, err)
			}
			w := checksum.NewWriter()
			w.Write(b)
			if w.Sums() != r.Checksums || int64(len(b)) != r.Size {
				return fmt.Errorf("content of %s does not match its record", r.ID)
			}
			held[string(b)] = true
			return nil
		}
		err := tx.children().ForEach(func(k, v []byte) error {
			r, err := decodeNode(v)
			if err != nil || r.IsFolder() {
				return err
			}
			return add(r)
		})
		if err != nil {
			return err
		}
		items, err := tx.trashItems(spaceID)
		if err != nil {
			return err
		}
		for _, item := range items {
			top, err := tx.itemNode(item)
			if err != nil {
				return err
			}
			trash += top.Size
		}
		err = tx.versions().ForEach(func(k, v []byte) error {
			r, err := decodeVersion("", v)
			if err != nil {
				return err
			}
			versions += r.File.Size
			return add(r.File)
		})
		if err != nil {
			return err
		}
		if c := tx.spaceCounters(spaceID); c.trash != trash || c.versions != versions {
			return fmt.Errorf("counters %+v, stored trash %d and versions %d", c, trash, versions)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// referencedContentFiles counts the content files records reference:
// files, live or in a trash, and versions.
func (s *Store) referencedContentFiles(t *testing.T) int {
	t.Helper()
	n := 0
	err := s.view(func(tx *txn) error {
		err := tx.children().ForEach(func(k, v []byte) error {
			r, err := decodeNode(v)
			if err == nil && r.Blob != "" {
				n++
			}
			return err
		})
		if err != nil {
			return err
		}
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
