package storage

import "fmt"

// Refusals of Conditions and of a commit's target, one value each.
var (
	// ErrNodeExists: If-None-Match refused a change of a node that exists.
	ErrNodeExists = fmt.Errorf("node exists: %w", ErrPrecondition)
	// ErrTargetExists: If-None-Match refused a commit onto an existing file.
	ErrTargetExists = fmt.Errorf("target exists: %w", ErrPrecondition)
	// ErrTargetIsFolder: a commit cannot replace a folder with a file.
	ErrTargetIsFolder = fmt.Errorf("target is a folder: %w", ErrConflict)
)

// Check applies c to an existing node whose etag is etag: the node a
// remove deletes, or the source of a COPY or MOVE. The error wraps
// ErrPrecondition.
func (c Conditions) Check(etag string) error {
	if c.IfMatch != "" && c.IfMatch != etag {
		return etagMismatch(c.IfMatch)
	}
	if c.IfNoneMatch {
		return ErrNodeExists
	}
	return nil
}

// CheckReplace applies c to the target of a commit, which makes a file
// with new content: old is the node at the target when exists. If-Match
// needs an existing node with that etag, If-None-Match needs none, and a
// folder is never replaced by a file (ErrTargetIsFolder, an ErrConflict).
func (c Conditions) CheckReplace(old Node, exists bool) error {
	switch {
	case c.IfMatch != "" && (!exists || old.ETag != c.IfMatch):
		return etagMismatch(c.IfMatch)
	case c.IfNoneMatch && exists:
		return ErrTargetExists
	case exists && old.IsFolder():
		return ErrTargetIsFolder
	}
	return nil
}

func etagMismatch(ifMatch string) error {
	return fmt.Errorf("etag %q does not match: %w", ifMatch, ErrPrecondition)
}
