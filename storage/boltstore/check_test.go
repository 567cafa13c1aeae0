package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// runCheck checks the store and returns what it reported.
func runCheck(t *testing.T, s *Store, opts storage.CheckOptions) ([]storage.Problem, storage.CheckSummary) {
	t.Helper()
	var found []storage.Problem
	sum, err := s.Check(ctx, opts, func(p storage.Problem) { found = append(found, p) })
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if sum.Problems != len(found) {
		t.Errorf("summary counts %d problems, %d reported", sum.Problems, len(found))
	}
	return found, sum
}

// wantProblem is a problem a test expects: its kind, path and whether it
// is repairable; the space is the fixture's unless global.
type wantProblem struct {
	kind       storage.ProblemKind
	path       string
	repairable bool
	global     bool   // not in a space
	space      string // in this space rather than the fixture's
}

func (w wantProblem) String() string {
	return string(w.kind) + " " + w.path
}

// wantProblems fails unless found are exactly want, in any order.
func wantProblems(t *testing.T, f *fixture, found []storage.Problem, want []wantProblem) {
	t.Helper()
	left := slices.Clone(found)
	for _, w := range want {
		space := f.space.ID
		switch {
		case w.global:
			space = ""
		case w.space != "":
			space = w.space
		}
		i := slices.IndexFunc(left, func(p storage.Problem) bool {
			return p.Kind == w.kind && p.Path == w.path && p.SpaceID == space && p.Repairable == w.repairable
		})
		if i < 0 {
			t.Errorf("no problem %v (repairable %v) in space %q among %v", w, w.repairable, space, found)
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, p := range left {
		t.Errorf("unexpected problem: %v (repairable %v)", p, p.Repairable)
	}
}

// corrupt changes the database directly, as damage would.
func (f *fixture) corrupt(t *testing.T, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := f.s.db.Update(fn); err != nil {
		t.Fatalf("corrupt: %v", err)
	}
}

// dropNode deletes node id's record and its folder's entry of it, as
// damage would, leaving whatever pointed at it.
func (f *fixture) dropNode(t *testing.T, id string) {
	t.Helper()
	r := f.record(t, id)
	f.corrupt(t, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketChildren).Delete(recordKey(&r)); err != nil {
			return err
		}
		return tx.Bucket(bucketNodes).Delete([]byte(r.ID))
	})
}

// record returns the record of node id.
func (f *fixture) record(t *testing.T, id string) rec {
	t.Helper()
	var r rec
	err := f.s.view(func(tx *txn) error {
		var ok bool
		var err error
		r, ok, err = tx.node(id)
		if err == nil && !ok {
			t.Fatalf("node %s missing", id)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rewrite changes the record of node id in place.
func (f *fixture) rewrite(t *testing.T, id string, change func(r *rec)) {
	t.Helper()
	r := f.record(t, id)
	change(&r)
	f.corrupt(t, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChildren).Put(recordKey(&r), encodeNode(&r))
	})
}

// checkFixture is a store with a small tree: docs/a.txt, docs/b.txt and
// docs/sub/c.txt, plus top.txt at the root.
type checkFixture struct {
	*fixture
	docs, sub, a, b, c, top storage.Node
}

func newCheckFixture(t *testing.T) *checkFixture {
	f := &checkFixture{fixture: newFixture(t)}
	f.docs = f.mkdir(t, f.root(), "docs")
	f.sub = f.mkdir(t, f.docs.ID, "sub")
	f.a = f.put(t, f.docs.ID, "a.txt", "alpha")
	f.b = f.put(t, f.docs.ID, "b.txt", "bravo!")
	f.c = f.put(t, f.sub.ID, "c.txt", "charlie")
	f.top = f.put(t, f.root(), "top.txt", "top")
	return f
}

func TestCheckFindsAndRepairs(t *testing.T) {
	tests := []struct {
		name   string
		inject func(t *testing.T, f *checkFixture)
		want   []wantProblem
		// repairs are the problems a repair meets, when not want: a
		// problem that follows from another is gone once that is fixed.
		repairs []wantProblem
		// remain are the problems a repair cannot fix.
		remain []wantProblem
	}{{
		name: "missing content file",
		inject: func(t *testing.T, f *checkFixture) {
			os.Remove(f.s.blobPath(f.blob(t, f.a.ID)))
		},
		want:   []wantProblem{{kind: storage.ProblemMissingContent, path: "docs/a.txt"}},
		remain: []wantProblem{{kind: storage.ProblemMissingContent, path: "docs/a.txt"}},
	}, {
		name: "content file of another size",
		inject: func(t *testing.T, f *checkFixture) {
			os.WriteFile(f.s.blobPath(f.blob(t, f.c.ID)), []byte("longer than it was"), 0o600)
		},
		want:   []wantProblem{{kind: storage.ProblemContentSize, path: "docs/sub/c.txt"}},
		remain: []wantProblem{{kind: storage.ProblemContentSize, path: "docs/sub/c.txt"}},
	}, {
		name: "orphan content file",
		inject: func(t *testing.T, f *checkFixture) {
			blob := newBlobID()
			os.MkdirAll(filepath.Dir(f.s.blobPath(blob)), 0o700)
			os.WriteFile(f.s.blobPath(blob), []byte("nobody's"), 0o600)
		},
		want: []wantProblem{{kind: storage.ProblemOrphanContent, repairable: true, global: true}},
	}, {
		name: "wrong folder size",
		inject: func(t *testing.T, f *checkFixture) {
			f.rewrite(t, f.sub.ID, func(r *rec) { r.Size += 1000 })
		},
		// The folder is blamed, not its parent, whose size is right.
		want: []wantProblem{{kind: storage.ProblemFolderSize, path: "docs/sub", repairable: true}},
	}, {
		name: "wrong root size",
		inject: func(t *testing.T, f *checkFixture) {
			f.rewrite(t, f.root(), func(r *rec) { r.Size -= 3 })
		},
		want: []wantProblem{{kind: storage.ProblemFolderSize, path: "", repairable: true}},
	}, {
		name: "upload session without its bytes",
		inject: func(t *testing.T, f *checkFixture) {
			us, err := f.s.CreateSession(ctx, storage.UploadSession{SpaceID: f.space.ID, User: "einstein", Length: 10,
				Target: storage.Commit{ParentID: f.docs.ID, Name: "new.bin"}})
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(f.s.sessionPath(us.ID))
		},
		want: []wantProblem{{kind: storage.ProblemDangling, path: "docs/new.bin", repairable: true}},
	}, {
		name: "upload session in a space that does not exist",
		inject: func(t *testing.T, f *checkFixture) {
			us, err := f.s.CreateSession(ctx, storage.UploadSession{SpaceID: f.space.ID, User: "einstein", Length: 10,
				Target: storage.Commit{ParentID: f.docs.ID, Name: "new.bin"}})
			if err != nil {
				t.Fatal(err)
			}
			f.corrupt(t, func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketSessions)
				r, err := decodeSession(us.ID, b.Get([]byte(us.ID)))
				if err != nil {
					return err
				}
				r.SpaceID = "gone"
				return b.Put([]byte(us.ID), encodeSession(&r))
			})
		},
		// The reservation is counted in the space it was made in, and a
		// recount counts it in the space the session names.
		want: []wantProblem{
			{kind: storage.ProblemDangling, path: "docs/new.bin", repairable: true, space: "gone"},
			{kind: storage.ProblemUsage, repairable: true},
			{kind: storage.ProblemUsage, repairable: true, space: "gone"},
		},
		repairs: []wantProblem{
			{kind: storage.ProblemDangling, path: "docs/new.bin", repairable: true, space: "gone"},
			{kind: storage.ProblemUsage, repairable: true},
		},
	}, {
		name: "trash item pointing at nothing",
		inject: func(t *testing.T, f *checkFixture) {
			if err := f.s.Remove(ctx, f.space.ID, f.b.ID, storage.Conditions{}); err != nil {
				t.Fatal(err)
			}
			f.dropNode(t, f.b.ID)
		},
		// With the node go its content file's reference and the trash
		// counter.
		want: []wantProblem{
			{kind: storage.ProblemDangling, path: trashPath + "/" + "KEY", repairable: true},
			{kind: storage.ProblemDangling, repairable: true, global: true},
			{kind: storage.ProblemUsage, repairable: true},
		},
	}, {
		name: "hidden trash item pointing at nothing",
		inject: func(t *testing.T, f *checkFixture) {
			if err := f.s.Remove(ctx, f.space.ID, f.b.ID, storage.Conditions{}); err != nil {
				t.Fatal(err)
			}
			err := f.s.update(func(tx *txn) error {
				items, err := tx.trashItems(f.space.ID)
				if err != nil {
					return err
				}
				// The store stops before it purges.
				_, err = tx.hideTrashItem(f.space.ID, items[0])
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			f.dropNode(t, f.b.ID)
		},
		// With the node go its content file's reference and a node of
		// the counter; the trash counter let the item go when it hid it.
		want: []wantProblem{
			{kind: storage.ProblemDangling, path: trashPath + "/" + "KEY", repairable: true},
			{kind: storage.ProblemDangling, repairable: true, global: true},
			{kind: storage.ProblemUsage, repairable: true},
		},
	}, {
		name: "version pointing at nothing",
		inject: func(t *testing.T, f *checkFixture) {
			f.put(t, f.docs.ID, "a.txt", "alpha, second")
			vs, err := f.s.FileVersions(ctx, f.space.ID, f.a.ID)
			if err != nil || len(vs) != 1 {
				t.Fatalf("FileVersions = %v, %v", vs, err)
			}
			var blob string
			f.s.view(func(tx *txn) error {
				v, err := tx.version(f.space.ID, f.a.ID, vs[0].Key)
				blob = v.File.Blob
				return err
			})
			os.Remove(f.s.blobPath(blob))
		},
		want: []wantProblem{{kind: storage.ProblemMissingContent, path: "docs/a.txt", repairable: true}},
	}, {
		name: "version of a file that does not exist",
		inject: func(t *testing.T, f *checkFixture) {
			v := versionRec{Key: "v1", File: f.record(t, f.top.ID), Replaced: f.clk.Now()}
			v.File.ID = "no-such-file"
			v.File.Blob = newBlobID()
			f.corrupt(t, func(tx *bolt.Tx) error {
				if err := f.s.newTxn(tx).addUndo(f.space.ID, 0, v.File.Size); err != nil {
					return err
				}
				if err := f.s.newTxn(tx).countNodes(f.space.ID, 1); err != nil {
					return err
				}
				return tx.Bucket(bucketVersions).Put(versionRecKey(f.space.ID, v.File.ID, v.Key), encodeVersion(&v))
			})
		},
		want: []wantProblem{{kind: storage.ProblemDangling, repairable: true}},
	}, {
		name: "version without its age entry",
		inject: func(t *testing.T, f *checkFixture) {
			f.put(t, f.root(), "top.txt", "top, again")
			f.corrupt(t, func(tx *bolt.Tx) error {
				if err := tx.DeleteBucket(bucketVersionAges); err != nil {
					return err
				}
				_, err := tx.CreateBucket(bucketVersionAges)
				return err
			})
		},
		want: []wantProblem{{kind: storage.ProblemDangling, repairable: true}},
	}, {
		name: "age entry without its version",
		inject: func(t *testing.T, f *checkFixture) {
			f.corrupt(t, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketVersionAges).Put(versionAgeKey(f.space.ID, f.top.ID, "v1", f.clk.Now()), versionAgeValue(3))
			})
		},
		want: []wantProblem{{kind: storage.ProblemDangling, repairable: true}},
	}, {
		name: "wrong usage counter",
		inject: func(t *testing.T, f *checkFixture) {
			f.corrupt(t, func(tx *bolt.Tx) error {
				return f.s.newTxn(tx).putSpaceCounters(f.space.ID, spaceCounters{props: 77, versions: 5})
			})
		},
		want: []wantProblem{{kind: storage.ProblemUsage, repairable: true}},
	}, {
		name: "wrong node counter",
		inject: func(t *testing.T, f *checkFixture) {
			f.corrupt(t, func(tx *bolt.Tx) error {
				counters := f.s.newTxn(tx)
				c := counters.spaceCounters(f.space.ID)
				c.nodes += 5
				return counters.putSpaceCounters(f.space.ID, c)
			})
		},
		want: []wantProblem{{kind: storage.ProblemUsage, repairable: true}},
	}, {
		name: "properties of a node that does not exist",
		inject: func(t *testing.T, f *checkFixture) {
			f.corrupt(t, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketProps).Put(propKey("ghost", "", storage.PropName{Space: "ns:", Local: "x"}), []byte("v"))
			})
		},
		want: []wantProblem{{kind: storage.ProblemDangling, repairable: true, global: true}},
	}, {
		name: "lock on a node that does not exist",
		inject: func(t *testing.T, f *checkFixture) {
			l := f.lock(t, f.space.ID, f.c.ID, false, storage.LockExclusive, 0)
			l.NodeID = "ghost"
			f.corrupt(t, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketLocks).Put(lockKey(l.SpaceID, l.Token), encodeLock(l))
			})
		},
		want: []wantProblem{{kind: storage.ProblemDangling, path: "/" + "NODE", repairable: true}},
	}, {
		name: "node without its index entry",
		inject: func(t *testing.T, f *checkFixture) {
			f.corrupt(t, func(tx *bolt.Tx) error { return tx.Bucket(bucketNodes).Delete([]byte(f.c.ID)) })
		},
		// Its content file's reference names a node that cannot be found.
		want: []wantProblem{
			{kind: storage.ProblemDangling, path: "docs/sub/c.txt", repairable: true},
			{kind: storage.ProblemDangling, repairable: true, global: true},
		},
		repairs: []wantProblem{{kind: storage.ProblemDangling, path: "docs/sub/c.txt", repairable: true}},
	}, {
		name: "content file without its reference",
		inject: func(t *testing.T, f *checkFixture) {
			blob := f.blob(t, f.top.ID)
			f.corrupt(t, func(tx *bolt.Tx) error { return tx.Bucket(bucketBlobs).Delete([]byte(blob)) })
		},
		// The orphan sweep would take the content file for an orphan.
		want: []wantProblem{
			{kind: storage.ProblemDangling, path: "top.txt", repairable: true},
			{kind: storage.ProblemOrphanContent, repairable: true, global: true},
		},
		repairs: []wantProblem{{kind: storage.ProblemDangling, path: "top.txt", repairable: true}},
	}, {
		name: "node whose parent does not exist",
		inject: func(t *testing.T, f *checkFixture) {
			r := f.record(t, f.sub.ID)
			f.corrupt(t, func(tx *bolt.Tx) error {
				if err := tx.Bucket(bucketChildren).Delete(recordKey(&r)); err != nil {
					return err
				}
				if err := f.s.newTxn(tx).countNodes(f.space.ID, -1); err != nil {
					return err
				}
				return tx.Bucket(bucketNodes).Delete([]byte(r.ID))
			})
		},
		// docs no longer holds what its size says; c.txt is out of reach
		// with its content, which the check never removes.
		want: []wantProblem{
			{kind: storage.ProblemFolderSize, path: "docs", repairable: true},
			{kind: storage.ProblemFolderSize, path: "", repairable: true},
			{kind: storage.ProblemDangling, path: "c.txt"},
		},
		remain: []wantProblem{{kind: storage.ProblemDangling, path: "c.txt"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newCheckFixture(t)
			if found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(found) > 0 {
				t.Fatalf("problems before the damage: %v", found)
			}
			tt.inject(t, f)
			want := f.resolve(tt.want)
			found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true})
			wantProblems(t, f.fixture, found, want)
			for _, p := range found {
				if p.Repaired {
					t.Errorf("repaired without Repair: %v", p)
				}
			}
			again, _ := runCheck(t, f.s, storage.CheckOptions{})
			wantProblems(t, f.fixture, again, want)

			repaired, sum := runCheck(t, f.s, storage.CheckOptions{Repair: true})
			if tt.repairs != nil {
				want = f.resolve(tt.repairs)
			}
			wantProblems(t, f.fixture, repaired, want)
			for _, p := range repaired {
				if p.Repaired != p.Repairable {
					t.Errorf("repairable %v, repaired %v: %v", p.Repairable, p.Repaired, p)
				}
			}
			if n := countRepairable(repaired); sum.Repaired != n {
				t.Errorf("summary says %d repaired, %d were", sum.Repaired, n)
			}
			after, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true})
			wantProblems(t, f.fixture, after, f.resolve(tt.remain))
		})
	}
}

func countRepairable(ps []storage.Problem) int {
	n := 0
	for _, p := range ps {
		if p.Repairable {
			n++
		}
	}
	return n
}

// resolve fills in the paths that depend on the run: KEY is the key of
// the only trash item, hidden or not, NODE the lock root the fixture's
// lock helper gives.
func (f *checkFixture) resolve(want []wantProblem) []wantProblem {
	out := slices.Clone(want)
	for i, w := range out {
		if strings.Contains(w.path, "KEY") {
			var key string
			f.s.view(func(tx *txn) error {
				items, _ := tx.trashItems(f.space.ID)
				hidden, _ := tx.hiddenItems(2)
				switch {
				case len(items) == 1 && len(hidden) == 0:
					key = items[0].Key
				case len(items) == 0 && len(hidden) == 1:
					key = hidden[0].key
				}
				return nil
			})
			out[i].path = strings.Replace(w.path, "KEY", key, 1)
		}
		out[i].path = strings.Replace(out[i].path, "NODE", f.c.ID, 1)
	}
	return out
}

func TestCheckFolderSizeOfTrashedFolder(t *testing.T) {
	f := newCheckFixture(t)
	if err := f.s.Remove(ctx, f.space.ID, f.docs.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.rewrite(t, f.sub.ID, func(r *rec) { r.Size = 1 })
	var key string
	f.s.view(func(tx *txn) error {
		items, err := tx.trashItems(f.space.ID)
		key = items[0].Key
		return err
	})
	found, _ := runCheck(t, f.s, storage.CheckOptions{Repair: true})
	wantProblems(t, f.fixture, found, []wantProblem{{kind: storage.ProblemFolderSize, path: trashPath + "/" + key + "/sub", repairable: true}})
	if after, _ := runCheck(t, f.s, storage.CheckOptions{}); len(after) > 0 {
		t.Errorf("after repair: %v", after)
	}
}

func TestCheckInlineContent(t *testing.T) {
	f := newFixtureWith(t, newClock(), Options{})
	s := f.s
	small := f.put(t, f.root(), "small.txt", "tiny")
	other := f.put(t, f.root(), "other.txt", "tidy")
	r := (&checkFixture{fixture: f}).record(t, small.ID)
	o := (&checkFixture{fixture: f}).record(t, other.ID)
	if !r.inlined() || !o.inlined() {
		t.Fatal("small files are not inline")
	}
	f.corrupt(t, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketInline).Delete(inlineKey(r.Inline)); err != nil {
			return err
		}
		return tx.Bucket(bucketInline).Put(inlineKey(o.Inline), []byte("tilt"))
	})
	f.corrupt(t, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketInline).Put(inlineKey(r.Inline+1000), []byte("nobody's"))
	})
	found, _ := runCheck(t, s, storage.CheckOptions{})
	wantProblems(t, f, found, []wantProblem{
		{kind: storage.ProblemMissingContent, path: "small.txt"},
		{kind: storage.ProblemOrphanContent, repairable: true, global: true},
	})
	found, _ = runCheck(t, s, storage.CheckOptions{Deep: true, Repair: true})
	wantProblems(t, f, found, []wantProblem{
		{kind: storage.ProblemMissingContent, path: "small.txt"},
		{kind: storage.ProblemChecksum, path: "other.txt"},
		{kind: storage.ProblemOrphanContent, repairable: true, global: true},
	})
	found, _ = runCheck(t, s, storage.CheckOptions{})
	wantProblems(t, f, found, []wantProblem{{kind: storage.ProblemMissingContent, path: "small.txt"}})
}

func TestCheckOrphanUploadFiles(t *testing.T) {
	f := newCheckFixture(t)
	os.WriteFile(f.s.sessionPath(newBlobID()), []byte("left over"), 0o600)
	os.Mkdir(f.s.chunkDirPath(newBlobID()), 0o700)
	if found, _ := runCheck(t, f.s, storage.CheckOptions{}); len(found) > 0 {
		t.Fatalf("files younger than the grace period reported: %v", found)
	}
	f.clk.Advance(time.Since(f.clk.Now()) + 2*orphanUploadGrace)
	found, _ := runCheck(t, f.s, storage.CheckOptions{Repair: true})
	wantProblems(t, f.fixture, found, []wantProblem{
		{kind: storage.ProblemOrphanContent, repairable: true, global: true},
		{kind: storage.ProblemOrphanContent, repairable: true, global: true},
	})
	if after, _ := runCheck(t, f.s, storage.CheckOptions{}); len(after) > 0 {
		t.Errorf("after repair: %v", after)
	}
}

// TestCheckCleanAfterWorkload runs a mix of everything the store does and
// expects a deep check to find nothing, in batches smaller than the
// workload so that resuming is exercised.
func TestCheckCleanAfterWorkload(t *testing.T) {
	f := newFixtureWith(t, newClock(), Options{InlineLimit: 64})
	s := f.s
	project, err := s.PutSpace(ctx, storage.Space{ID: "project", Name: "Project", Quota: storage.NoQuota, Members: map[string]storage.Role{"einstein": storage.RoleManager}})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, f)
	pf := &fixture{s: s, clk: f.clk, dir: f.dir, space: project}
	workload(t, pf)

	var found []storage.Problem
	sum, err := s.check(ctx, storage.CheckOptions{Deep: true}, func(p storage.Problem) { found = append(found, p) }, 7)
	if err != nil || len(found) > 0 {
		t.Fatalf("a deep check of a store after a workload found %v, %v", found, err)
	}
	if sum.Spaces != 2 || sum.Nodes < 200 || sum.Contents < 200 || sum.Bytes == 0 {
		t.Errorf("summary %+v", sum)
	}
	if _, err := s.Check(ctx, storage.CheckOptions{Repair: true}, func(p storage.Problem) { t.Errorf("repair found %v", p) }); err != nil {
		t.Fatal(err)
	}
}

// workload fills the fixture's space with folders, files inline and not,
// replaced files (versions), deleted and restored ones (trash), copies,
// moves, properties, locks, an upload session and a chunked upload.
func workload(t *testing.T, f *fixture) {
	t.Helper()
	dirs := []string{f.root()}
	for i := 0; i < 6; i++ {
		d := f.mkdir(t, dirs[i/2], "dir"+string(rune('a'+i)))
		dirs = append(dirs, d.ID)
	}
	var files []storage.Node
	for i := 0; i < 180; i++ {
		content := strings.Repeat(string(rune('a'+i%26)), 10+i*7)
		files = append(files, f.put(t, dirs[i%len(dirs)], "file"+string(rune('A'+i%26))+strings.Repeat("x", i/26), content))
	}
	for i := 0; i < 30; i++ { // versions
		n := files[i]
		f.clk.Advance(time.Minute)
		if _, _, err := f.commit(n.ParentID, n.Name, "again "+n.Name+strings.Repeat("!", i*5), storage.Commit{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.RestoreVersion(ctx, f.space.ID, files[0].ID, mustVersions(t, f, files[0].ID)[0].Key, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range files[30:50] { // trash
		if err := f.s.Remove(ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.Remove(ctx, f.space.ID, dirs[3], storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	if err != nil || len(items) < 3 {
		t.Fatalf("TrashItems = %d, %v", len(items), err)
	}
	if _, _, err := f.s.RestoreTrash(ctx, f.space.ID, items[0].Key, storage.Transfer{NodeID: items[0].Node.ID, NewParentID: f.root(), NewName: "restored"}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.PurgeTrash(ctx, f.space.ID, items[1].Key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: dirs[1], NewParentID: dirs[2], NewName: "copy"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: dirs[4], NewParentID: dirs[6], NewName: "moved"}); err != nil {
		t.Fatal(err)
	}
	err = f.s.PatchProps(ctx, f.space.ID, files[60].ID, []storage.PropPatch{{Property: storage.Property{Name: storage.PropName{Space: "ns:", Local: "color"}, Value: "blue"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateLock(ctx, storage.Lock{SpaceID: f.space.ID, NodeID: files[61].ID, Root: "/x", Scope: storage.LockExclusive, User: "einstein"}, storage.LockLimits{}); err != nil {
		t.Fatal(err)
	}
	us, err := f.s.CreateSession(ctx, storage.UploadSession{SpaceID: f.space.ID, User: "einstein", Length: 100, Target: storage.Commit{ParentID: f.root(), Name: "tus.bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AppendSession(ctx, us.ID, 0, strings.NewReader("first forty bytes of a resumable upload."), nil); err != nil {
		t.Fatal(err)
	}
	cu, err := f.s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "chunks-" + f.space.ID, User: "einstein", SpaceID: f.space.ID, Length: 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutChunk(ctx, cu.ID, "00001", strings.NewReader("0123456789")); err != nil {
		t.Fatal(err)
	}
	f.share(t, storage.Share{Kind: storage.ShareLink, NodeID: files[70].ID, Role: storage.ShareViewer})
	f.share(t, storage.Share{Kind: storage.ShareWithGroup, NodeID: dirs[2], Role: storage.ShareEditor, Grantee: "physics"})
	gone := f.share(t, storage.Share{Kind: storage.ShareWithUser, NodeID: files[71].ID, Role: storage.ShareViewer, Grantee: "marie"})
	if err := f.s.Remove(ctx, f.space.ID, gone.NodeID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
}

func mustVersions(t *testing.T, f *fixture, id string) []storage.Version {
	t.Helper()
	vs, err := f.s.FileVersions(ctx, f.space.ID, id)
	if err != nil || len(vs) == 0 {
		t.Fatalf("FileVersions = %v, %v", vs, err)
	}
	return vs
}

// TestCheckInspectSeesWhatOpenWouldRecover: a store opened for
// inspection runs neither the recovery at open nor the sweeps, so a check
// sees an orphan content file and a session without its bytes, which an
// ordinary open would have removed unreported.
func TestCheckInspectSeesWhatOpenWouldRecover(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{InlineLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	us, err := s.CreateSession(ctx, storage.UploadSession{SpaceID: sp.ID, User: "einstein", Length: 10, Target: storage.Commit{ParentID: sp.ID, Name: "tus.bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, sessionsDir, us.ID))
	orphan := newBlobID()
	os.MkdirAll(filepath.Join(dir, blobsDir, orphan[:2]), 0o700)
	os.WriteFile(filepath.Join(dir, blobsDir, orphan[:2], orphan), []byte("orphan"), 0o600)

	s, err = Open(dir, Options{Inspect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := &fixture{s: s, space: sp}
	found, _ := runCheck(t, s, storage.CheckOptions{Repair: true})
	wantProblems(t, f, found, []wantProblem{
		{kind: storage.ProblemDangling, path: "tus.bin", repairable: true},
		{kind: storage.ProblemOrphanContent, repairable: true, global: true},
	})
	if after, _ := runCheck(t, s, storage.CheckOptions{}); len(after) > 0 {
		t.Errorf("after repair: %v", after)
	}
}

// TestCheckWhileServing checks, and repairs, while writers change the
// store in every way a client can: a check of a serving store must report
// nothing that is only a change seen half-way, and a repair must change
// nothing.
func TestCheckWhileServing(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{NoSync: true, InlineLimit: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, dir: dir, space: sp}
	const writers, rounds = 4, 25
	errs := make(chan error, writers)
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		go func() { errs <- churn(f, w, rounds) }()
	}
	go func() {
		for w := 0; w < writers; w++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		close(done)
	}()
	for run := 0; ; run++ {
		opts := storage.CheckOptions{Deep: run%2 == 0, Repair: run%2 == 1}
		_, err := s.check(ctx, opts, func(p storage.Problem) { t.Errorf("check %d while serving: %v", run, p) }, 3)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			if run == 0 {
				t.Log("the writers ended before the first check did")
			}
			found, _ := runCheck(t, s, storage.CheckOptions{Deep: true})
			if len(found) > 0 {
				t.Fatalf("after the writers: %v", found)
			}
			return
		default:
		}
	}
}

// churn makes rounds of changes in a folder of its own: files created,
// replaced, moved, copied, deleted and restored, properties, locks, an
// upload session and a chunked upload each round.
func churn(f *fixture, w, rounds int) error {
	s, spaceID := f.s, f.space.ID
	dir, err := s.Mkdir(ctx, spaceID, spaceID, "w"+string(rune('0'+w)))
	if err != nil {
		return err
	}
	put := func(parent, name, content string) (storage.Node, error) {
		n, _, err := f.commit(parent, name, content, storage.Commit{})
		return n, err
	}
	for i := 0; i < rounds; i++ {
		sub, err := s.Mkdir(ctx, spaceID, dir.ID, "sub"+strings.Repeat("x", i))
		if err != nil {
			return err
		}
		n, err := put(sub.ID, "f", strings.Repeat("a", 10+i*13))
		if err != nil {
			return err
		}
		if _, err := put(sub.ID, "f", strings.Repeat("b", 100+i)); err != nil {
			return err
		}
		if err := s.PatchProps(ctx, spaceID, n.ID, []storage.PropPatch{{Property: storage.Property{Name: storage.PropName{Space: "ns:", Local: "p"}, Value: "v"}}}); err != nil {
			return err
		}
		if _, _, err := s.Copy(ctx, spaceID, storage.Transfer{NodeID: sub.ID, NewParentID: dir.ID, NewName: "copy" + strings.Repeat("y", i)}); err != nil {
			return err
		}
		if _, _, err := s.Move(ctx, spaceID, storage.Transfer{NodeID: n.ID, NewParentID: dir.ID, NewName: "moved" + strings.Repeat("z", i)}); err != nil {
			return err
		}
		l, err := s.CreateLock(ctx, storage.Lock{SpaceID: spaceID, NodeID: n.ID, Root: "/x", Scope: storage.LockExclusive, User: "einstein"}, storage.LockLimits{})
		if err != nil {
			return err
		}
		if err := s.RemoveLock(ctx, spaceID, l.Token); err != nil {
			return err
		}
		if err := s.Remove(ctx, spaceID, sub.ID, storage.Conditions{}); err != nil {
			return err
		}
		switch i % 3 {
		case 0:
			if err := s.EmptyTrash(ctx, spaceID); err != nil {
				return err
			}
		case 1:
			items, err := storage.AllTrashItems(ctx, s, spaceID)
			if err != nil {
				return err
			}
			for _, item := range items {
				if item.Node.ID != sub.ID {
					continue
				}
				back := storage.Transfer{NodeID: sub.ID, NewParentID: dir.ID, NewName: "back" + strings.Repeat("b", i)}
				// Another writer may have emptied the space's trash since
				// it was listed.
				_, _, err := s.RestoreTrash(ctx, spaceID, item.Key, back)
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					return err
				}
			}
		}
		us, err := s.CreateSession(ctx, storage.UploadSession{SpaceID: spaceID, User: "einstein", Length: 6,
			Target: storage.Commit{ParentID: dir.ID, Name: "tus" + strings.Repeat("t", i)}})
		if err != nil {
			return err
		}
		if _, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("123456"), nil); err != nil {
			return err
		}
		if _, _, err := s.CompleteSession(ctx, us.ID, nil, time.Time{}); err != nil {
			return err
		}
		cu, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "c" + string(rune('0'+w)), User: "einstein", SpaceID: spaceID, Length: 20})
		if err != nil {
			return err
		}
		for _, part := range []string{"1", "2", "1"} {
			if _, err := s.PutChunk(ctx, cu.ID, part, strings.NewReader("0123456789")); err != nil {
				return err
			}
		}
		if err := s.RemoveChunkedUpload(ctx, cu.ID); err != nil {
			return err
		}
	}
	return nil
}

// Folders whose parent chain loops are in no space: check reports the
// nodes below each, which no walk from a root reaches, and its repairs
// take nothing of them, neither a version nor a content file.
func TestCheckFindsLoops(t *testing.T) {
	f := newCheckFixture(t)
	if _, _, err := f.commit(f.docs.ID, "a.txt", "alpha, again", storage.Commit{NodeID: f.a.ID}); err != nil {
		t.Fatal(err)
	}
	blob := f.blob(t, f.a.ID)
	// docs becomes a child of its own child sub.
	docs := f.record(t, f.docs.ID)
	f.corrupt(t, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketChildren).Delete(recordKey(&docs)); err != nil {
			return err
		}
		docs.ParentID = f.sub.ID
		k := recordKey(&docs)
		if err := tx.Bucket(bucketChildren).Put(k, encodeNode(&docs)); err != nil {
			return err
		}
		return tx.Bucket(bucketNodes).Put([]byte(docs.ID), k)
	})
	if _, err := f.s.Node(ctx, f.space.ID, f.a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Node of a file below a loop = %v, want not found", err)
	}
	found, _ := runCheck(t, f.s, storage.CheckOptions{Repair: true})
	err := f.s.view(func(tx *txn) error {
		if versions, err := tx.fileVersions(f.space.ID, f.a.ID); err != nil || len(versions) != 1 {
			t.Errorf("versions of a file below the loop after the repairs: %v, %v", versions, err)
		}
		if string(tx.blobs().Get([]byte(blob))) != f.a.ID {
			t.Error("the repairs dropped the content file of a file below the loop")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	loops := map[string]bool{}
	for _, p := range found {
		if strings.Contains(p.Detail, "lead to no space root") {
			loops[p.Detail] = p.SpaceID == f.space.ID && !p.Repairable
		}
	}
	for _, folder := range []string{f.docs.ID, f.sub.ID} {
		detail := "the nodes below folder " + folder + " lead to no space root: its parent chain breaks or loops"
		if ok, found := loops[detail]; !found || !ok {
			t.Errorf("no unrepairable finding %q in the space among %v", detail, found)
		}
	}
}
