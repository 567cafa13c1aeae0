package storage

import (
	"context"
	"fmt"
)

// ProblemKind names what a check found wrong, so that tools and tests can
// tell problems apart without parsing messages.
type ProblemKind string

// The problems a Checker reports.
const (
	// ProblemMissingContent: a file or version references content (a
	// content file, an inline value, an object) that is not there.
	ProblemMissingContent ProblemKind = "missing-content"
	// ProblemContentSize: the content is there with another size.
	ProblemContentSize ProblemKind = "content-size"
	// ProblemChecksum: the content's SHA1 is not the one recorded (deep
	// checks only).
	ProblemChecksum ProblemKind = "checksum"
	// ProblemOrphanContent: content nothing references, older than the
	// store's grace period.
	ProblemOrphanContent ProblemKind = "orphan-content"
	// ProblemFolderSize: a folder's size is not the sum of its children's.
	ProblemFolderSize ProblemKind = "folder-size"
	// ProblemDangling: an upload session, chunked upload, lock, trash
	// item, version, property, share or index entry points at nothing.
	ProblemDangling ProblemKind = "dangling"
	// ProblemUsage: a space's usage counters disagree with what it holds.
	ProblemUsage ProblemKind = "usage"
)

// Problem is one thing a check found wrong.
type Problem struct {
	Kind ProblemKind
	// SpaceID and Path say where, when known: the space, and the path of
	// the node from the space's root ("" for the root or when the problem
	// has no place in a tree, like an orphan content file).
	SpaceID string
	Path    string
	// Detail says what is wrong in words, naming ids, keys and sizes.
	Detail string
	// Repairable is true when Repair can fix it without guessing
	// (removing an orphan, recomputing a size or counter, dropping a
	// dangling record); Repaired is true once it did.
	Repairable bool
	Repaired   bool
}

// String is the problem on one line: "<kind> <space>:/<path>: <detail>",
// with "<kind>: <detail>" for a problem in no space (an orphan content file)
// and " (repaired)" at the end once repaired.
func (p Problem) String() string {
	where := p.SpaceID
	if p.Path != "" {
		where += ":/" + p.Path
	}
	if where != "" {
		where = " " + where
	}
	s := fmt.Sprintf("%s%s: %s", p.Kind, where, p.Detail)
	if p.Repaired {
		s += " (repaired)"
	}
	return s
}

// CheckOptions say how thoroughly to check and whether to repair.
type CheckOptions struct {
	// Deep reads every content and compares its SHA1.
	Deep bool
	// Repair fixes the repairable problems it finds.
	Repair bool
	// Progress, when set, is called now and then with how many nodes,
	// versions and content files or objects were checked, and of how
	// many (0 when not known yet).
	Progress func(done, total int64)
}

// CheckSummary is what a check looked at.
type CheckSummary struct {
	Spaces, Nodes, Contents int64
	Bytes                   int64
	Problems, Repaired      int
}

// Checker is a store that verifies its own consistency. It reads while
// the store serves (a snapshot per step), reports each problem through
// report as it finds it, and never changes anything unless opts.Repair.
type Checker interface {
	Check(ctx context.Context, opts CheckOptions, report func(Problem)) (CheckSummary, error)
}

// SpaceLister is a store that lists every space it holds, for the
// administrator's commands (usage, export of everything, check).
type SpaceLister interface {
	// Spaces returns every personal and project space, ordered by id.
	Spaces(ctx context.Context) ([]Space, error)
}
