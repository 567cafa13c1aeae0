package boltstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// orphanUploadGrace is how old the file of an upload session or the
// directory of a chunked upload must be before a check calls it an orphan
// for want of a record: both are made before their record is written.
const orphanUploadGrace = time.Hour

// checkSessions checks that every upload session is readable, in a space
// that exists, and has its bytes: a file at least as long as its offset.
func (c *checkRun) checkSessions() error {
	return c.scan(bucketSessions, func(t *txn, k, v []byte) ([]finding, error) {
		id := string(k)
		why, r := c.sessionProblem(t, id, v)
		if why == "" {
			return nil, nil
		}
		path := r.Target.Name
		if r.Target.NodeID != "" {
			if n, ok, err := t.node(r.Target.NodeID); err == nil && ok {
				path = t.pathOf(n)
			}
		} else if p, ok, err := t.node(r.Target.ParentID); err == nil && ok {
			path = joinPath(t.pathOf(p), r.Target.Name)
		}
		f := problem(storage.ProblemDangling, r.SpaceID, path, "%s", why).withRepair(c.endSession(id))
		// Its file may have gone with the session after the snapshot, or
		// be on its way into a content file (CompleteSession moves it
		// before it drops the record): judged again with the session's
		// lock held, and not judged while a call holds it.
		still := c.confirm(func(t *txn) bool {
			v := t.sessions().Get([]byte(id))
			why, _ := c.sessionProblem(t, id, v)
			return v != nil && why != ""
		})
		f.confirm = func() (bool, error) {
			unlock, ok := c.s.sessionLocks.tryLock(id)
			if !ok {
				return false, nil
			}
			defer unlock()
			return still()
		}
		return []finding{f}, nil
	}, nil)
}

// sessionProblem says what is wrong with session id, whose record is v,
// or "".
func (c *checkRun) sessionProblem(t *txn, id string, v []byte) (string, sessionRec) {
	r, err := decodeSession(id, v)
	switch {
	case err != nil:
		return err.Error(), r
	case !t.spaceExists(r.SpaceID):
		return fmt.Sprintf("upload session %s is in space %s, which does not exist", id, r.SpaceID), r
	}
	return c.sessionFileProblem(id, r.Offset), r
}

// sessionFileProblem says what is wrong with the file of session id, or
// "".
func (c *checkRun) sessionFileProblem(id string, offset int64) string {
	info, err := os.Stat(c.s.sessionPath(id))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("upload session %s has no bytes: its file is missing", id)
	case err != nil:
		return fmt.Sprintf("upload session %s: its file: %v", id, err)
	case info.Size() < offset:
		return fmt.Sprintf("upload session %s has %d bytes, its record says %d", id, info.Size(), offset)
	}
	return ""
}

// endSession repairs a session that points at nothing by ending it, if
// no call is using it.
func (c *checkRun) endSession(id string) func() (bool, error) {
	return func() (bool, error) {
		unlock, ok := c.s.sessionLocks.tryLock(id)
		if !ok {
			return false, nil
		}
		defer unlock()
		fixed, err := c.update(func(t *txn) (bool, error) {
			v := t.sessions().Get([]byte(id))
			if why, _ := c.sessionProblem(t, id, v); v == nil || why == "" {
				return false, nil
			}
			return true, t.dropSession(id)
		})
		if fixed {
			c.s.removeSessionFile(id)
		}
		return fixed, err
	}
}

// checkChunkedUploads checks that every chunked upload is readable, in a
// space that exists (if in one), with its parts' records and their files.
func (c *checkRun) checkChunkedUploads() error {
	err := c.scan(bucketChunkedUploads, func(t *txn, k, v []byte) ([]finding, error) {
		id := string(k)
		why, r := c.chunkedUploadProblem(t, id, v)
		if why == "" {
			return nil, nil
		}
		f := problem(storage.ProblemDangling, r.SpaceID, "", "%s", why).withRepair(c.endChunkedUpload(id))
		// A replaced part's file goes once the record names the new one.
		f.confirm = c.confirm(func(t *txn) bool {
			v := t.chunkedUploads().Get([]byte(id))
			why, _ := c.chunkedUploadProblem(t, id, v)
			return v != nil && why != ""
		})
		return []finding{f}, nil
	}, nil)
	if err != nil {
		return err
	}
	return c.scan(bucketChunkParts, func(t *txn, k, v []byte) ([]finding, error) {
		id := string(k)
		orphan := func(t *txn) bool {
			return t.chunkParts().Bucket([]byte(id)) != nil && t.chunkedUploads().Get([]byte(id)) == nil
		}
		if !orphan(t) {
			return nil, nil
		}
		return []finding{problem(storage.ProblemDangling, "", "", "parts of chunked upload %.64q, which does not exist", id).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if !orphan(t) {
						return false, nil
					}
					return true, t.chunkParts().DeleteBucket([]byte(id))
				})
			})}, nil
	}, nil)
}

// chunkedUploadProblem says what is wrong with chunked upload id, whose
// record is v, or "".
func (c *checkRun) chunkedUploadProblem(t *txn, id string, v []byte) (string, chunkedUploadRec) {
	r, err := decodeChunkedUpload(id, v)
	switch {
	case err != nil:
		return err.Error(), r
	case r.SpaceID != "" && !t.spaceExists(r.SpaceID):
		return fmt.Sprintf("chunked upload %.64q is in space %s, which does not exist", id, r.SpaceID), r
	}
	parts := t.chunkParts().Bucket([]byte(id))
	if parts == nil {
		return fmt.Sprintf("chunked upload %.64q has no parts bucket", id), r
	}
	return c.chunkFilesProblem(id, r.Dir, parts), r
}

// chunkFilesProblem says which part of upload id lacks its file or has
// another size, or "".
func (c *checkRun) chunkFilesProblem(id, dir string, parts *bolt.Bucket) string {
	if _, err := os.Stat(c.s.chunkDirPath(dir)); err != nil {
		return fmt.Sprintf("chunked upload %.64q has no directory: %v", id, err)
	}
	var why string
	parts.ForEach(func(k, v []byte) error {
		part, err := decodeChunk(id, string(k), v)
		if err != nil {
			why = err.Error()
			return errStopPage
		}
		info, err := os.Stat(c.s.chunkPath(dir, part.File))
		if err != nil || !part.heldBy(info.Size()) {
			why = fmt.Sprintf("part %.64q of chunked upload %.64q lacks its %d bytes", k, id, part.Size)
			return errStopPage
		}
		return nil
	})
	return why
}

// endChunkedUpload repairs a chunked upload that points at nothing by
// ending it.
func (c *checkRun) endChunkedUpload(id string) func() (bool, error) {
	return func() (bool, error) {
		var dir string
		fixed, err := c.update(func(t *txn) (bool, error) {
			v := t.chunkedUploads().Get([]byte(id))
			if why, _ := c.chunkedUploadProblem(t, id, v); v == nil || why == "" {
				return false, nil
			}
			if r, err := decodeChunkedUpload(id, v); err == nil {
				dir = r.Dir
			}
			return true, t.dropChunkedUpload(id)
		})
		if fixed && dir != "" {
			c.s.removeChunkDir(dir)
		}
		return fixed, err
	}
}

// checkContentFiles looks for files nothing references: content files
// (as the orphan sweep does), session files and chunk directories.
func (c *checkRun) checkContentFiles() error {
	for i := 0; i < 256; i++ {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if err := c.checkBlobDir(filepath.Join(c.s.blobDir, fmt.Sprintf("%02x", i))); err != nil {
			return err
		}
	}
	if err := c.checkSessionFiles(); err != nil {
		return err
	}
	return c.checkChunkDirs()
}

// checkBlobDir reports the content files of dir that nothing references.
// The rule is the orphan sweep's: pending files are set aside before the
// snapshot is taken, so a file not pending by then either has its
// reference in the snapshot or never will.
func (c *checkRun) checkBlobDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	candidates := c.s.pending.without(entries)
	var orphans []string
	err = c.s.viewWalk(func(t *txn) error {
		for _, name := range candidates {
			t.countScan(len(name))
			if t.blobs().Get([]byte(name)) == nil {
				orphans = append(orphans, name)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range orphans {
		path := filepath.Join(dir, name)
		f := problem(storage.ProblemOrphanContent, "", "", "content file %s is referenced by nothing", name).withRepair(func() (bool, error) {
			err := os.RemoveAll(path)
			return err == nil, err
		})
		if err := c.found(f); err != nil {
			return err
		}
	}
	return nil
}

// checkSessionFiles reports the session files without a session record.
func (c *checkRun) checkSessionFiles() error {
	entries, err := os.ReadDir(c.s.sessionDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		id := e.Name()
		if !c.oldEnough(e) {
			continue
		}
		var recorded bool
		if err := c.s.view(func(t *txn) error { recorded = t.sessions().Get([]byte(id)) != nil; return nil }); err != nil {
			return err
		}
		if recorded {
			continue
		}
		f := problem(storage.ProblemOrphanContent, "", "", "upload session file %s has no session", id).withRepair(func() (bool, error) {
			unlock, ok := c.s.sessionLocks.tryLock(id)
			if !ok {
				return false, nil
			}
			defer unlock()
			var recorded bool
			if err := c.s.view(func(t *txn) error { recorded = t.sessions().Get([]byte(id)) != nil; return nil }); err != nil || recorded {
				return false, err
			}
			err := os.RemoveAll(c.s.sessionPath(id))
			return err == nil, err
		})
		if err := c.found(f); err != nil {
			return err
		}
	}
	return nil
}

// checkChunkDirs reports the chunk directories no chunked upload names.
func (c *checkRun) checkChunkDirs() error {
	entries, err := os.ReadDir(c.s.chunkDir)
	if err != nil {
		return err
	}
	var old []string
	for _, e := range entries {
		if c.oldEnough(e) {
			old = append(old, e.Name())
		}
	}
	if len(old) == 0 {
		return nil
	}
	named, err := c.chunkDirsNamed()
	if err != nil {
		return err
	}
	for _, dir := range old {
		if named[dir] {
			continue
		}
		f := problem(storage.ProblemOrphanContent, "", "", "chunk directory %s has no chunked upload", dir).withRepair(func() (bool, error) {
			named, err := c.chunkDirsNamed()
			if err != nil || named[dir] {
				return false, err
			}
			err = os.RemoveAll(c.s.chunkDirPath(dir))
			return err == nil, err
		})
		if err := c.found(f); err != nil {
			return err
		}
	}
	return nil
}

// chunkDirsNamed returns the directories the chunked uploads name.
func (c *checkRun) chunkDirsNamed() (map[string]bool, error) {
	named := map[string]bool{}
	err := c.s.view(func(t *txn) error {
		return t.chunkedUploads().ForEach(func(k, v []byte) error {
			if r, err := decodeChunkedUpload(string(k), v); err == nil {
				named[r.Dir] = true
			}
			return nil
		})
	})
	return named, err
}

// oldEnough reports whether the entry is older than orphanUploadGrace.
func (c *checkRun) oldEnough(e fs.DirEntry) bool {
	info, err := e.Info()
	return err == nil && c.s.now().Sub(info.ModTime()) > orphanUploadGrace
}
