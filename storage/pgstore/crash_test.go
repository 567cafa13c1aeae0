package pgstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// crashEnv carries the work of the child process of TestUndoCrash.
const crashEnv = "PGSTORE_UNDO_CRASH"

// crashWork is what the child does: a remove of Node (into the trash),
// or a replacement of its content (keeping a version).
type crashWork struct {
	Op      string
	DSN     string
	S3      s3content.Config
	SpaceID string
	Node    string
}

// TestUndoCrash kills, with SIGKILL, a process whose remove has moved a
// folder into the trash, or whose commit has kept a version, inside a
// transaction that has not committed: the test holds a row lock that the
// transaction's last statement (the propagation to the root) waits for.
// Nothing is lost: the folder, its properties and its content are live
// and unchanged, the trash and the versions are as before, and no object
// the tree references is on the sweep's list.
func TestUndoCrash(t *testing.T) {
	if raw := os.Getenv(crashEnv); raw != "" {
		crashChild(raw)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for _, op := range []string{"remove", "replace"} {
		t.Run(op, func(t *testing.T) { testUndoCrash(t, op) })
	}
}

func testUndoCrash(t *testing.T, op string) {
	b := testpeer.S3Bucket(t)
	opts := Options{
		DSN: testpeer.PostgreSQL(t),
		S3:  s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey},
	}
	s := openTestStore(t, opts)
	sp := personal(t, s)
	ctx := t.Context()
	dir, err := s.Mkdir(ctx, sp.ID, sp.ID, "dir")
	if err != nil {
		t.Fatal(err)
	}
	f := put(t, s, sp.ID, dir.ID, "f", "first")
	put(t, s, sp.ID, dir.ID, "f", "second") // one version
	fav := storage.Property{Name: storage.PropName{Space: "http://owncloud.org/ns", Local: "favorite"}, User: "einstein", Value: "1"}
	if err := s.PatchProps(ctx, sp.ID, f.ID, []storage.PropPatch{{Property: fav}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.Usage(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	target := dir.ID
	if op == "replace" {
		target = f.ID
	}

	// Hold the root's row: the child's transaction waits for it at its
	// last statement.
	block, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer block.Rollback(ctx)
	if _, err := block.Exec(ctx, `SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE`, sp.ID); err != nil {
		t.Fatal(err)
	}
	var db string
	if err := s.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	work, _ := json.Marshal(crashWork{Op: op, DSN: opts.DSN, S3: opts.S3, SpaceID: sp.ID, Node: target})
	cmd := testpeer.Command(os.Args[0], "-test.run=^TestUndoCrash$")
	cmd.Env = append(os.Environ(), crashEnv+"="+string(work))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := waitForBlockedBackend(t, s, db)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	if out := readAllLines(stdout); strings.Contains(out, "done") {
		t.Fatalf("the child finished its change: %s", out)
	}
	if err := block.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waitBackendGone(t, s, pid)

	if n, err := s.Node(ctx, sp.ID, f.ID); err != nil || n.Size != int64(len("second")) {
		t.Fatalf("the file after the crash = %+v, %v", n, err)
	}
	if got := readAll(t, s, sp.ID, f.ID); got != "second" {
		t.Fatalf("the file reads %q after the crash", got)
	}
	props, err := s.Props(ctx, sp.ID, f.ID, "einstein")
	if err != nil || len(props) != 1 {
		t.Fatalf("the file's properties after the crash = %+v, %v", props, err)
	}
	vs, err := s.FileVersions(ctx, sp.ID, f.ID)
	if err != nil || len(vs) != 1 || vs[0].Node.Size != int64(len("first")) {
		t.Fatalf("the file's versions after the crash = %+v, %v", vs, err)
	}
	if items, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(items) != 0 {
		t.Fatalf("the trash after the crash = %+v, %v", items, err)
	}
	if after, err := s.Usage(ctx, sp.ID); err != nil || after != before {
		t.Fatalf("usage after the crash = %+v, %v; was %+v", after, err, before)
	}
	if swept(t, s, objectKey(t, s, f.ID)) {
		t.Fatal("the file's object is on the sweep's list")
	}
	var versionSegs [][]s3content.Segment
	rows, _ := s.pool.Query(ctx, `SELECT content FROM versions`)
	versionSegs, err = pgx.CollectRows(rows, pgx.RowTo[[]s3content.Segment])
	if err != nil || len(versionSegs) != 1 || swept(t, s, versionSegs[0][0].Key) {
		t.Fatalf("the version's object after the crash: %+v, %v", versionSegs, err)
	}
}

// waitForBlockedBackend waits until a backend of database db waits for a
// lock, which must be the child's transaction propagating to the root,
// its last statement, and returns its pid.
func waitForBlockedBackend(t *testing.T, s *Store, db string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var (
			pid   int
			query string
		)
		err := s.pool.QueryRow(t.Context(), `SELECT pid, query FROM pg_stat_activity
			WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() LIMIT 1`, db).Scan(&pid, &query)
		if err == nil {
			if !strings.Contains(query, "UPDATE nodes SET size = nodes.size") {
				t.Fatalf("the child waits elsewhere than at the propagation: %s", query)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's transaction never waited for the root: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitBackendGone waits until backend pid has ended: its client is dead,
// so it rolls its transaction back once its statement finishes.
func waitBackendGone(t *testing.T, s *Store, pid int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var alive bool
		if err := s.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d of the killed child is still there", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readAllLines(r interface{ Read([]byte) (int, error) }) string {
	var b strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// crashChild does the work the parent kills it in the middle of.
func crashChild(raw string) {
	var w crashWork
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	s, err := Open(ctx, Options{DSN: w.DSN, S3: w.S3, Sweep: time.Hour})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	switch w.Op {
	case "remove":
		err = s.Remove(ctx, w.SpaceID, w.Node, storage.Conditions{})
	case "replace":
		var u storage.Upload
		if u, err = s.NewUpload(ctx, w.SpaceID); err == nil {
			u.Write([]byte("third"))
			_, _, err = u.Commit(ctx, storage.Commit{NodeID: w.Node})
		}
	}
	fmt.Println("done", err)
	os.Exit(0)
}
