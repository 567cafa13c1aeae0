package storage

import (
	"context"
	"fmt"
)

// Usage is what a space holds against its quota: every byte a user can
// make the server keep in it. The stores keep Props and Reserved as running
// counters, changed in the transaction that changes what they count, and
// read Files from the size of the space's root; Nodes is a running counter
// too.
type Usage struct {
	// Files is the content of the space's files.
	Files int64
	// Props is the dead properties of its nodes, shared and per-user: the
	// namespaces, local names and values (PropBytes).
	Props int64
	// Reserved is what the unfinished uploads that will land in the space
	// have announced (UploadReservation, ChunkedReservation).
	Reserved int64
	// Trash is the content of the files in the space's trash.
	Trash int64
	// Versions is the content of the versions of the space's files, in
	// the trash or not.
	Versions int64
	// Nodes is how many records the space keeps: its files and folders
	// (its root aside), the nodes in its trash and the versions of its
	// files. They take no bytes of the quota but count against its node
	// cap (NodeCap).
	Nodes int64
}

// Used is what the space holds: its files, dead properties, trash and
// versions. A reservation is not used yet, but it is not free either
// (Free).
func (u Usage) Used() int64 { return u.Files + u.Props + u.Trash + u.Versions }

// Undo is what the trash and versions hold: what the space can give up
// for an upload that needs room (Evictions).
func (u Usage) Undo() int64 { return u.Trash + u.Versions }

// Shortfall returns how many bytes of trash and versions must go for the
// space to grow by delta within quota, or 0 when it fits. When even all
// of them would not make room, it returns 0 as well: Check refuses then,
// and nothing is destroyed for an upload that is refused anyway.
//
// A space already over its quota (one lowered below what it keeps) must
// shed what it is over by as well, or the check after the evictions would
// refuse the upload that caused them.
func (u Usage) Shortfall(quota, delta int64) int64 {
	if delta <= 0 || quota < 0 {
		return 0
	}
	short := delta - (quota - u.Used() - u.Reserved)
	if short <= 0 || short > u.Undo() {
		return 0
	}
	return short
}

// Free returns what quota leaves free after u, never negative, and whether
// there is a limit at all (a negative quota is none).
func (u Usage) Free(quota int64) (free int64, limited bool) {
	if quota < 0 {
		return 0, false
	}
	return max(quota-u.Used()-u.Reserved, 0), true
}

// Room returns what quota leaves an upload, never negative, and whether
// there is a limit at all: Free once the trash and versions are given up,
// as a store gives them up for an upload that needs their room
// (Shortfall, Evictions). Clients are told it as the room they have.
func (u Usage) Room(quota int64) (room int64, limited bool) {
	return u.withoutUndo().Free(quota)
}

// CheckRoom is Check for an upload, early, before its store makes room
// for it: it fails only when even giving up all trash and versions would
// not make room, exactly when the store's own check after Shortfall's
// evictions would refuse.
func (u Usage) CheckRoom(quota, delta int64) error {
	return u.withoutUndo().Check(quota, delta)
}

// withoutUndo is u once its trash and versions are purged.
func (u Usage) withoutUndo() Usage {
	u.Trash, u.Versions = 0, 0
	return u
}

// Check fails with ErrInsufficientStorage when the space cannot grow by
// delta bytes within quota. Shrinking, and a space without a quota, always
// pass; so does a change that grows nothing even where the space is over
// its quota already (a quota lowered below what is kept).
func (u Usage) Check(quota, delta int64) error {
	if delta <= 0 || quota < 0 {
		return nil
	}
	if free, _ := u.Free(quota); delta > free {
		return fmt.Errorf("%d of %d bytes used, %d reserved, %d more: %w",
			u.Used(), quota, u.Reserved, delta, ErrInsufficientStorage)
	}
	return nil
}

// CheckWithin fails with ErrInsufficientStorage when u, reservations
// included, is more than quota: the check after a change that could not
// know its growth before it ran (a copy's dead properties). A space
// without a quota always passes.
func (u Usage) CheckWithin(quota int64) error {
	if quota >= 0 && u.Used()+u.Reserved > quota {
		return fmt.Errorf("%d of %d bytes used, %d reserved: %w", u.Used(), quota, u.Reserved, ErrInsufficientStorage)
	}
	return nil
}

// PropBytes is what a dead property counts against its space's quota: its
// namespace, local name and value. The per-node limits count the same.
func PropBytes(name PropName, value string) int64 {
	return int64(len(name.Space) + len(name.Local) + len(value))
}

// UploadReservation is what a resumable upload holds against its space's
// quota from its creation until it ends: its announced length, less the
// size of the file it replaces, which its commit frees. Its bytes are
// received into that reservation and become files at completion.
func UploadReservation(s UploadSession) int64 { return max(s.Length-s.Replaces, 0) }

// ChunkedReservation is what a chunked upload holds against its space's
// quota: the length it announced, or the bytes its parts store when they
// are more, so that an upload that announced nothing counts what it has;
// less the size of the file it replaces, as UploadReservation.
func ChunkedReservation(announced, stored, replaces int64) int64 {
	return max(max(announced, stored)-replaces, 0)
}

// ErrTooManyUploads: the user has as many unfinished uploads (resumable and
// chunked together) as the limit allows. It is an ErrInsufficientStorage:
// the user must finish or cancel one first.
var ErrTooManyUploads = fmt.Errorf("%w: too many unfinished uploads", ErrInsufficientStorage)

// CheckOpenUploads fails with ErrTooManyUploads when a user with open
// unfinished uploads may not start another under limit (0: no limit).
func CheckOpenUploads(open, limit int) error {
	if limit > 0 && open >= limit {
		return fmt.Errorf("%d unfinished uploads, at most %d: %w", open, limit, ErrTooManyUploads)
	}
	return nil
}

// CheckDiskFree fails with ErrNoSpace when an upload announcing length
// bytes cannot fit on a disk with free bytes available, of which reserved
// are promised to the unfinished uploads already there. A store that
// cannot measure its backing storage (an object store) does not call it.
func CheckDiskFree(free, reserved, length int64) error {
	if length > 0 && length > free-reserved {
		return fmt.Errorf("%d bytes announced, %d free on disk of which %d reserved: %w", length, free, reserved, ErrNoSpace)
	}
	return nil
}

// UsageReader is what every store tells of a space's use of its quota.
type UsageReader interface {
	// Usage returns what space spaceID holds against its quota, read in
	// one snapshot. ErrNotFound when the space does not exist.
	Usage(ctx context.Context, spaceID string) (Usage, error)
}

// EffectiveQuota returns sp with the quota that applies to it: a personal
// space without a quota of its own has the store's personalDefault (0:
// none).
func EffectiveQuota(sp Space, personalDefault int64) Space {
	if sp.Type == SpacePersonal && sp.Quota == NoQuota && personalDefault > 0 {
		sp.Quota = personalDefault
	}
	return sp
}
