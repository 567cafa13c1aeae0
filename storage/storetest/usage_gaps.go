package storetest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// usageGapTests pin that an upload's reservation passes into use without
// a gap: from its creation until its commit counts the bytes as a file's
// (or its failure or removal gives them back), no other upload can take
// the room it holds.
var usageGapTests = []conformanceTest{
	{"UsageCompletionKeepsItsRoom", testUsageCompletionKeepsItsRoom},
	{"UsageCompletionsRace", testUsageCompletionsRace},
	{"UsageAppendsRaceWithoutLeaks", testUsageAppendsRaceWithoutLeaks},
	{"UsageAssemblyKeepsItsRoom", testUsageAssemblyKeepsItsRoom},
	{"UsageFailedAssemblyKeepsItsRoom", testUsageFailedAssemblyKeepsItsRoom},
	{"UsageAssemblyIntoAnotherSpace", testUsageAssemblyIntoAnotherSpace},
}

// Bounds of the creations racing a completion: they try until it is done,
// but never more than this many times each.
const (
	racingCreators       = 4
	racingCreateAttempts = 5000
	completionRounds     = 8
)

// racingCreations starts creators that try, one after the other, to start
// a one-byte session in the fixture's space until stop is closed. It
// returns once each has tried at least once, so that they race what the
// caller does next; wait waits for them and returns the sessions they
// started, which only room freed too early lets them start.
func (f *fixture) racingCreations(stop <-chan struct{}) (wait func() ([]storage.UploadSession, []error)) {
	var (
		wg       sync.WaitGroup
		ready    sync.WaitGroup
		mu       sync.Mutex
		started  []storage.UploadSession
		failures []error
	)
	for i := range racingCreators {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(ready.Done)
			defer once()
			for range racingCreateAttempts {
				us, err := f.s.CreateSession(f.ctx, f.sessionFor(fmt.Sprintf("racer-%d", i), 1))
				once()
				mu.Lock()
				switch {
				case err == nil:
					started = append(started, us)
				case !errors.Is(err, storage.ErrInsufficientStorage):
					failures = append(failures, err)
				}
				mu.Unlock()
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	ready.Wait()
	return func() ([]storage.UploadSession, []error) {
		wg.Wait()
		return started, failures
	}
}

// A complete upload that fills the quota exactly commits, however many
// other uploads try to start while it completes: the room it reserved
// passes to its file in one step, never free in between.
func testUsageCompletionKeepsItsRoom(t *testing.T, f *fixture) {
	f.keepNoUndo() // each round starts from an empty space, not a full trash
	const quota = 1000
	f.s.SetPersonalQuota(quota)
	for round := range completionRounds {
		us := f.newSession(t, "full", quota)
		f.appendPart(t, us.ID, 0, strings.Repeat("x", quota))
		stop := make(chan struct{})
		wait := f.racingCreations(stop)
		n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
		close(stop)
		started, failures := wait()
		if err != nil || len(started) > 0 || len(failures) > 0 {
			t.Fatalf("round %d: CompleteSession of a session filling the quota: %v; %d racing sessions started, unexpected errors %v",
				round, err, len(started), failures)
		}
		f.wantUsage(t, storage.Usage{Files: quota})
		if err := f.s.Remove(f.ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			t.Fatalf("Remove: %v", err)
		}
	}
}

// Of two completions and a removal of one session, racing, at most one
// commits; whatever the outcome, the session's reservation and its place
// among its user's open uploads are given back exactly once.
func testUsageCompletionsRace(t *testing.T, f *fixture) {
	f.keepNoUndo() // each round starts from an empty space, not a full trash
	const quota = 1000
	f.s.SetPersonalQuota(quota)
	for round := range completionRounds {
		s := f.sessionFor("raced", 600)
		s.OpenLimit = 1
		us, err := f.s.CreateSession(f.ctx, s)
		if err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		f.appendPart(t, us.ID, 0, strings.Repeat("r", 600))
		var (
			wg        sync.WaitGroup
			committed = make(chan storage.Node, 2)
			errs      = make(chan error, 3)
		)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
				if err == nil {
					committed <- n
				} else if !errors.Is(err, storage.ErrNotFound) {
					errs <- fmt.Errorf("CompleteSession: %w", err)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.s.RemoveSession(f.ctx, us.ID); err != nil && !errors.Is(err, storage.ErrNotFound) {
				errs <- fmt.Errorf("RemoveSession: %w", err)
			}
		}()
		wg.Wait()
		close(committed)
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		var files int64
		for n := range committed {
			if files > 0 {
				t.Fatalf("round %d: one session committed twice", round)
			}
			files = n.Size
			if err := f.s.Remove(f.ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
				t.Fatalf("Remove: %v", err)
			}
		}
		f.wantUsage(t, storage.Usage{})
		// The session no longer counts among its user's open uploads.
		next, err := f.s.CreateSession(f.ctx, s)
		if err != nil {
			t.Fatalf("round %d (%d bytes committed): CreateSession under an open uploads cap of 1: %v", round, files, err)
		}
		if err := f.s.RemoveSession(f.ctx, next.ID); err != nil {
			t.Fatalf("RemoveSession: %v", err)
		}
	}
}

// Appends racing at one offset, and racing the session's removal, leave
// its reservation and its user's open uploads as they were: the losers
// keep nothing and count nothing.
func testUsageAppendsRaceWithoutLeaks(t *testing.T, f *fixture) {
	const (
		quota   = 1000
		writers = 6
	)
	f.s.SetPersonalQuota(quota)
	s := f.sessionFor("appended", 400)
	s.OpenLimit = 1
	us, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	won, failures := f.raceAppends(us.ID, 0, 200, writers)
	if won != 1 || len(failures) > 0 {
		t.Fatalf("%d of %d appends at one offset taken, unexpected errors %v; want 1", won, writers, failures)
	}
	f.wantUsage(t, storage.Usage{Reserved: 400})
	f.wantOffset(t, us.ID, 200)
	_, err = f.s.CreateSession(f.ctx, s)
	wantErr(t, "a second upload under a cap of 1", err, storage.ErrTooManyUploads)

	removed := make(chan error, 1)
	go func() { removed <- f.s.RemoveSession(f.ctx, us.ID) }()
	_, failures = f.raceAppends(us.ID, 200, 200, writers)
	if err := <-removed; err != nil {
		t.Fatalf("RemoveSession racing appends: %v", err)
	}
	for _, err := range failures {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("an append racing the removal: %v", err)
		}
	}
	f.wantUsage(t, storage.Usage{})
	next, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession after the removal, under a cap of 1: %v", err)
	}
	f.wantUsage(t, storage.Usage{Reserved: 400})
	f.appendPart(t, next.ID, 0, strings.Repeat("n", 400))
	if _, _, err := f.s.CompleteSession(f.ctx, next.ID, nil, time.Time{}); err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 400})
}

// raceAppends sends writers appends of size bytes at offset to session
// id at once and returns how many were taken and the errors other than
// ErrConflict (another append was taken first).
func (f *fixture) raceAppends(id string, offset int64, size, writers int) (won int, failures []error) {
	taken, failures := race(writers, storage.ErrConflict, func(i int) error {
		part := strings.Repeat(fmt.Sprint(i), size)
		_, err := f.s.AppendSession(f.ctx, id, offset, strings.NewReader(part), nil)
		return err
	})
	return len(taken), failures
}

// startFullChunkedUpload starts chunked upload id in the fixture's space,
// announcing length bytes, stores them in two parts and claims it.
func (f *fixture) startFullChunkedUpload(t *testing.T, id string, length int) []storage.Chunk {
	t.Helper()
	u := storage.ChunkedUpload{ID: id, User: user.ID, SpaceID: f.space.ID, Length: int64(length), Expires: time.Now().Add(chunkTTL)}
	if _, err := f.s.CreateChunkedUpload(f.ctx, u); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	f.putChunk(t, id, "1", strings.Repeat("1", length/2))
	f.putChunk(t, id, "2", strings.Repeat("2", length-length/2))
	parts, err := f.s.ClaimChunkedUpload(f.ctx, id)
	if err != nil {
		t.Fatalf("ClaimChunkedUpload: %v", err)
	}
	return parts
}

// assemble copies the parts of upload id into an upload in space spaceID
// and commits it as c says, as the protocol layer assembles a file.
func (f *fixture) assemble(spaceID, id string, parts []storage.Chunk, c storage.Commit) (storage.Node, error) {
	up, err := f.s.NewUpload(f.ctx, spaceID)
	if err != nil {
		return storage.Node{}, err
	}
	defer up.Discard()
	for _, p := range parts {
		rc, err := f.s.OpenChunk(f.ctx, id, p.Name)
		if err != nil {
			return storage.Node{}, err
		}
		_, err = io.Copy(up, rc)
		rc.Close()
		if err != nil {
			return storage.Node{}, err
		}
	}
	n, _, err := up.Commit(f.ctx, c)
	return n, err
}

// wantNoChunkedUpload checks that upload id has ended.
func (f *fixture) wantNoChunkedUpload(t *testing.T, id string) {
	t.Helper()
	_, err := f.s.ChunkedUpload(f.ctx, id)
	wantErr(t, "ChunkedUpload after it ended", err, storage.ErrNotFound)
}

// A claimed chunked upload keeps its reservation while it is assembled:
// no upload started meanwhile takes its room, and the commit that names
// it (Commit.Assembles) turns the reservation into the file's use and
// ends it, even where it fills the quota exactly.
func testUsageAssemblyKeepsItsRoom(t *testing.T, f *fixture) {
	const quota = 1000
	f.s.SetPersonalQuota(quota)
	const id = "einstein/ng/full"
	parts := f.startFullChunkedUpload(t, id, quota)
	f.wantUsage(t, storage.Usage{Reserved: quota})
	_, _, err := f.commit(f.space.ID, "x", storage.Commit{ParentID: f.root(), Name: "late"})
	wantErr(t, "a PUT while an upload filling the quota is assembled", err, storage.ErrInsufficientStorage)
	stop := make(chan struct{})
	wait := f.racingCreations(stop)
	n, err := f.assemble(f.space.ID, id, parts, storage.Commit{ParentID: f.root(), Name: "full", Assembles: id})
	close(stop)
	started, failures := wait()
	if err != nil || len(started) > 0 || len(failures) > 0 {
		t.Fatalf("assembling an upload filling the quota: %v; %d sessions started meanwhile, unexpected errors %v",
			err, len(started), failures)
	}
	f.wantUsage(t, storage.Usage{Files: quota})
	if got, want := f.read(t, n.ID), strings.Repeat("1", quota/2)+strings.Repeat("2", quota/2); got != want {
		t.Fatalf("the assembled file holds %d bytes other than its parts", len(got))
	}
	f.wantNoChunkedUpload(t, id)
	wantErr(t, "RemoveChunkedUpload after its commit", f.s.RemoveChunkedUpload(f.ctx, id), storage.ErrNotFound)
	// Open uploads count it out: a cap of one admits the next.
	next := f.sessionFor("next", 0)
	next.OpenLimit = 1
	if _, err := f.s.CreateSession(f.ctx, next); err != nil {
		t.Fatalf("CreateSession under a cap of 1 after the assembly: %v", err)
	}
}

// An assembly whose commit fails leaves the upload claimed and its room
// reserved, until it is removed; a commit naming an upload that is not
// claimed leaves that upload alone.
func testUsageFailedAssemblyKeepsItsRoom(t *testing.T, f *fixture) {
	const quota = 1000
	f.s.SetPersonalQuota(quota)
	const id = "einstein/ng/refused"
	parts := f.startFullChunkedUpload(t, id, 600)
	_, err := f.assemble(f.space.ID, id, parts, storage.Commit{ParentID: f.root(), Name: "refused",
		Conditions: storage.Conditions{IfMatch: "no-such-etag"}})
	wantErr(t, "an assembly whose condition fails", err, storage.ErrPrecondition)
	f.wantUsage(t, storage.Usage{Reserved: 600})
	if u, err := f.s.ChunkedUpload(f.ctx, id); err != nil || !u.Claimed {
		t.Fatalf("ChunkedUpload after a failed assembly = %+v, %v; want it claimed", u, err)
	}
	_, err = f.s.CreateSession(f.ctx, f.sessionFor("late", 401))
	wantErr(t, "a session into the room of a failed assembly", err, storage.ErrInsufficientStorage)

	const open = "einstein/ng/open"
	u := storage.ChunkedUpload{ID: open, User: user.ID, SpaceID: f.space.ID, Length: 300, Expires: time.Now().Add(chunkTTL)}
	if _, err := f.s.CreateChunkedUpload(f.ctx, u); err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	if _, _, err := f.commit(f.space.ID, "abc", storage.Commit{ParentID: f.root(), Name: "small", Assembles: open}); err != nil {
		t.Fatalf("a commit naming an unclaimed upload: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 3, Reserved: 900})
	if _, err := f.s.ChunkedUpload(f.ctx, open); err != nil {
		t.Fatalf("an unclaimed upload a commit named: %v", err)
	}

	if err := f.s.RemoveChunkedUpload(f.ctx, id); err != nil {
		t.Fatalf("RemoveChunkedUpload after a failed assembly: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: 3, Reserved: 300})
}

// An upload assembled into another space than the one it reserved in is
// checked there in full, and its commit gives its reservation back.
func testUsageAssemblyIntoAnotherSpace(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000)
	project, err := f.s.PutSpace(f.ctx, storage.Space{ID: "storetest-assembly", Name: "Assembly", Quota: 300})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	const id = "einstein/ng/elsewhere"
	parts := f.startFullChunkedUpload(t, id, 400)
	into := storage.Commit{ParentID: project.ID, Name: "moved", Assembles: id}
	_, err = f.assemble(project.ID, id, parts, into)
	wantErr(t, "an assembly past the other space's quota", err, storage.ErrInsufficientStorage)
	f.wantUsage(t, storage.Usage{Reserved: 400})

	project.Quota = 400
	if _, err := f.s.PutSpace(f.ctx, project); err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	if _, err := f.assemble(project.ID, id, parts, into); err != nil {
		t.Fatalf("an assembly into another space: %v", err)
	}
	f.wantUsage(t, storage.Usage{})
	if u, err := f.s.Usage(f.ctx, project.ID); err != nil || u != (storage.Usage{Files: 400, Nodes: 1}) {
		t.Fatalf("usage of the other space = %+v, %v; want 400 bytes of files", u, err)
	}
	f.wantNoChunkedUpload(t, id)
}
