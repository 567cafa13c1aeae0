package pgstore

import (
	"fmt"
	"io"

	"github.com/davspaces/davspaces/storage"
)

// ReadFrom writes everything r yields to the content and the checksums, as
// Write does; io.Copy into an upload ends here. The first bytes go to
// memory; past memLimit, the PUT and the three digests each take the
// blocks on a goroutine of their own (checksum.Pipeline) while this one
// reads the next. An error reading r is returned as it is; one sending
// fails the upload, as in Write.
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return 0, err
	}
	start := u.size
	if u.stream == nil {
		done, err := u.fillMem(r)
		if done || err != nil {
			return u.size - start, err
		}
	}
	first := storage.GetBlock()
	n, err := storage.ReadBlock(r, *first)
	if n == 0 && u.stream == nil {
		// The body ended exactly at memLimit: still one PUT.
		storage.PutBlock(first)
		return u.size - start, eofIsEnd(err)
	}
	if serr := u.startStream(); serr != nil {
		storage.PutBlock(first)
		return u.size - start, serr
	}
	err = u.pipeline(r, first, n, err)
	return u.size - start, err
}

// fillMem reads into the memory the upload holds until it is full or r
// ends; done reports that r ended.
func (u *upload) fillMem(r io.Reader) (done bool, err error) {
	mem := *u.memory()
	for len(mem) < cap(mem) {
		n, err := r.Read(mem[len(mem):cap(mem)])
		u.sum.Write(mem[len(mem) : len(mem)+n])
		mem = mem[:len(mem)+n]
		u.size += int64(n)
		if err != nil {
			*u.mem = mem
			return true, eofIsEnd(err)
		}
	}
	*u.mem = mem
	return false, nil
}

func eofIsEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// pipeline sends r to the object and the digests block by block, starting
// with first, which holds n bytes read with readErr.
func (u *upload) pipeline(r io.Reader, first *[]byte, n int, readErr error) error {
	werr, rerr := storage.PipeBlocks(u.sum, streamWriter{u}, r, first, n, readErr)
	if werr != nil {
		// The digests may have bytes the object lacks.
		u.failed = fmt.Errorf("write upload: %w", werr)
		return u.failed
	}
	return rerr
}

// streamWriter sends the blocks of a pipeline to the upload's object, on
// the pipeline's goroutine, which owns u.size until the pipeline is done.
type streamWriter struct{ u *upload }

func (w streamWriter) Write(p []byte) (int, error) {
	n, err := w.u.stream.Write(p)
	w.u.size += int64(n)
	return n, err
}
