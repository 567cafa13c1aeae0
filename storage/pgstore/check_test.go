package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// checkOpts are Options under which every object is old enough to be
// judged an orphan at once.
var checkOpts = Options{ObjectGrace: time.Nanosecond}

// runCheck checks s and returns what it reported.
func runCheck(t *testing.T, s *Store, opts storage.CheckOptions) ([]storage.Problem, storage.CheckSummary) {
	t.Helper()
	var problems []storage.Problem
	sum, err := s.Check(t.Context(), opts, func(p storage.Problem) { problems = append(problems, p) })
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if sum.Problems != len(problems) {
		t.Errorf("summary counts %d problems, %d reported", sum.Problems, len(problems))
	}
	return problems, sum
}

// requireClean fails t unless a deep check of s finds nothing.
func requireClean(t *testing.T, s *Store) storage.CheckSummary {
	t.Helper()
	problems, sum := runCheck(t, s, storage.CheckOptions{Deep: true})
	for _, p := range problems {
		t.Errorf("unexpected problem: %s", p)
	}
	return sum
}

// checkWorkload gives s a personal space with folders, files replaced
// (versions), deleted (the trash), copied and moved, properties, a lock,
// and unfinished resumable and chunked uploads. It returns the space and
// its nodes by path.
func checkWorkload(t *testing.T, s *Store) (storage.Space, map[string]storage.Node) {
	t.Helper()
	ctx := t.Context()
	sp := personal(t, s)
	nodes := map[string]storage.Node{}
	mkdir := func(parent, name, path string) {
		n, err := s.Mkdir(ctx, sp.ID, parent, name)
		if err != nil {
			t.Fatalf("Mkdir %s: %v", path, err)
		}
		nodes[path] = n
	}
	mkdir(sp.ID, "docs", "docs")
	mkdir(nodes["docs"].ID, "deep", "docs/deep")
	mkdir(sp.ID, "old", "old")
	nodes["docs/a.txt"] = put(t, s, sp.ID, nodes["docs"].ID, "a.txt", "first")
	nodes["docs/a.txt"] = put(t, s, sp.ID, nodes["docs"].ID, "a.txt", "second, longer")
	nodes["docs/deep/b.txt"] = put(t, s, sp.ID, nodes["docs/deep"].ID, "b.txt", "bee")
	nodes["old/c.txt"] = put(t, s, sp.ID, nodes["old"].ID, "c.txt", "sea")
	nodes["old/c.txt"] = put(t, s, sp.ID, nodes["old"].ID, "c.txt", "sea again")
	nodes["empty"] = put(t, s, sp.ID, sp.ID, "empty", "")
	err := s.PatchProps(ctx, sp.ID, nodes["docs/a.txt"].ID, []storage.PropPatch{
		{Property: storage.Property{Name: storage.PropName{Space: "urn:x", Local: "colour"}, Value: "blue"}},
		{Property: storage.Property{Name: storage.PropName{Space: "urn:x", Local: "fav"}, User: "einstein", Value: "1"}},
	})
	if err != nil {
		t.Fatalf("PatchProps: %v", err)
	}
	if _, _, err := s.Copy(ctx, sp.ID, storage.Transfer{NodeID: nodes["docs"].ID, NewParentID: sp.ID, NewName: "docs copy"}); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	moved, _, err := s.Move(ctx, sp.ID, storage.Transfer{NodeID: nodes["docs/deep/b.txt"].ID, NewParentID: sp.ID, NewName: "b.txt"})
	if err != nil {
		t.Fatalf("Move: %v", err)
	}
	nodes["b.txt"] = moved
	// solo.txt shares its object with no copy.
	nodes["docs/solo.txt"] = put(t, s, sp.ID, nodes["docs"].ID, "solo.txt", "alone")
	for _, sh := range []storage.Share{
		{Kind: storage.ShareLink, NodeID: nodes["docs/a.txt"].ID, Role: storage.ShareViewer},
		{Kind: storage.ShareWithUser, NodeID: nodes["docs"].ID, Role: storage.ShareEditor, Grantee: "marie"},
		{Kind: storage.ShareWithGroup, NodeID: nodes["old/c.txt"].ID, Role: storage.ShareViewer, Grantee: "physics"},
	} {
		sh.SpaceID, sh.Creator = sp.ID, "einstein"
		if _, err := s.CreateShare(ctx, sh); err != nil {
			t.Fatalf("CreateShare: %v", err)
		}
	}
	if err := s.Remove(ctx, sp.ID, nodes["old"].ID, storage.Conditions{}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := s.CreateLock(ctx, storage.Lock{SpaceID: sp.ID, NodeID: nodes["docs/a.txt"].ID, Root: "/docs/a.txt",
		Scope: storage.LockExclusive, User: "einstein", Timeout: time.Hour}, storage.LockLimits{}); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	us := newTestSession(t, s, sp.ID, 10)
	if _, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("half!"), nil); err != nil {
		t.Fatalf("AppendSession: %v", err)
	}
	if _, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "chunky", User: "einstein", SpaceID: sp.ID, Length: 8}); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	if _, err := s.PutChunk(ctx, "chunky", "0001", strings.NewReader("chunk")); err != nil {
		t.Fatalf("PutChunk: %v", err)
	}
	return sp, nodes
}

// TestCheckCleanAfterWorkload: a store used as clients use it has no
// problems, deep or not, and the summary counts what is there.
func TestCheckCleanAfterWorkload(t *testing.T) {
	s := openTestStore(t, checkOpts)
	checkWorkload(t, s)
	var calls int
	var last [2]int64
	sum, err := s.Check(t.Context(), storage.CheckOptions{Deep: true, Progress: func(done, total int64) {
		calls++
		last = [2]int64{done, total}
	}}, func(p storage.Problem) { t.Errorf("unexpected problem: %s", p) })
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if sum.Spaces != 1 || sum.Nodes == 0 || sum.Contents == 0 || sum.Bytes == 0 {
		t.Errorf("summary %+v", sum)
	}
	if calls == 0 || last[0] != last[1] || last[0] == 0 {
		t.Errorf("progress: %d calls, last %v", calls, last)
	}
}

// corruption is damage done to a store behind its back, and what a check
// must say of it.
type corruption struct {
	name string
	// damage corrupts s, whose workload made sp and nodes, and returns
	// the path the problem is at.
	damage func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node) (path string)
	kind   storage.ProblemKind
	// inSpace: the problem names the workload's space (an orphan names
	// none); space, when set, names the space it names instead.
	inSpace    bool
	space      string
	repairable bool
	// repaired verifies the repair beyond a clean check, if set.
	repaired func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node)
}

var corruptions = []corruption{
	{
		name: "missing file object",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			removeObjects(t, s, contentOf(t, s, nodes["docs/solo.txt"].ID)[0].Key)
			return "docs/solo.txt"
		},
		kind: storage.ProblemMissingContent, inSpace: true,
	},
	{
		name: "file object of another size",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			key := contentOf(t, s, nodes["docs/solo.txt"].ID)[0].Key
			if _, err := s.objects.Put(t.Context(), key, strings.NewReader("not alone"), 9); err != nil {
				t.Fatalf("overwriting %s: %v", key, err)
			}
			return "docs/solo.txt"
		},
		kind: storage.ProblemContentSize, inSpace: true,
	},
	{
		name: "unreferenced object",
		damage: func(t *testing.T, s *Store, _ storage.Space, _ map[string]storage.Node) string {
			if _, err := s.objects.Put(t.Context(), newObjectKey(prefixFile), strings.NewReader("stray"), 5); err != nil {
				t.Fatalf("putting a stray object: %v", err)
			}
			return ""
		},
		kind: storage.ProblemOrphanContent, repairable: true,
	},
	{
		name: "wrong folder size",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			execSQL(t, s, `UPDATE nodes SET size = size + 7 WHERE id = $1`, nodes["docs/deep"].ID)
			return "docs/deep"
		},
		kind: storage.ProblemFolderSize, inSpace: true, repairable: true,
		repaired: func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node) {
			n, err := s.Node(t.Context(), sp.ID, nodes["docs/deep"].ID)
			if err != nil || n.Size != 0 || n.ETag == nodes["docs/deep"].ETag {
				t.Errorf("repaired folder: %+v, %v", n, err)
			}
		},
	},
	{
		name: "wrong folder size in the trash",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			execSQL(t, s, `UPDATE nodes SET size = size - 1 WHERE id = $1`, nodes["old"].ID)
			var key string
			if err := s.pool.QueryRow(t.Context(), `SELECT key FROM trash_items WHERE node_id = $1`, nodes["old"].ID).Scan(&key); err != nil {
				t.Fatalf("trash key: %v", err)
			}
			return "trash-bin/" + key
		},
		kind: storage.ProblemFolderSize, inSpace: true, repairable: true,
	},
	{
		name: "session with a missing part",
		damage: func(t *testing.T, s *Store, sp storage.Space, _ map[string]storage.Node) string {
			us := newTestSession(t, s, sp.ID, 4)
			if _, err := s.AppendSession(t.Context(), us.ID, 0, strings.NewReader("ab"), nil); err != nil {
				t.Fatalf("AppendSession: %v", err)
			}
			_, parts := sessionBytes(t, s, us.ID)
			removeObjects(t, s, parts[0].Key)
			return "f"
		},
		kind: storage.ProblemDangling, inSpace: true, repairable: true,
	},
	{
		name: "session in a space that does not exist",
		damage: func(t *testing.T, s *Store, sp storage.Space, _ map[string]storage.Node) string {
			us := newTestSession(t, s, sp.ID, 4)
			execSQL(t, s, `UPDATE upload_sessions SET space_id = 'gone' WHERE id = $1`, us.ID)
			return "f"
		},
		kind: storage.ProblemDangling, space: "gone", repairable: true,
	},
	{
		name: "chunk with a missing object",
		damage: func(t *testing.T, s *Store, _ storage.Space, _ map[string]storage.Node) string {
			var key string
			if err := s.pool.QueryRow(t.Context(), `SELECT object FROM chunks`).Scan(&key); err != nil {
				t.Fatalf("chunk object: %v", err)
			}
			removeObjects(t, s, key)
			return ""
		},
		kind: storage.ProblemDangling, inSpace: true, repairable: true,
	},
	{
		name: "version with a missing object",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			var key string
			err := s.pool.QueryRow(t.Context(), `SELECT content->0->>'k' FROM versions WHERE file_id = $1`,
				nodes["docs/a.txt"].ID).Scan(&key)
			if err != nil {
				t.Fatalf("version object: %v", err)
			}
			removeObjects(t, s, key)
			return "docs/a.txt"
		},
		kind: storage.ProblemMissingContent, inSpace: true, repairable: true,
		repaired: func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node) {
			vs, err := s.FileVersions(t.Context(), sp.ID, nodes["docs/a.txt"].ID)
			if err != nil || len(vs) != 0 {
				t.Errorf("versions after the repair: %v, %v", vs, err)
			}
		},
	},
	{
		name: "wrong versions counter",
		damage: func(t *testing.T, s *Store, sp storage.Space, _ map[string]storage.Node) string {
			execSQL(t, s, `UPDATE spaces SET versions_bytes = versions_bytes + 5 WHERE id = $1`, sp.ID)
			return ""
		},
		kind: storage.ProblemUsage, inSpace: true, repairable: true,
	},
	{
		name: "wrong node counter",
		damage: func(t *testing.T, s *Store, sp storage.Space, _ map[string]storage.Node) string {
			execSQL(t, s, `UPDATE spaces SET nodes = nodes + 5 WHERE id = $1`, sp.ID)
			return ""
		},
		kind: storage.ProblemUsage, inSpace: true, repairable: true,
	},
	{
		name: "wrong properties counter",
		damage: func(t *testing.T, s *Store, sp storage.Space, _ map[string]storage.Node) string {
			execSQL(t, s, `UPDATE spaces SET props_bytes = 0 WHERE id = $1`, sp.ID)
			return ""
		},
		kind: storage.ProblemUsage, inSpace: true, repairable: true,
	},
	{
		name: "wrong chunked upload counters",
		damage: func(t *testing.T, s *Store, _ storage.Space, _ map[string]storage.Node) string {
			execSQL(t, s, `UPDATE chunked_uploads SET stored = stored + 3, parts = parts + 1`)
			return ""
		},
		kind: storage.ProblemUsage, inSpace: true, repairable: true,
	},
	{
		name: "node at the trash's root that is no item",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			var key string
			if err := s.pool.QueryRow(t.Context(), `DELETE FROM trash_items WHERE node_id = $1 RETURNING key`, nodes["old"].ID).Scan(&key); err != nil {
				t.Fatalf("dropping the trash item: %v", err)
			}
			return "trash-bin/" + key
		},
		kind: storage.ProblemDangling, inSpace: true,
	},
	{
		name: "node below a file",
		damage: func(t *testing.T, s *Store, _ storage.Space, nodes map[string]storage.Node) string {
			execSQL(t, s, `UPDATE nodes SET parent_id = $1 WHERE id = $2`, nodes["docs/solo.txt"].ID, nodes["empty"].ID)
			return "docs/solo.txt/empty"
		},
		kind: storage.ProblemDangling, inSpace: true,
	},
	{
		name: "share on a trashed node",
		damage: func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node) string {
			execSQL(t, s, `INSERT INTO shares (id, kind, space_id, node_id, creator, role, grantee, created_ns)
				VALUES ('stale', $1, $2, $3, 'einstein', $4, 'marie', 1)`,
				storage.ShareWithUser, sp.ID, nodes["old/c.txt"].ID, storage.ShareViewer)
			var key string
			if err := s.pool.QueryRow(t.Context(), `SELECT key FROM trash_items WHERE node_id = $1`, nodes["old"].ID).Scan(&key); err != nil {
				t.Fatalf("trash item: %v", err)
			}
			return "trash-bin/" + key + "/c.txt"
		},
		kind: storage.ProblemDangling, inSpace: true, repairable: true,
		repaired: func(t *testing.T, s *Store, _ storage.Space, _ map[string]storage.Node) {
			if n := shareRows(t, s); n != 2 {
				t.Errorf("%d share rows after the repair, want the workload's 2", n)
			}
		},
	},
	{
		name: "lock on a node of another space",
		damage: func(t *testing.T, s *Store, sp storage.Space, nodes map[string]storage.Node) string {
			other, err := s.PersonalSpace(t.Context(), storage.User{ID: "marie"})
			if err != nil {
				t.Fatalf("PersonalSpace: %v", err)
			}
			execSQL(t, s, `UPDATE locks SET space_id = $1`, other.ID)
			return "docs/a.txt"
		},
		kind: storage.ProblemDangling, repairable: true,
	},
}

// TestCheckFindsAndRepairs: each corruption, done behind the store's back,
// is found with its kind, space and path; a repair fixes the repairable
// ones, after which a check is clean, and leaves the others reported.
func TestCheckFindsAndRepairs(t *testing.T) {
	for _, tc := range corruptions {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a database and a bucket of its own
			s := openTestStore(t, checkOpts)
			sp, nodes := checkWorkload(t, s)
			requireClean(t, s)
			path := tc.damage(t, s, sp, nodes)

			problems, _ := runCheck(t, s, storage.CheckOptions{Deep: true})
			if len(problems) != 1 {
				t.Fatalf("found %d problems, want 1: %v", len(problems), problems)
			}
			p := problems[0]
			wantSpace := ""
			if tc.inSpace {
				wantSpace = sp.ID
			}
			if tc.space != "" {
				wantSpace = tc.space
			}
			if tc.name == "lock on a node of another space" {
				wantSpace = p.SpaceID // the lock's space, checked below
				if wantSpace == sp.ID {
					t.Errorf("the lock's problem names the node's space, not the lock's")
				}
			}
			if p.Kind != tc.kind || p.SpaceID != wantSpace || p.Path != path || p.Repairable != tc.repairable || p.Repaired {
				t.Fatalf("found %+v, want kind %s in %q at %q, repairable %v", p, tc.kind, wantSpace, path, tc.repairable)
			}

			problems, sum := runCheck(t, s, storage.CheckOptions{Repair: true})
			if len(problems) != 1 || problems[0].Repaired != tc.repairable || sum.Repaired != btoi(tc.repairable) {
				t.Fatalf("repair reported %v (summary %+v)", problems, sum)
			}
			if !tc.repairable {
				return
			}
			requireClean(t, s)
			if tc.repaired != nil {
				tc.repaired(t, s, sp, nodes)
			}
		})
	}
}

// TestCheckRepairedOrphanIsSwept: an orphan a repair hands to the sweep is
// gone from the bucket after the sweep's next pass.
func TestCheckRepairedOrphanIsSwept(t *testing.T) {
	opts := checkOpts
	opts.Sweep = 20 * time.Millisecond
	s := openTestStore(t, opts)
	key := newObjectKey(prefixFile)
	if _, err := s.objects.Put(t.Context(), key, strings.NewReader("stray"), 5); err != nil {
		t.Fatalf("putting a stray object: %v", err)
	}
	if problems, _ := runCheck(t, s, storage.CheckOptions{Repair: true}); len(problems) != 1 || !problems[0].Repaired {
		t.Fatalf("repair reported %v", problems)
	}
	waitGone(t, s, key)
}

// TestCheckSkipsYoungObjects: an object younger than ObjectGrace may be
// one a writer is about to record; it is not judged.
func TestCheckSkipsYoungObjects(t *testing.T) {
	s := openTestStore(t, Options{ObjectGrace: time.Hour})
	if _, err := s.objects.Put(t.Context(), newObjectKey(prefixFile), strings.NewReader("young"), 5); err != nil {
		t.Fatalf("putting an object: %v", err)
	}
	requireClean(t, s)
}

// TestCheckDeepFindsChecksum: a deep check reads the content through and
// finds one whose SHA1 is not the recorded one; a shallow check does not
// read it.
func TestCheckDeepFindsChecksum(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp, nodes := checkWorkload(t, s)
	key := contentOf(t, s, nodes["docs/solo.txt"].ID)[0].Key
	if _, err := s.objects.Put(t.Context(), key, strings.NewReader("ALONE"), 5); err != nil {
		t.Fatalf("overwriting %s: %v", key, err)
	}
	if problems, _ := runCheck(t, s, storage.CheckOptions{}); len(problems) != 0 {
		t.Fatalf("a shallow check found %v", problems)
	}
	problems, _ := runCheck(t, s, storage.CheckOptions{Deep: true, Repair: true})
	if len(problems) != 1 || problems[0].Kind != storage.ProblemChecksum || problems[0].SpaceID != sp.ID ||
		problems[0].Path != "docs/solo.txt" || problems[0].Repaired {
		t.Fatalf("a deep check found %v", problems)
	}
}

// TestCheckNeedsTheBackends: a store that has not reached its backends
// cannot be checked.
func TestCheckNeedsTheBackends(t *testing.T) {
	s := &Store{}
	_, err := s.Check(context.Background(), storage.CheckOptions{}, func(storage.Problem) {})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Check: %v", err)
	}
}

func removeObjects(t *testing.T, s *Store, keys ...string) {
	t.Helper()
	if err := s.objects.Remove(t.Context(), keys...); err != nil {
		t.Fatalf("removing %v: %v", keys, err)
	}
}

func execSQL(t *testing.T, s *Store, sql string, args ...any) {
	t.Helper()
	if _, err := s.pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCheckWhileServing: a check of a store that clients change meanwhile,
// with a sweep removing what they release at once, reports nothing: what
// changed under it is not taken for damage.
func TestCheckWhileServing(t *testing.T) {
	opts := checkOpts
	opts.Sweep = 20 * time.Millisecond
	s := openTestStore(t, opts)
	ctx := t.Context()
	sp, nodes := checkWorkload(t, s)

	const writers, rounds = 2, 15
	done := make(chan error, writers)
	for w := range writers {
		go func() { done <- churn(ctx, s, sp.ID, nodes["docs"].ID, w, rounds) }()
	}
	running, checks := writers, 0
	for ; running > 0 || checks == 0; checks++ {
		_, err := s.Check(ctx, storage.CheckOptions{Deep: true}, func(p storage.Problem) {
			t.Errorf("check %d while serving found: %s", checks, p)
		})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		for drained := false; !drained; {
			select {
			case err := <-done:
				running--
				if err != nil {
					t.Fatalf("writer: %v", err)
				}
			default:
				drained = true
			}
		}
	}
	t.Logf("%d checks ran while the clients wrote", checks)
	requireClean(t, s)
}

// churn writes, replaces, moves and removes files in folder parent, rounds
// times, as client w.
func churn(ctx context.Context, s *Store, spaceID, parent string, w, rounds int) error {
	for i := range rounds {
		name := fmt.Sprintf("w%d-%d", w, i)
		for _, content := range []string{"one", "and two"} {
			u, err := s.NewUpload(ctx, spaceID)
			if err != nil {
				return err
			}
			if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
				u.Discard()
				return err
			}
			_, _, err = u.Commit(ctx, storage.Commit{ParentID: parent, Name: name})
			u.Discard()
			if err != nil {
				return fmt.Errorf("commit %s: %w", name, err)
			}
		}
		n, err := s.Child(ctx, spaceID, parent, name)
		if err != nil {
			return err
		}
		moved, _, err := s.Move(ctx, spaceID, storage.Transfer{NodeID: n.ID, NewParentID: spaceID, NewName: name})
		if err != nil {
			return fmt.Errorf("move %s: %w", name, err)
		}
		if i%2 == 0 {
			if err := s.Remove(ctx, spaceID, moved.ID, storage.Conditions{}); err != nil {
				return fmt.Errorf("remove %s: %w", name, err)
			}
		}
	}
	return nil
}

// TestCheckOfSoundTreeInShortReads: the check of a space of 200 folders
// of 250 files finds the folder sizes sound in reads of a few folders
// each, none holding a transaction for a quarter of the check (one read
// took a third of it).
func TestCheckOfSoundTreeInShortReads(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp := personal(t, s)
	ctx := t.Context()
	const folders, perFolder = 200, 250
	_, err := s.pool.Exec(ctx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag)
		SELECT 'dir-' || d, $1, $1, 'dir-' || d, $2, $3, now(), md5(d::text) FROM generate_series(1, $4) AS d`,
		sp.ID, storage.KindFolder, perFolder, folders)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, sha1, content)
			SELECT 'file-' || d || '-' || f, $1, 'dir-' || d, 'f' || f, $2, 1, now(), md5(f::text), '',
				'[{"n": 1, "d": "eA=="}]'
			FROM generate_series(1, $3) AS d, generate_series(1, $4) AS f`,
			sp.ID, storage.KindFile, folders, perFolder)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE nodes SET size = $2 WHERE id = $1`, sp.ID, folders*perFolder)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE spaces SET nodes = nodes + $2 WHERE id = $1`, sp.ID, folders*(perFolder+1))
	}
	if err != nil {
		t.Fatal(err)
	}

	longestSoFar := watchTransactions(t, s)
	start := time.Now()
	problems, sum := runCheck(t, s, storage.CheckOptions{})
	took := time.Since(start)
	longest, statement := longestSoFar()
	t.Logf("check of %d nodes: %v, longest transaction %v, last running %s", sum.Nodes, took, longest, statement)
	if len(problems) != 0 {
		t.Fatalf("check of a sound tree found %d problems, the first %s", len(problems), problems[0])
	}
	if longest > took/4 {
		t.Errorf("longest transaction %v of the check's %v; want reads of at most a quarter", longest, took)
	}
}

// TestCheckWalksABigFolderInPages: a folder of more children than one
// read of the walk lists is walked a page of names at a time; its size is
// found right, then wrong when one file below it grows unrecorded.
func TestCheckWalksABigFolderInPages(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp := personal(t, s)
	ctx := t.Context()
	const files = 2*rangeRows + 7
	_, err := s.pool.Exec(ctx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag)
		VALUES ('big', $1, $1, 'big', $2, $3, now(), 'big')`, sp.ID, storage.KindFolder, files)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, sha1, content)
			SELECT 'file-' || f, $1, 'big', 'f' || f, $2, 1, now(), md5(f::text), '', '[{"n": 1, "d": "eA=="}]'
			FROM generate_series(1, $3) AS f`, sp.ID, storage.KindFile, files)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE nodes SET size = $2 WHERE id = $1`, sp.ID, files)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE spaces SET nodes = nodes + $2 WHERE id = $1`, sp.ID, files+1)
	}
	if err != nil {
		t.Fatal(err)
	}
	if problems, sum := runCheck(t, s, storage.CheckOptions{}); len(problems) != 0 || sum.Nodes < files+2 {
		t.Fatalf("check of a sound big folder: %d nodes, problems %v", sum.Nodes, problems)
	}

	if _, err := s.pool.Exec(ctx, `UPDATE nodes SET size = 2, content = '[{"n": 2, "d": "eHg="}]' WHERE id = 'file-9999'`); err != nil {
		t.Fatal(err)
	}
	problems, _ := runCheck(t, s, storage.CheckOptions{})
	var sizes []string
	for _, p := range problems {
		if p.Kind == storage.ProblemFolderSize {
			sizes = append(sizes, p.Path)
		}
	}
	if want := []string{"big", ""}; !slices.Equal(sizes, want) && !slices.Equal(sizes, []string{"", "big"}) {
		t.Fatalf("folder-size problems at %q, want the big folder and the root (all: %v)", sizes, problems)
	}
}
