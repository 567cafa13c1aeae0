package storage

import (
	"context"
	"slices"
	"time"
)

// Retention is how long a space keeps what was deleted or replaced.
type Retention struct {
	// Trash is how long a trash item is kept; 0 keeps no trash (a delete
	// destroys at once).
	Trash time.Duration
	// VersionsFor is how long a version is kept after it was replaced.
	VersionsFor time.Duration
	// VersionsMax is how many versions a file keeps at most.
	VersionsMax int
	// VersionsOff keeps no versions: a replacement destroys the content.
	VersionsOff bool
}

// The retention a store applies when it is given none.
const (
	DefaultTrashRetention    = 30 * 24 * time.Hour
	DefaultVersionsRetention = 30 * 24 * time.Hour
	DefaultVersionsMax       = 100
)

// DefaultRetention is the retention of a space the configuration says
// nothing of.
var DefaultRetention = Retention{
	Trash:       DefaultTrashRetention,
	VersionsFor: DefaultVersionsRetention,
	VersionsMax: DefaultVersionsMax,
}

// KeepsTrash reports whether deletes go to the trash.
func (r Retention) KeepsTrash() bool { return r.Trash > 0 }

// KeepsVersions reports whether replaced content is kept.
func (r Retention) KeepsVersions() bool {
	return !r.VersionsOff && r.VersionsFor > 0 && r.VersionsMax > 0
}

// TrashExpired reports whether an item deleted at deleted has outlived
// the retention at now.
func (r Retention) TrashExpired(deleted, now time.Time) bool {
	return !r.KeepsTrash() || !now.Before(deleted.Add(r.Trash))
}

// VersionsToPrune returns the versions of one file, newest first as
// FileVersions gives them, that the retention no longer keeps at now: the
// expired ones and those beyond VersionsMax.
func (r Retention) VersionsToPrune(vs []Version, now time.Time) []Version {
	if !r.KeepsVersions() {
		return vs
	}
	var prune []Version
	for i, v := range vs {
		if i >= r.VersionsMax || !now.Before(v.Replaced.Add(r.VersionsFor)) {
			prune = append(prune, v)
		}
	}
	return prune
}

// RetentionPolicy is the retention of every space of a store: Default, and
// the spaces the configuration sets apart.
type RetentionPolicy struct {
	Default Retention
	Spaces  map[string]Retention
}

// For returns the retention of space spaceID.
func (p RetentionPolicy) For(spaceID string) Retention {
	if r, ok := p.Spaces[spaceID]; ok {
		return r
	}
	return p.Default
}

// Retainer is a store whose trash and versions follow a policy. A store
// starts with DefaultRetention for every space.
type Retainer interface {
	// SetRetention applies p from now on, to what is kept already too.
	SetRetention(p RetentionPolicy)
	// ExpireUndo removes, in one bounded pass, the trash items and
	// versions the policy no longer keeps, as purging them would, and
	// reports how many went. The store's background sweep calls it; a
	// caller may too.
	ExpireUndo(ctx context.Context) (int, error)
}

// Kept is one thing a space keeps only for undo: a trash item, or a
// version of a file (FileID set).
type Kept struct {
	TrashKey   string
	FileID     string
	VersionKey string
	Size       int64
	Since      time.Time
}

// Evictions returns what to remove, oldest first, so that need more bytes
// fit: when an upload needs room that only the trash and versions hold,
// they give it up before the upload is refused. It returns nil when even
// all of kept would not free need bytes, so that a refused upload destroys
// nothing.
func Evictions(kept []Kept, need int64) []Kept {
	if need <= 0 {
		return nil
	}
	sorted := slices.Clone(kept)
	slices.SortStableFunc(sorted, func(a, b Kept) int { return a.Since.Compare(b.Since) })
	var freed int64
	for i, k := range sorted {
		freed += k.Size
		if freed >= need {
			return sorted[:i+1]
		}
	}
	return nil
}
