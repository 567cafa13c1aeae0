// Package storetest holds the conformance tests of storage.Store: the
// behaviour the WebDAV layer relies on, which every implementation (the
// embedded bbolt store, a PostgreSQL + S3 store) must show. An
// implementation's tests call Run with a constructor of fresh stores.
package storetest

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// Store is a whole store under test.
type Store = storage.Backend

// conformanceTest is one test of the table: it runs on a fixture of a
// fresh store.
type conformanceTest struct {
	name string
	run  func(t *testing.T, f *fixture)
}

// Run runs every conformance test as a parallel subtest, each on a fresh
// store from newStore, which also arranges for the store to be closed;
// newStore is called from parallel tests.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []conformanceTest{
		{"CommitByIDFollowsMove", testCommitByIDFollowsMove},
		{"CommitByIDRules", testCommitByIDRules},
		{"CommitKeepSame", testCommitKeepSame},
		{"OpenPairsNodeAndContent", testOpenPairsNodeAndContent},
		{"ReadDirPropsMatchesReadDirAndProps", testReadDirPropsMatches},
		{"ReadDirPropsUnderChurn", testReadDirPropsUnderChurn},
		{"PropNameLimit", testPropNameLimit},
		{"PropCountAndSizeLimits", testPropLimits},
		{"PersonalQuota", testPersonalQuota},
		{"TransferConditions", testTransferConditions},
	}
	tests = append(tests, spaceTests...)
	tests = append(tests, treeTests...)
	tests = append(tests, contentTests...)
	tests = append(tests, lockTests...)
	tests = append(tests, sessionTests...)
	tests = append(tests, chunkTests...)
	tests = append(tests, usageTests...)
	tests = append(tests, usageGapTests...)
	tests = append(tests, nodeTests...)
	tests = append(tests, stallTests...)
	tests = append(tests, trashTests...)
	tests = append(tests, trashPagingTests...)
	tests = append(tests, trashRaceTests...)
	tests = append(tests, trashConstantTests...)
	tests = append(tests, restoreBatchTests...)
	tests = append(tests, versionTests...)
	tests = append(tests, undoQuotaTests...)
	tests = append(tests, undoRaceTests...)
	tests = append(tests, spaceListTests...)
	tests = append(tests, shareTests...)
	tests = append(tests, directoryTests...)
	tests = append(tests, previewTests...)
	tests = append(tests, searchTests...)
	tests = append(tests, attemptTests...)
	tests = append(tests, appPasswordTests...)
	tests = append(tests, loginFlowTests...)
	tests = append(tests, massDeleteTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each test has a store of its own, and many wait on the disk
			// or the database rather than the CPU.
			t.Parallel()
			tc.run(t, newFixture(t, newStore(t)))
		})
	}
}

// user owns the personal space of a fixture.
var user = storage.User{ID: "einstein", DisplayName: "Albert Einstein"}

// fixture is a store with the personal space of user.
type fixture struct {
	s     Store
	ctx   context.Context
	space storage.Space
}

func newFixture(t *testing.T, s Store) *fixture {
	t.Helper()
	f := &fixture{s: s, ctx: t.Context()}
	sp, err := s.PersonalSpace(f.ctx, user)
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	f.space = sp
	return f
}

func (f *fixture) root() string { return f.space.ID }

func (f *fixture) mkdir(t *testing.T, parent, name string) storage.Node {
	t.Helper()
	n, err := f.s.Mkdir(f.ctx, f.space.ID, parent, name)
	if err != nil {
		t.Fatalf("Mkdir %q: %v", name, err)
	}
	return n
}

// commit uploads content into the space and commits it as c says.
func (f *fixture) commit(spaceID, content string, c storage.Commit) (storage.Node, bool, error) {
	u, err := f.s.NewUpload(f.ctx, spaceID)
	if err != nil {
		return storage.Node{}, false, err
	}
	defer u.Discard()
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		return storage.Node{}, false, err
	}
	return u.Commit(f.ctx, c)
}

// put uploads content as the file name in folder parent.
func (f *fixture) put(t *testing.T, parent, name, content string) storage.Node {
	t.Helper()
	n, _, err := f.commit(f.space.ID, content, storage.Commit{ParentID: parent, Name: name})
	if err != nil {
		t.Fatalf("put %q: %v", name, err)
	}
	return n
}

func (f *fixture) node(t *testing.T, id string) storage.Node {
	t.Helper()
	n, err := f.s.Node(f.ctx, f.space.ID, id)
	if err != nil {
		t.Fatalf("Node %s: %v", id, err)
	}
	return n
}

// read returns the content of file id.
func (f *fixture) read(t *testing.T, id string) string {
	t.Helper()
	_, c, err := f.s.Open(f.ctx, f.space.ID, id)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return string(b)
}

// names lists the names of a folder's children.
func (f *fixture) names(t *testing.T, folder string) []string {
	t.Helper()
	nodes, err := f.s.ReadDir(f.ctx, f.space.ID, folder, "", 0)
	if err != nil {
		t.Fatalf("ReadDir %s: %v", folder, err)
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names
}

func (f *fixture) patch(t *testing.T, id string, patches ...storage.PropPatch) {
	t.Helper()
	if err := f.s.PatchProps(f.ctx, f.space.ID, id, patches); err != nil {
		t.Fatalf("PatchProps %s: %v", id, err)
	}
}

func prop(ns, local, user, value string) storage.Property {
	return storage.Property{Name: storage.PropName{Space: ns, Local: local}, User: user, Value: value}
}

func set(p storage.Property) storage.PropPatch { return storage.PropPatch{Property: p} }

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

// concurrently runs work(w) for w from 0 to n-1 at once, each on a
// goroutine of its own, and fails t with the errors they return.
func concurrently(t *testing.T, n int, work func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for w := range n {
		wg.Go(func() { errs[w] = work(w) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// race runs op(i) for i from 0 to n-1 at once and returns the i whose op
// succeeded, and the errors of those that failed other than with refused
// (the refusal the race is about).
func race(n int, refused error, op func(i int) error) (won []int, unexpected []error) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for i := range n {
		wg.Go(func() {
			err := op(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, i)
			case !errors.Is(err, refused):
				unexpected = append(unexpected, err)
			}
		})
	}
	wg.Wait()
	return won, unexpected
}
