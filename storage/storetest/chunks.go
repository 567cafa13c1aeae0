package storetest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// chunkTests are the conformance tests of storage.ChunkedUploads.
var chunkTests = []conformanceTest{
	{"ChunkedUploadCreateRules", testChunkedUploadCreateRules},
	{"ChunkPutListOpen", testChunkPutListOpen},
	{"ChunkNames", testChunkNames},
	{"ChunkReplace", testChunkReplace},
	{"ChunkReadersDuringReplacements", testChunkReadersDuringReplacements},
	{"ChunkReadFailure", testChunkReadFailure},
	{"ChunkRemove", testChunkRemove},
	{"ChunkRemoveRacingPut", testChunkRemoveRacingPut},
	{"ChunkedUploadNotFound", testChunkedUploadNotFound},
	{"ChunkedUploadsAreApart", testChunkedUploadsAreApart},
	{"ChunkClaim", testChunkClaim},
	{"ChunkConcurrentClaims", testChunkConcurrentClaims},
	{"ChunkPutsRacingClaim", testChunkPutsRacingClaim},
	{"ChunkRemovesRacingClaim", testChunkRemovesRacingClaim},
	{"ChunkParallelPuts", testChunkParallelPuts},
	{"ChunkedUploadExpiry", testChunkedUploadExpiry},
	{"ChunkedUploadRemove", testChunkedUploadRemove},
	{"ChunkLimit", testChunkLimit},
}

// chunkTTL is the lifetime of the chunked uploads the tests start.
const chunkTTL = time.Hour

// newChunkedUpload starts the chunked upload id of the fixture's user.
func (f *fixture) newChunkedUpload(t *testing.T, id string) storage.ChunkedUpload {
	t.Helper()
	u, err := f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: id, User: user.ID, Expires: time.Now().Add(chunkTTL)})
	if err != nil {
		t.Fatalf("CreateChunkedUpload %q: %v", id, err)
	}
	return u
}

// putChunk stores content as part name of upload id and fails the test
// unless it is taken.
func (f *fixture) putChunk(t *testing.T, id, name, content string) {
	t.Helper()
	c, err := f.s.PutChunk(f.ctx, id, name, strings.NewReader(content))
	if err != nil {
		t.Fatalf("PutChunk %q: %v", name, err)
	}
	if c.Name != name || c.Size != int64(len(content)) {
		t.Fatalf("PutChunk %q = %+v, want size %d", name, c, len(content))
	}
}

// readChunk returns the content of part name of upload id.
func (f *fixture) readChunk(t *testing.T, id, name string) string {
	t.Helper()
	content, err := f.chunkContent(id, name)
	if err != nil {
		t.Fatalf("part %q: %v", name, err)
	}
	return content
}

// chunkContent opens part name of upload id and reads it to its end.
func (f *fixture) chunkContent(id, name string) (string, error) {
	rc, err := f.s.OpenChunk(f.ctx, id, name)
	if err != nil {
		return "", fmt.Errorf("OpenChunk: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return "", fmt.Errorf("read part: %w", err)
	}
	return string(b), nil
}

// wantChunks checks the parts of upload id, with their content: want maps
// each part's name to its content.
func (f *fixture) wantChunks(t *testing.T, id string, want map[string]string) {
	t.Helper()
	got, err := f.s.Chunks(f.ctx, id)
	if err != nil {
		t.Fatalf("Chunks: %v", err)
	}
	wantChunkList(t, "Chunks", got, want)
	for name, content := range want {
		if got := f.readChunk(t, id, name); got != content {
			t.Fatalf("part %q = %.32q, want %.32q", name, got, content)
		}
	}
}

// wantChunkList checks a list of parts against the contents in want: the
// same names, sorted in byte order, with the sizes of the contents.
func wantChunkList(t *testing.T, what string, got []storage.Chunk, want map[string]string) {
	t.Helper()
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	wantList := make([]storage.Chunk, 0, len(names))
	for _, name := range names {
		wantList = append(wantList, storage.Chunk{Name: name, Size: int64(len(want[name]))})
	}
	if !slices.Equal(got, wantList) {
		t.Fatalf("%s = %v, want %v", what, got, wantList)
	}
}

func testChunkedUploadCreateRules(t *testing.T, f *fixture) {
	expires := time.Now().Add(chunkTTL).Round(0)
	tests := []struct {
		name string
		u    storage.ChunkedUpload
		want error
	}{
		{"empty id", storage.ChunkedUpload{User: user.ID}, storage.ErrInvalid},
		{"empty user", storage.ChunkedUpload{ID: "no-user"}, storage.ErrInvalid},
		{"id too long", storage.ChunkedUpload{ID: strings.Repeat("i", storage.MaxChunkedUploadIDBytes+1), User: user.ID}, storage.ErrInvalid},
		{"id of the longest", storage.ChunkedUpload{ID: strings.Repeat("i", storage.MaxChunkedUploadIDBytes), User: user.ID}, nil},
		{"id with slashes and dots", storage.ChunkedUpload{ID: "einstein/ng/../../x", User: user.ID, Expires: expires}, nil},
		{"store sets created and claimed", storage.ChunkedUpload{ID: "mine", User: user.ID, Claimed: true, Created: time.Unix(1, 0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.s.CreateChunkedUpload(f.ctx, tt.u)
			wantErr(t, "CreateChunkedUpload", err, tt.want)
			if err != nil {
				if _, err := f.s.ChunkedUpload(f.ctx, tt.u.ID); !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("ChunkedUpload after a refused create: err %v, want ErrNotFound", err)
				}
				return
			}
			if got.ID != tt.u.ID || got.User != user.ID || got.Claimed || got.Created.IsZero() ||
				got.Created.Equal(time.Unix(1, 0)) || !got.Expires.Equal(tt.u.Expires) {
				t.Fatalf("created upload = %+v", got)
			}
			stored, err := f.s.ChunkedUpload(f.ctx, tt.u.ID)
			if err != nil {
				t.Fatalf("ChunkedUpload: %v", err)
			}
			if stored.ID != got.ID || stored.User != got.User || stored.Claimed ||
				!stored.Created.Equal(got.Created) || !stored.Expires.Equal(got.Expires) {
				t.Fatalf("ChunkedUpload = %+v, want %+v", stored, got)
			}
			_, err = f.s.CreateChunkedUpload(f.ctx, tt.u)
			wantErr(t, "CreateChunkedUpload twice", err, storage.ErrExists)
		})
	}
}

func testChunkPutListOpen(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/put")
	if parts, err := f.s.Chunks(f.ctx, u.ID); err != nil || len(parts) != 0 {
		t.Fatalf("Chunks of a new upload = %v, %v", parts, err)
	}
	// Put out of order: the list is in byte order, whatever the names mean.
	want := map[string]string{
		"10":                     "ten",
		"2":                      "two",
		"00001":                  "one",
		"0-4":                    "rclone range",
		"ümlaut and spaces":      "unicode",
		"empty":                  "",
		"..":                     "dots",
		strings.Repeat("n", 255): strings.Repeat("long name ", 1000),
		"big":                    strings.Repeat("0123456789abcdef", 64<<10), // 1 MiB
	}
	for _, name := range []string{"10", "2", "big", "00001", "ümlaut and spaces", "0-4", "empty", "..", strings.Repeat("n", 255)} {
		f.putChunk(t, u.ID, name, want[name])
	}
	f.wantChunks(t, u.ID, want)
	if _, err := f.s.OpenChunk(f.ctx, u.ID, "3"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("OpenChunk of a missing part: err %v, want ErrNotFound", err)
	}
	f.wantNoFile(t, "10") // parts are no nodes
	if got := f.node(t, f.root()).Size; got != 0 {
		t.Fatalf("space root size = %d: parts were accounted", got)
	}
}

func testChunkNames(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/names")
	tests := []struct {
		name string
		want error
	}{
		{"", storage.ErrInvalid},
		{"a/b", storage.ErrInvalid},
		{"/", storage.ErrInvalid},
		{"nul\x00", storage.ErrInvalid},
		{strings.Repeat("n", storage.MaxChunkNameBytes+1), storage.ErrInvalid},
		{strings.Repeat("é", storage.MaxChunkNameBytes/2+1), storage.ErrInvalid}, // counted in bytes
		{strings.Repeat("n", storage.MaxChunkNameBytes), nil},
		{".", nil},
		{"back\\slash", nil},
	}
	want := map[string]string{}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.16q", tt.name), func(t *testing.T) {
			_, err := f.s.PutChunk(f.ctx, u.ID, tt.name, strings.NewReader("content"))
			wantErr(t, "PutChunk", err, tt.want)
			if err == nil {
				want[tt.name] = "content"
			}
			f.wantChunks(t, u.ID, want)
		})
	}
}

// A replaced part switches at once: a reader of the old one reads it to
// its end, readers after the switch get the new one.
func testChunkReplace(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/replace")
	old := strings.Repeat("old ", 256<<10) // 1 MiB
	f.putChunk(t, u.ID, "1", old)
	f.putChunk(t, u.ID, "2", "untouched")
	f.wantReadAcross(t, u.ID, "1", old, "replacement", func() { f.putChunk(t, u.ID, "1", "new") })
	f.wantChunks(t, u.ID, map[string]string{"1": "new", "2": "untouched"})
	f.putChunk(t, u.ID, "1", "")
	f.wantChunks(t, u.ID, map[string]string{"1": "", "2": "untouched"})
}

// Readers of a part being replaced over and over each read one whole
// version of it.
func testChunkReadersDuringReplacements(t *testing.T, f *fixture) {
	const (
		replacements = 50
		readers      = 4
	)
	u := f.newChunkedUpload(t, "einstein/ng/replacements")
	versions := []string{strings.Repeat("a", 32<<10), strings.Repeat("b", 16<<10)}
	f.putChunk(t, u.ID, "1", versions[0])
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, readers+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range replacements {
			if _, err := f.s.PutChunk(f.ctx, u.ID, "1", strings.NewReader(versions[(i+1)%2])); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := readWholeVersion(f, u.ID, "1", versions); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readWholeVersion reads part name of upload id and says how it is not
// one of versions.
func readWholeVersion(f *fixture, id, name string, versions []string) error {
	content, err := f.chunkContent(id, name)
	if err != nil {
		return fmt.Errorf("during replacements: %w", err)
	}
	if !slices.Contains(versions, content) {
		return fmt.Errorf("read %d bytes that are no version of the part", len(content))
	}
	return nil
}

// testChunkReadFailure: a body that fails once its content is read leaves no part behind.
func testChunkReadFailure(t *testing.T, f *fixture) {
	broken := errors.New("connection reset")
	u := f.newChunkedUpload(t, "einstein/ng/failure")
	f.putChunk(t, u.ID, "1", "good")
	tests := []struct {
		name, part, content string
	}{
		{"replacing a part", "1", "half of a new part"},
		{"new part", "2", "half"},
		{"new part failing at once", "3", ""},
		{"large new part", "4", strings.Repeat("x", 1<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.s.PutChunk(f.ctx, u.ID, tt.part, io.MultiReader(strings.NewReader(tt.content), iotest.ErrReader(broken)))
			if !errors.Is(err, broken) {
				t.Fatalf("PutChunk with a failing reader: err %v, want %v", err, broken)
			}
			f.wantChunks(t, u.ID, map[string]string{"1": "good"})
		})
	}
}

// A removed part is gone from the list and cannot be opened, while a
// reader that opened it reads it to its end; its name can be put again.
func testChunkRemove(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/remove-part")
	stale := strings.Repeat("stale ", 128<<10) // 768 KiB
	f.putChunk(t, u.ID, "1", "first")
	f.putChunk(t, u.ID, "2", stale)
	f.putChunk(t, u.ID, "3", "third")
	f.wantReadAcross(t, u.ID, "2", stale, "removal", func() {
		if err := f.s.RemoveChunk(f.ctx, u.ID, "2"); err != nil {
			t.Fatalf("RemoveChunk: %v", err)
		}
	})
	f.wantChunks(t, u.ID, map[string]string{"1": "first", "3": "third"})
	_, err := f.s.OpenChunk(f.ctx, u.ID, "2")
	wantErr(t, "OpenChunk of a removed part", err, storage.ErrNotFound)
	for _, name := range []string{"2", "4", "", "a/b", "nul\x00", strings.Repeat("n", storage.MaxChunkNameBytes+1)} {
		wantErr(t, fmt.Sprintf("RemoveChunk %.16q", name), f.s.RemoveChunk(f.ctx, u.ID, name), storage.ErrNotFound)
	}
	f.putChunk(t, u.ID, "2", "again")
	f.wantChunks(t, u.ID, map[string]string{"1": "first", "2": "again", "3": "third"})
	for _, name := range []string{"1", "2", "3"} {
		if err := f.s.RemoveChunk(f.ctx, u.ID, name); err != nil {
			t.Fatalf("RemoveChunk %q: %v", name, err)
		}
	}
	f.wantChunks(t, u.ID, map[string]string{})
	if got, err := f.s.ChunkedUpload(f.ctx, u.ID); err != nil || got.Claimed {
		t.Fatalf("upload without parts = %+v, %v; want it open", got, err)
	}
}

// A removal racing a put of the same name ends in one of the two orders:
// the new part, or none. Of a new name, the removal finds the part only
// once it is in.
func testChunkRemoveRacingPut(t *testing.T, f *fixture) {
	const rounds = 20
	tests := []struct {
		name    string
		earlier bool // a part of that name was there before the race
	}{
		{"replaced part", true},
		{"new part", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := f.newChunkedUpload(t, "einstein/ng/remove-race/"+tt.name)
			for round := range rounds {
				name := fmt.Sprint(round)
				if tt.earlier {
					f.putChunk(t, u.ID, name, "earlier")
				}
				putErr, removeErr := raceRemoveWithPut(f, u.ID, name, strings.Repeat("new ", 8<<10))
				if putErr != nil {
					t.Fatalf("PutChunk racing a removal: %v", putErr)
				}
				if removeErr != nil && (tt.earlier || !errors.Is(removeErr, storage.ErrNotFound)) {
					t.Fatalf("RemoveChunk racing a put: %v", removeErr)
				}
				if err := wantRacedPart(f, u.ID, name, strings.Repeat("new ", 8<<10), removeErr != nil); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
		})
	}
}

// raceRemoveWithPut puts content as part name of upload id while removing
// that part, and returns both errors.
func raceRemoveWithPut(f *fixture, id, name, content string) (putErr, removeErr error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		_, putErr = f.s.PutChunk(f.ctx, id, name, strings.NewReader(content))
	}()
	go func() {
		defer wg.Done()
		<-start
		removeErr = f.s.RemoveChunk(f.ctx, id, name)
	}()
	close(start)
	wg.Wait()
	return putErr, removeErr
}

// wantRacedPart says how part name of upload id, after a put of content
// raced its removal, is not in one of the states the race may end in: the
// new part, when the removal came first, or none. A removal that found
// nothing came first.
func wantRacedPart(f *fixture, id, name, content string, removalFirst bool) error {
	parts, err := f.s.Chunks(f.ctx, id)
	if err != nil {
		return fmt.Errorf("Chunks: %w", err)
	}
	listed := slices.ContainsFunc(parts, func(c storage.Chunk) bool { return c.Name == name })
	got, err := f.chunkContent(id, name)
	if errors.Is(err, storage.ErrNotFound) {
		if listed || removalFirst {
			return fmt.Errorf("part %q listed %v, but cannot be opened", name, listed)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !listed || got != content {
		return fmt.Errorf("part %q listed %v, holds %d bytes that are not the new part", name, listed, len(got))
	}
	return nil
}

func testChunkedUploadNotFound(t *testing.T, f *fixture) {
	f.newChunkedUpload(t, "einstein/ng/known")
	for _, id := range []string{"einstein/ng/unknown", "einstein/ng/know", "einstein/ng/known/", "", strings.Repeat("i", storage.MaxChunkedUploadIDBytes+1)} {
		t.Run(fmt.Sprintf("%.32q", id), func(t *testing.T) {
			_, err := f.s.ChunkedUpload(f.ctx, id)
			wantErr(t, "ChunkedUpload", err, storage.ErrNotFound)
			_, err = f.s.PutChunk(f.ctx, id, "1", strings.NewReader("x"))
			wantErr(t, "PutChunk", err, storage.ErrNotFound)
			_, err = f.s.Chunks(f.ctx, id)
			wantErr(t, "Chunks", err, storage.ErrNotFound)
			_, err = f.s.ClaimChunkedUpload(f.ctx, id)
			wantErr(t, "ClaimChunkedUpload", err, storage.ErrNotFound)
			_, err = f.s.OpenChunk(f.ctx, id, "1")
			wantErr(t, "OpenChunk", err, storage.ErrNotFound)
			wantErr(t, "RemoveChunk", f.s.RemoveChunk(f.ctx, id, "1"), storage.ErrNotFound)
			wantErr(t, "RemoveChunkedUpload", f.s.RemoveChunkedUpload(f.ctx, id), storage.ErrNotFound)
		})
	}
}

// Uploads whose ids share a prefix, or would be one path as file names,
// never share parts.
func testChunkedUploadsAreApart(t *testing.T, f *fixture) {
	ids := []string{"a", "a/b", "a\x00b", "ab", "a/../a", "A"}
	for _, id := range ids {
		f.newChunkedUpload(t, id)
		f.putChunk(t, id, "1", "part of "+id)
	}
	for _, id := range ids {
		f.wantChunks(t, id, map[string]string{"1": "part of " + id})
	}
	if err := f.s.RemoveChunkedUpload(f.ctx, "a"); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	for _, id := range ids[1:] {
		f.wantChunks(t, id, map[string]string{"1": "part of " + id})
	}
}

func testChunkClaim(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/claim")
	want := map[string]string{"b": "second", "a": "first", "c": ""}
	for name, content := range want {
		f.putChunk(t, u.ID, name, content)
	}
	claimed, err := f.s.ClaimChunkedUpload(f.ctx, u.ID)
	if err != nil {
		t.Fatalf("ClaimChunkedUpload: %v", err)
	}
	wantChunkList(t, "ClaimChunkedUpload", claimed, want)
	if got, err := f.s.ChunkedUpload(f.ctx, u.ID); err != nil || !got.Claimed {
		t.Fatalf("ChunkedUpload after the claim = %+v, %v; want it claimed", got, err)
	}
	for _, name := range []string{"a", "d"} {
		_, err := f.s.PutChunk(f.ctx, u.ID, name, strings.NewReader("late"))
		wantErr(t, fmt.Sprintf("PutChunk %q after the claim", name), err, storage.ErrConflict)
	}
	for _, name := range []string{"a", "d"} {
		wantErr(t, fmt.Sprintf("RemoveChunk %q after the claim", name), f.s.RemoveChunk(f.ctx, u.ID, name), storage.ErrConflict)
	}
	_, err = f.s.ClaimChunkedUpload(f.ctx, u.ID)
	wantErr(t, "ClaimChunkedUpload twice", err, storage.ErrConflict)
	// The claimer assembles the file from the parts it got.
	f.wantChunks(t, u.ID, want)
	if err := f.s.RemoveChunkedUpload(f.ctx, u.ID); err != nil {
		t.Fatalf("RemoveChunkedUpload of a claimed upload: %v", err)
	}
	_, err = f.s.ChunkedUpload(f.ctx, u.ID)
	wantErr(t, "ChunkedUpload after the removal", err, storage.ErrNotFound)
}

// Of concurrent claims exactly one succeeds, so a file is assembled once.
func testChunkConcurrentClaims(t *testing.T, f *fixture) {
	const claimers = 8
	u := f.newChunkedUpload(t, "einstein/ng/claims")
	f.putChunk(t, u.ID, "1", "part")
	errs := make(chan error, claimers)
	var wg sync.WaitGroup
	for range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.s.ClaimChunkedUpload(f.ctx, u.ID)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrConflict):
			t.Fatalf("ClaimChunkedUpload: unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent claims succeeded, want exactly 1", won, claimers)
	}
}

// Parts put while the upload is claimed are either in the claim's list
// (put before it) or refused: after a claim, no part changes.
func testChunkPutsRacingClaim(t *testing.T, f *fixture) {
	const writers = 16
	u := f.newChunkedUpload(t, "einstein/ng/race")
	f.putChunk(t, u.ID, "shared", "before the race")
	parts := map[string]string{}
	for i := range writers {
		parts[fmt.Sprintf("part-%02d", i)] = strings.Repeat(fmt.Sprint(i%10), 8<<10)
	}
	put := func(name, content string) error {
		_, err := f.s.PutChunk(f.ctx, u.ID, name, strings.NewReader(content))
		return err
	}
	claimed, kept := f.raceClaim(t, u.ID, parts, put, func(err error) bool { return err == nil })
	_, err := f.s.PutChunk(f.ctx, u.ID, "shared", strings.NewReader("after the race"))
	wantErr(t, "PutChunk after the race", err, storage.ErrConflict)
	kept["shared"] = "before the race"
	wantChunkList(t, "ClaimChunkedUpload", claimed, kept)
	f.wantChunks(t, u.ID, kept)
}

// Parts removed while the upload is claimed are either gone from the
// claim's list (removed before it) or refused and kept: a part being
// assembled never vanishes.
func testChunkRemovesRacingClaim(t *testing.T, f *fixture) {
	const parts = 16
	u := f.newChunkedUpload(t, "einstein/ng/remove-claim-race")
	all := map[string]string{}
	for i := range parts {
		name := fmt.Sprintf("part-%02d", i)
		all[name] = strings.Repeat(fmt.Sprint(i%10), 4<<10)
		f.putChunk(t, u.ID, name, all[name])
	}
	remove := func(name, _ string) error { return f.s.RemoveChunk(f.ctx, u.ID, name) }
	claimed, kept := f.raceClaim(t, u.ID, all, remove, func(err error) bool { return err != nil })
	wantChunkList(t, "ClaimChunkedUpload", claimed, kept)
	f.wantChunks(t, u.ID, kept)
}

// raceClaim runs op on each of parts (name → content) at once with a
// claim of upload id, and returns the claim's list and the parts left in
// the upload: those for whose op's error stays is true. op may fail with
// ErrConflict only.
func (f *fixture) raceClaim(t *testing.T, id string, parts map[string]string,
	op func(name, content string) error, stays func(error) bool) ([]storage.Chunk, map[string]string) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		kept    = map[string]string{}
		claimed []storage.Chunk
		errs    []error
	)
	start := make(chan struct{})
	for name, content := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := op(name, content)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && !errors.Is(err, storage.ErrConflict):
				errs = append(errs, err)
			case stays(err):
				kept[name] = content
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		c, err := f.s.ClaimChunkedUpload(f.ctx, id)
		mu.Lock()
		defer mu.Unlock()
		claimed = c
		if err != nil {
			errs = append(errs, err)
		}
	}()
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	return claimed, kept
}

func testChunkParallelPuts(t *testing.T, f *fixture) {
	const (
		parts    = 16
		partSize = 64 << 10
	)
	u := f.newChunkedUpload(t, "einstein/ng/parallel")
	want := map[string]string{}
	for i := range parts {
		want[fmt.Sprint(i)] = strings.Repeat(fmt.Sprintf("%x", i), partSize)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*parts)
	for round := range 2 { // the second round replaces every part
		for name, content := range want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := content
				if round == 0 {
					body = "first round"
				}
				_, err := f.s.PutChunk(f.ctx, u.ID, name, strings.NewReader(body))
				errs <- err
			}()
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("PutChunk: %v", err)
		}
	}
	f.wantChunks(t, u.ID, want)
}

func testChunkedUploadExpiry(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/expiry")
	f.putChunk(t, u.ID, "1", "part")
	endless, err := f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: "einstein/ng/endless", User: user.ID})
	if err != nil {
		t.Fatalf("CreateChunkedUpload without expiry: %v", err)
	}
	f.putChunk(t, endless.ID, "1", "kept")
	f.after(chunkTTL + time.Minute)
	_, err = f.s.ChunkedUpload(f.ctx, u.ID)
	wantErr(t, "ChunkedUpload after expiry", err, storage.ErrNotFound)
	_, err = f.s.PutChunk(f.ctx, u.ID, "2", strings.NewReader("late"))
	wantErr(t, "PutChunk after expiry", err, storage.ErrNotFound)
	_, err = f.s.Chunks(f.ctx, u.ID)
	wantErr(t, "Chunks after expiry", err, storage.ErrNotFound)
	_, err = f.s.OpenChunk(f.ctx, u.ID, "1")
	wantErr(t, "OpenChunk after expiry", err, storage.ErrNotFound)
	wantErr(t, "RemoveChunk after expiry", f.s.RemoveChunk(f.ctx, u.ID, "1"), storage.ErrNotFound)
	_, err = f.s.ClaimChunkedUpload(f.ctx, u.ID)
	wantErr(t, "ClaimChunkedUpload after expiry", err, storage.ErrNotFound)
	wantErr(t, "RemoveChunkedUpload after expiry", f.s.RemoveChunkedUpload(f.ctx, u.ID), storage.ErrNotFound)
	f.wantChunks(t, endless.ID, map[string]string{"1": "kept"})
	// An expired upload is gone: its id can start a new one, without parts.
	// (The store's clock has moved on: the new one expires later.)
	again, err := f.s.CreateChunkedUpload(f.ctx, storage.ChunkedUpload{ID: u.ID, User: user.ID, Expires: time.Now().Add(3 * chunkTTL)})
	if err != nil || again.Claimed {
		t.Fatalf("CreateChunkedUpload of an expired id = %+v, %v", again, err)
	}
	f.wantChunks(t, u.ID, map[string]string{})
}

func testChunkedUploadRemove(t *testing.T, f *fixture) {
	u := f.newChunkedUpload(t, "einstein/ng/remove")
	f.putChunk(t, u.ID, "1", "part")
	if err := f.s.RemoveChunkedUpload(f.ctx, u.ID); err != nil {
		t.Fatalf("RemoveChunkedUpload: %v", err)
	}
	wantErr(t, "RemoveChunkedUpload twice", f.s.RemoveChunkedUpload(f.ctx, u.ID), storage.ErrNotFound)
	_, err := f.s.PutChunk(f.ctx, u.ID, "2", strings.NewReader("late"))
	wantErr(t, "PutChunk after the removal", err, storage.ErrNotFound)
	_, err = f.s.OpenChunk(f.ctx, u.ID, "1")
	wantErr(t, "OpenChunk after the removal", err, storage.ErrNotFound)
	wantErr(t, "RemoveChunk after the removal", f.s.RemoveChunk(f.ctx, u.ID, "1"), storage.ErrNotFound)
	f.newChunkedUpload(t, u.ID)
	f.wantChunks(t, u.ID, map[string]string{})
}

// ChunkCapper is implemented by stores whose cap on the parts of one
// chunked upload (storage.MaxChunksPerUpload) a test may lower, so as to
// reach it without putting ten thousand parts. Without it, the cap's test
// puts them.
type ChunkCapper interface {
	// SetMaxChunksPerUpload sets the cap; n <= 0 restores the default.
	SetMaxChunksPerUpload(n int)
}

// An upload takes its store's cap of parts (storage.ChunkCap); one more is
// refused, while its parts can still be replaced. A store that lets the
// test lower the cap is held to a cap of 50: the rule compares the count
// of parts with the cap wherever it lies, and storage pins the default.
func testChunkLimit(t *testing.T, f *fixture) {
	limit := storage.MaxChunksPerUpload
	if capper, ok := f.s.(ChunkCapper); ok {
		limit = 50
		capper.SetMaxChunksPerUpload(limit)
		t.Cleanup(func() { capper.SetMaxChunksPerUpload(0) })
	} else if testing.Short() {
		t.Skip("puts MaxChunksPerUpload parts")
	}
	u := f.newChunkedUpload(t, "einstein/ng/limit")
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < limit; i += writers {
				if _, err := f.s.PutChunk(f.ctx, u.ID, fmt.Sprintf("%05d", i), strings.NewReader("")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("PutChunk within the limit: %v", err)
	}
	_, err := f.s.PutChunk(f.ctx, u.ID, "one too many", strings.NewReader("x"))
	wantErr(t, "PutChunk past the limit", err, storage.ErrInvalid)
	f.putChunk(t, u.ID, "00000", "replaced")
	// A removed part makes room for one, and for one only.
	lastName := fmt.Sprintf("%05d", limit-1)
	if err := f.s.RemoveChunk(f.ctx, u.ID, lastName); err != nil {
		t.Fatalf("RemoveChunk: %v", err)
	}
	f.putChunk(t, u.ID, "one more", "x")
	_, err = f.s.PutChunk(f.ctx, u.ID, lastName, strings.NewReader("x"))
	wantErr(t, "PutChunk past the limit after a removal", err, storage.ErrInvalid)
	parts, err := f.s.Chunks(f.ctx, u.ID)
	if err != nil || len(parts) != limit {
		t.Fatalf("Chunks = %d parts, %v; want %d", len(parts), err, limit)
	}
	first, last := parts[0], parts[len(parts)-1]
	if first != (storage.Chunk{Name: "00000", Size: 8}) || last != (storage.Chunk{Name: "one more", Size: 1}) {
		t.Fatalf("first part = %+v, last = %+v", first, last)
	}
}

// wantReadAcross opens part name of upload id, reads its first bytes, runs
// change (a replacement or removal of the part), and wants the reader to
// go on to the end of the part as it was when opened.
func (f *fixture) wantReadAcross(t *testing.T, id, name, want, change string, do func()) {
	t.Helper()
	rc, err := f.s.OpenChunk(f.ctx, id, name)
	if err != nil {
		t.Fatalf("OpenChunk: %v", err)
	}
	defer rc.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(rc, head); err != nil {
		t.Fatalf("read the part: %v", err)
	}
	do()
	rest, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read the part after its %s: %v", change, err)
	}
	if got := string(head) + string(rest); got != want {
		t.Fatalf("a reader of the part read %d bytes across its %s, want the %d it had when opened", len(got), change, len(want))
	}
}
