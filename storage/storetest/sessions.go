package storetest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// sessionTests are the conformance tests of storage.UploadSessions.
var sessionTests = []conformanceTest{
	{"SessionCreateAppendComplete", testSessionCreateAppendComplete},
	{"SessionCreateRules", testSessionCreateRules},
	{"SessionOffsets", testSessionOffsets},
	{"SessionPartChecksum", testSessionPartChecksum},
	{"SessionExpected", testSessionExpected},
	{"SessionExpiry", testSessionExpiry},
	{"SessionRemove", testSessionRemove},
	{"SessionEmpty", testSessionEmpty},
	{"SessionCommitTargets", testSessionCommitTargets},
	{"SessionReadFailure", testSessionReadFailure},
	{"SessionConcurrentAppends", testSessionConcurrentAppends},
	{"SessionQuotaAtCommit", testSessionQuotaAtCommit},
	{"SessionModTimeAtCommit", testSessionModTimeAtCommit},
}

// sessionTTL is the lifetime of the sessions the tests start.
const sessionTTL = time.Hour

// newSession starts a session of length bytes committing as name in the
// root of the fixture's space.
func (f *fixture) newSession(t *testing.T, name string, length int64) storage.UploadSession {
	t.Helper()
	us, err := f.s.CreateSession(f.ctx, f.sessionFor(name, length))
	if err != nil {
		t.Fatalf("CreateSession %q: %v", name, err)
	}
	return us
}

func (f *fixture) sessionFor(name string, length int64) storage.UploadSession {
	return storage.UploadSession{
		SpaceID: f.space.ID,
		User:    user.ID,
		Length:  length,
		Target:  storage.Commit{ParentID: f.root(), Name: name},
		Expires: time.Now().Add(sessionTTL),
	}
}

// appendPart appends part at offset and fails the test unless it is taken.
func (f *fixture) appendPart(t *testing.T, id string, offset int64, part string) storage.UploadSession {
	t.Helper()
	us, err := f.s.AppendSession(f.ctx, id, offset, strings.NewReader(part), nil)
	if err != nil {
		t.Fatalf("AppendSession %q at %d: %v", part, offset, err)
	}
	if want := offset + int64(len(part)); us.Offset != want {
		t.Fatalf("offset after appending %q at %d = %d, want %d", part, offset, us.Offset, want)
	}
	return us
}

// wantOffset checks the offset the store reports for session id.
func (f *fixture) wantOffset(t *testing.T, id string, want int64) {
	t.Helper()
	us, err := f.s.Session(f.ctx, id)
	if err != nil {
		t.Fatalf("Session %s: %v", id, err)
	}
	if us.Offset != want {
		t.Fatalf("session offset = %d, want %d", us.Offset, want)
	}
}

// wantNoFile checks that name does not exist in the root.
func (f *fixture) wantNoFile(t *testing.T, name string) {
	t.Helper()
	if _, err := f.s.Child(f.ctx, f.space.ID, f.root(), name); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Child %q: err %v, want ErrNotFound", name, err)
	}
}

func sums(content string) checksum.Sums {
	w := checksum.NewWriter()
	io.WriteString(w, content)
	return w.Sums()
}

// sessionSums returns the digests of file n, which CompleteSession
// committed, once all are known: a store may compute those its session did
// not carry (storage.SessionDigests) after the commit. Those the commit
// answered must agree with them.
func (f *fixture) sessionSums(t *testing.T, n storage.Node) checksum.Sums {
	t.Helper()
	got := f.awaitDigests(t, n).Checksums
	if !agrees(n.Checksums, got) {
		t.Fatalf("the commit answered the digests %v, then %v", n.Checksums, got)
	}
	return got
}

func expected(alg checksum.Algorithm, content string) *checksum.Expected {
	digest, _ := sums(content).Get(alg)
	return &checksum.Expected{Algorithm: alg, Digest: digest}
}

func testSessionCreateAppendComplete(t *testing.T, f *fixture) {
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	want := f.sessionFor("f.txt", 11)
	want.Target.ModTime = mtime
	want.Target.ContentType = "text/plain"
	want.Expected = expected(checksum.SHA1, "hello world")
	us, err := f.s.CreateSession(f.ctx, want)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if us.ID == "" || us.Offset != 0 || us.Created.IsZero() {
		t.Fatalf("created session = %+v", us)
	}
	got, err := f.s.Session(f.ctx, us.ID)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if got.SpaceID != want.SpaceID || got.User != want.User || got.Length != 11 ||
		got.Target.Name != "f.txt" || !got.Target.ModTime.Equal(mtime) || got.Target.ContentType != "text/plain" ||
		got.Expected == nil || *got.Expected != *want.Expected || !got.Expires.Equal(want.Expires) {
		t.Fatalf("Session = %+v, want %+v", got, want)
	}
	f.appendPart(t, us.ID, 0, "hello")
	f.wantNoFile(t, "f.txt")
	f.appendPart(t, us.ID, 5, " world")
	f.wantNoFile(t, "f.txt")
	n, created, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil || !created {
		t.Fatalf("CompleteSession = %v, %v", created, err)
	}
	if n.Name != "f.txt" || n.Size != 11 || !n.ModTime.Equal(mtime) || n.ContentType != "text/plain" ||
		f.sessionSums(t, n) != sums("hello world") {
		t.Fatalf("committed node = %+v", n)
	}
	if got := f.read(t, n.ID); got != "hello world" {
		t.Fatalf("content = %q", got)
	}
	if got := f.node(t, f.root()).Size; got != 11 {
		t.Fatalf("space root size = %d, want 11", got)
	}
	if _, err := f.s.Session(f.ctx, us.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after completion: err %v, want ErrNotFound", err)
	}
	if _, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("CompleteSession twice: err %v, want ErrNotFound", err)
	}
}

func testSessionCreateRules(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(us *storage.UploadSession)
		want error
	}{
		{"unknown space", func(us *storage.UploadSession) { us.SpaceID = "no-such-space" }, storage.ErrNotFound},
		{"negative length", func(us *storage.UploadSession) { us.Length = -1 }, storage.ErrInvalid},
		{"bad name", func(us *storage.UploadSession) { us.Target.Name = "a/b" }, storage.ErrInvalid},
		{"empty name", func(us *storage.UploadSession) { us.Target.Name = "" }, storage.ErrInvalid},
		{"unsupported checksum", func(us *storage.UploadSession) {
			us.Expected = &checksum.Expected{Algorithm: "CRC32", Digest: "00"}
		}, storage.ErrInvalid},
		{"store sets id and offset", func(us *storage.UploadSession) { us.ID, us.Offset = "mine", 3 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			us := f.sessionFor("f", 5)
			tt.edit(&us)
			got, err := f.s.CreateSession(f.ctx, us)
			wantErr(t, "CreateSession", err, tt.want)
			if err == nil && (got.ID == "mine" || got.Offset != 0) {
				t.Fatalf("created session = %+v", got)
			}
		})
	}
	a, b := f.newSession(t, "a", 1), f.newSession(t, "b", 1)
	if a.ID == b.ID || len(a.ID) < 32 {
		t.Fatalf("session ids %q and %q: want distinct and unguessable", a.ID, b.ID)
	}
}

func testSessionOffsets(t *testing.T, f *fixture) {
	us := f.newSession(t, "f", 6)
	f.appendPart(t, us.ID, 0, "abc")
	tests := []struct {
		name   string
		offset int64
		part   string
		want   error
	}{
		{"behind", 0, "abc", storage.ErrConflict},
		{"ahead", 4, "e", storage.ErrConflict},
		{"past length", 3, "defg", storage.ErrInvalid},
		{"unknown session", 3, "d", storage.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := us.ID
			if tt.want == storage.ErrNotFound {
				id = "no-such-session"
			}
			_, err := f.s.AppendSession(f.ctx, id, tt.offset, strings.NewReader(tt.part), nil)
			wantErr(t, "AppendSession", err, tt.want)
			f.wantOffset(t, us.ID, 3)
		})
	}
	if _, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{}); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("CompleteSession of a partial upload: err %v, want ErrConflict", err)
	}
	f.wantNoFile(t, "f")
	f.appendPart(t, us.ID, 3, "def")
	n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	if got := f.read(t, n.ID); got != "abcdef" {
		t.Fatalf("content = %q: a refused part left bytes behind", got)
	}
}

func testSessionPartChecksum(t *testing.T, f *fixture) {
	us := f.newSession(t, "f", 8)
	for _, alg := range []checksum.Algorithm{checksum.SHA1, checksum.MD5, checksum.Adler32} {
		_, err := f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader("bad!"), expected(alg, "good"))
		wantErr(t, "AppendSession with a mismatching "+string(alg), err, storage.ErrChecksum)
		f.wantOffset(t, us.ID, 0)
	}
	got, err := f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader("good"), expected(checksum.MD5, "good"))
	if err != nil || got.Offset != 4 {
		t.Fatalf("AppendSession with a matching checksum = %d, %v", got.Offset, err)
	}
	_, err = f.s.AppendSession(f.ctx, us.ID, 4, strings.NewReader("XXXX"), expected(checksum.Adler32, "more"))
	wantErr(t, "second part mismatching", err, storage.ErrChecksum)
	f.wantOffset(t, us.ID, 4)
	f.appendPart(t, us.ID, 4, "more")
	n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	// The whole-file sums must not have seen the discarded parts.
	if f.sessionSums(t, n) != sums("goodmore") || f.read(t, n.ID) != "goodmore" {
		t.Fatalf("committed %q with %v", f.read(t, n.ID), n.Checksums)
	}
}

func testSessionExpected(t *testing.T, f *fixture) {
	for _, alg := range []checksum.Algorithm{checksum.SHA1, checksum.MD5, checksum.Adler32} {
		t.Run(string(alg), func(t *testing.T) {
			s := f.sessionFor("f-"+string(alg), 5)
			s.Expected = expected(alg, "right")
			us, err := f.s.CreateSession(f.ctx, s)
			if err != nil {
				t.Fatalf("CreateSession: %v", err)
			}
			f.appendPart(t, us.ID, 0, "wrong")
			_, _, err = f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
			wantErr(t, "CompleteSession", err, storage.ErrChecksum)
			f.wantNoFile(t, "f-"+string(alg))
			if _, err := f.s.Session(f.ctx, us.ID); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("Session after a mismatch: err %v, want ErrNotFound", err)
			}
		})
	}
	if got := f.node(t, f.root()).Size; got != 0 {
		t.Fatalf("space root size = %d, want 0", got)
	}
}

func testSessionExpiry(t *testing.T, f *fixture) {
	us := f.newSession(t, "f", 4)
	f.appendPart(t, us.ID, 0, "ab")
	f.after(sessionTTL + time.Minute)
	if _, err := f.s.Session(f.ctx, us.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after expiry: err %v, want ErrNotFound", err)
	}
	_, err := f.s.AppendSession(f.ctx, us.ID, 2, strings.NewReader("cd"), nil)
	wantErr(t, "AppendSession after expiry", err, storage.ErrNotFound)
	_, _, err = f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	wantErr(t, "CompleteSession after expiry", err, storage.ErrNotFound)
	wantErr(t, "RemoveSession after expiry", f.s.RemoveSession(f.ctx, us.ID), storage.ErrNotFound)
	f.wantNoFile(t, "f")
}

func testSessionRemove(t *testing.T, f *fixture) {
	us := f.newSession(t, "f", 4)
	f.appendPart(t, us.ID, 0, "ab")
	if err := f.s.RemoveSession(f.ctx, us.ID); err != nil {
		t.Fatalf("RemoveSession: %v", err)
	}
	wantErr(t, "RemoveSession twice", f.s.RemoveSession(f.ctx, us.ID), storage.ErrNotFound)
	_, err := f.s.AppendSession(f.ctx, us.ID, 2, strings.NewReader("cd"), nil)
	wantErr(t, "AppendSession after removal", err, storage.ErrNotFound)
	f.wantNoFile(t, "f")
}

func testSessionEmpty(t *testing.T, f *fixture) {
	s := f.sessionFor("empty", 0)
	s.Expected = expected(checksum.SHA1, "")
	us, err := f.s.CreateSession(f.ctx, s)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	got, err := f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader(""), nil)
	if err != nil || got.Offset != 0 {
		t.Fatalf("empty AppendSession = %d, %v", got.Offset, err)
	}
	_, err = f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader("x"), nil)
	wantErr(t, "AppendSession to a full session", err, storage.ErrInvalid)
	n, created, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil || !created || n.Size != 0 || f.sessionSums(t, n) != sums("") {
		t.Fatalf("CompleteSession = %+v, %v, %v", n, created, err)
	}
	if got := f.read(t, n.ID); got != "" {
		t.Fatalf("content = %q", got)
	}
}

// A session commits exactly as an upload does: by node id wherever the
// file is, with its conditions, in its own space only.
func testSessionCommitTargets(t *testing.T, f *fixture) {
	other, foreign := f.foreignFile(t, "storetest-sessions-other")
	existing := f.put(t, f.root(), "existing", "old")
	dir := f.mkdir(t, f.root(), "dir")
	tests := []struct {
		name    string
		target  storage.Commit
		want    error
		created bool
	}{
		{"new name", storage.Commit{ParentID: f.root(), Name: "new"}, nil, true},
		{"replace by name", storage.Commit{ParentID: f.root(), Name: "existing"}, nil, false},
		{"replace by id", storage.Commit{NodeID: existing.ID}, nil, false},
		{"if-none-match on existing", storage.Commit{ParentID: f.root(), Name: "existing", Conditions: storage.Conditions{IfNoneMatch: true}}, storage.ErrPrecondition, false},
		{"if-match stale", storage.Commit{NodeID: existing.ID, Conditions: storage.Conditions{IfMatch: existing.ETag}}, storage.ErrPrecondition, false},
		{"folder", storage.Commit{ParentID: f.root(), Name: "dir"}, storage.ErrConflict, false},
		{"missing parent", storage.Commit{ParentID: "no-such-folder", Name: "x"}, storage.ErrConflict, false},
		{"node of another space", storage.Commit{NodeID: foreign.ID}, storage.ErrNotFound, false},
		{"parent in another space", storage.Commit{ParentID: other.ID, Name: "x"}, storage.ErrConflict, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := f.sessionFor("unused", 3)
			s.Target = tt.target
			us, err := f.s.CreateSession(f.ctx, s)
			if err != nil {
				t.Fatalf("CreateSession: %v", err)
			}
			f.appendPart(t, us.ID, 0, "new")
			n, created, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
			wantErr(t, "CompleteSession", err, tt.want)
			if _, serr := f.s.Session(f.ctx, us.ID); !errors.Is(serr, storage.ErrNotFound) {
				t.Fatalf("Session after CompleteSession: err %v, want ErrNotFound", serr)
			}
			if err != nil {
				return
			}
			if created != tt.created || f.read(t, n.ID) != "new" {
				t.Fatalf("CompleteSession = %+v, created %v", n, created)
			}
		})
	}
	if got, err := f.s.Node(f.ctx, other.ID, foreign.ID); err != nil || got.ETag != foreign.ETag {
		t.Fatalf("other space's file = %+v, %v; want it unchanged", got, err)
	}
	if names := f.names(t, dir.ID); len(names) != 0 {
		t.Fatalf("folder target got children %v", names)
	}
}

// A part whose reader fails keeps the bytes read unless it had a checksum,
// which cannot be checked then.
func testSessionReadFailure(t *testing.T, f *fixture) {
	broken := errors.New("connection reset")
	us := f.newSession(t, "f", 6)
	got, err := f.s.AppendSession(f.ctx, us.ID, 0, io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(broken)), expected(checksum.SHA1, "ab"))
	if !errors.Is(err, broken) {
		t.Fatalf("AppendSession with a check and a failing reader: err %v, want %v", err, broken)
	}
	f.wantOffset(t, us.ID, 0)
	got, err = f.s.AppendSession(f.ctx, us.ID, 0, io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(broken)), nil)
	if !errors.Is(err, broken) || got.Offset != 3 || got.ID != us.ID {
		t.Fatalf("AppendSession with a failing reader = %+v, %v; want offset 3 and %v", got, err, broken)
	}
	f.wantOffset(t, us.ID, 3)
	f.appendPart(t, us.ID, 3, "def")
	n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil || f.read(t, n.ID) != "abcdef" || f.sessionSums(t, n) != sums("abcdef") {
		t.Fatalf("CompleteSession = %+v, %v", n, err)
	}
}

// Concurrent appends at one offset: exactly one is taken, the others find
// the offset moved, and the bytes never interleave.
func testSessionConcurrentAppends(t *testing.T, f *fixture) {
	const writers = 8
	const partSize = 64 << 10
	us := f.newSession(t, "f", partSize)
	won, failures := race(writers, storage.ErrConflict, func(i int) error {
		part := strings.Repeat(fmt.Sprint(i), partSize)
		_, err := f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader(part), nil)
		return err
	})
	if len(failures) > 0 || len(won) != 1 {
		t.Fatalf("winners %v, unexpected errors %v", won, failures)
	}
	n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	if got, want := f.read(t, n.ID), strings.Repeat(fmt.Sprint(won[0]), partSize); got != want {
		t.Fatalf("content is not the winner's part alone")
	}
}

// A session reserves its length from its creation; its commit counts its
// bytes once (not its reservation besides), and a commit over the quota
// (lowered meanwhile) ends the session.
func testSessionQuotaAtCommit(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(10)
	big := f.newSession(t, "big", 8)
	f.appendPart(t, big.ID, 0, "12345678")
	f.s.SetPersonalQuota(7)
	_, _, err := f.s.CompleteSession(f.ctx, big.ID, nil, time.Time{})
	wantErr(t, "CompleteSession over the quota", err, storage.ErrInsufficientStorage)
	f.wantNoFile(t, "big")
	if _, err := f.s.Session(f.ctx, big.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after a commit over the quota: err %v, want ErrNotFound", err)
	}
	f.s.SetPersonalQuota(10)
	fits := f.newSession(t, "fits", 10)
	f.appendPart(t, fits.ID, 0, "abcdefghij")
	if _, _, err := f.s.CompleteSession(f.ctx, fits.ID, nil, time.Time{}); err != nil {
		t.Fatalf("CompleteSession of the whole quota: %v", err)
	}
	if got := f.node(t, f.root()).Size; got != 10 {
		t.Fatalf("space root size = %d, want 10", got)
	}
}

// testSessionModTimeAtCommit: a modification time given at completion
// replaces the one the session started with; none keeps it.
func testSessionModTimeAtCommit(t *testing.T, f *fixture) {
	started := time.Unix(1500000000, 0).UTC()
	completed := time.Unix(1700000000, 0).UTC()
	for name, want := range map[string]time.Time{"kept": started, "replaced": completed} {
		s := f.sessionFor(name, 2)
		s.Target.ModTime = started
		us, err := f.s.CreateSession(f.ctx, s)
		if err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		f.appendPart(t, us.ID, 0, "ab")
		var at time.Time
		if name == "replaced" {
			at = completed
		}
		n, _, err := f.s.CompleteSession(f.ctx, us.ID, nil, at)
		if err != nil || !n.ModTime.Equal(want) {
			t.Fatalf("%s: CompleteSession = %v (mtime %v), want mtime %v", name, err, n.ModTime, want)
		}
	}
}
