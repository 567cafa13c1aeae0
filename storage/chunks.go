package storage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// ChunkedUpload is a set of parts a client uploads in separate requests,
// in any order and possibly in parallel (Nextcloud chunking NG, ownCloud v1
// chunks), and then asks to be assembled into one file. Until then nothing
// is visible in any space: the parts are no nodes.
type ChunkedUpload struct {
	// ID is chosen by the caller and names the upload in the whole store;
	// callers scope it (by user, by target) so that no two clients meet.
	ID string
	// User is the id of the user who started it: only they may add to,
	// list, assemble or remove it. The store does not check it.
	User string
	// SpaceID is the space the file will land in: the upload reserves
	// ChunkedReservation(Length, bytes stored, Replaces) against its quota from its
	// creation until it ends. Empty for an upload that reserves nothing
	// (kept by stores from before reservations).
	SpaceID string
	// Length is the length announced for the whole file (0: none);
	// ReserveChunkedUpload raises it.
	Length int64
	// Replaces is the size of the file the upload will replace, which its
	// commit frees, as UploadSession.Replaces.
	Replaces int64
	// OpenLimit, when positive, caps the unfinished uploads of User at
	// creation, as UploadSession.OpenLimit does. It is not kept.
	OpenLimit int
	// Claimed is set once ClaimChunkedUpload has succeeded: the upload is
	// being assembled and takes no more parts.
	Claimed bool
	// Created is set by the store; Expires by the caller: the store drops
	// an upload (and its parts) once it has expired, by the store's clock.
	// A zero Expires never expires.
	Created time.Time
	Expires time.Time
}

// Chunk is one stored part of a chunked upload.
type Chunk struct {
	// Name is the part's name as the client gave it (Nextcloud numbers its
	// parts, rclone names them by their byte range); the caller decides
	// the order in which parts are assembled.
	Name string
	Size int64
}

// Limits of a chunked upload; a part past them is ErrInvalid, and so is an
// upload ID longer than MaxChunkedUploadIDBytes (callers build IDs from
// URLs: the limit keeps them within what any store can key on).
const (
	MaxChunkNameBytes       = 255
	MaxChunksPerUpload      = 10000
	MaxChunkedUploadIDBytes = 1024
)

// ChunkedUploads keeps chunked uploads. Every method is safe for concurrent
// use; expired uploads are never returned. Uploads and their parts survive
// restarts. An upload with a SpaceID reserves ChunkedReservation of what it
// announced and what its parts store against that space's quota
// (Usage.Reserved), from its creation until it is removed or expires; a
// part or a ReserveChunkedUpload that would take the reservation past the
// free quota fails with ErrInsufficientStorage and keeps nothing. The file
// is assembled through an ordinary Upload whose Commit names the upload
// (Commit.Assembles): the claim keeps the reservation while the parts are
// copied, and the commit ends the upload in its own transaction before it
// checks the quota, so the reservation becomes the file's use in one step
// and is not counted twice; no upload started during the assembly can take
// its room. A commit that fails leaves the upload claimed and reserved,
// until the caller removes it.
type ChunkedUploads interface {
	// CreateChunkedUpload starts u (Created and Claimed are set by the
	// store). ErrExists when an upload of that ID exists (an expired one is
	// replaced); ErrInvalid for an empty ID or User, an ID longer than
	// MaxChunkedUploadIDBytes or a negative Length; ErrNotFound when
	// SpaceID names no space; ErrInsufficientStorage when its free quota
	// cannot hold Length, ErrTooManyUploads past OpenLimit, ErrNoSpace when
	// a store that measures its disk finds it too small for Length.
	CreateChunkedUpload(ctx context.Context, u ChunkedUpload) (ChunkedUpload, error)
	// ChunkedUpload returns the upload id. ErrNotFound when unknown or
	// expired.
	ChunkedUpload(ctx context.Context, id string) (ChunkedUpload, error)
	// PutChunk stores the bytes of r as the part name of upload id,
	// replacing a part of that name atomically: a reader of the upload sees
	// the old part or the new one, never a mix. An r that fails keeps
	// nothing of its bytes (the error wraps r's). ErrNotFound when the
	// upload is unknown or expired; ErrConflict when it has been claimed;
	// ErrInvalid for a name that is empty, longer than MaxChunkNameBytes or
	// holds a '/' or a NUL, or a new part past MaxChunksPerUpload.
	PutChunk(ctx context.Context, id, name string, r io.Reader) (Chunk, error)
	// Chunks lists the parts of upload id sorted by name (byte order).
	// ErrNotFound when unknown or expired.
	Chunks(ctx context.Context, id string) ([]Chunk, error)
	// ClaimChunkedUpload marks upload id as being assembled and returns its
	// parts sorted by name: from then on PutChunk refuses it, and of two
	// concurrent claims exactly one succeeds (the other is ErrConflict), so
	// a file is assembled once. The upload keeps its reservation. The
	// commit of the assembled file ends it (Commit.Assembles); the caller
	// removes it when the assembly failed, and may call RemoveChunkedUpload
	// either way (ErrNotFound once the commit ended it). A claim lasts no
	// longer than the process that made it: one whose process died
	// mid-assembly (a crash, a cluster node killed) lapses, at the latest
	// soon after (the embedded store clears it when it opens, the
	// distributed store's lease runs out), and the upload reads as
	// unclaimed again, so that the client's retry assembles it.
	// ErrNotFound when unknown or expired.
	ClaimChunkedUpload(ctx context.Context, id string) ([]Chunk, error)
	// OpenChunk reads part name of upload id. ErrNotFound when the upload
	// or the part is unknown, or the upload has expired.
	OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error)
	// RemoveChunk drops part name of upload id, so that a client resuming
	// an upload can discard the parts it will not reuse. A reader that
	// opened the part keeps reading it; a PutChunk of the same name racing
	// the removal leaves either the new part or none. The part no longer
	// counts against MaxChunksPerUpload. ErrNotFound when the upload or the
	// part is unknown (a name no part can have is unknown), or the upload
	// has expired; ErrConflict when the upload has been claimed, whether
	// the part exists or not: the parts being assembled stay as they are.
	RemoveChunk(ctx context.Context, id, name string) error
	// RemoveChunkedUpload ends upload id and drops its parts. ErrNotFound
	// when unknown or expired.
	RemoveChunkedUpload(ctx context.Context, id string) error
	// ReserveChunkedUpload raises the Length upload id announces to length
	// (a smaller length changes nothing), reserving the difference against
	// its space's quota: ErrInsufficientStorage when that does not fit, and
	// then nothing changes. ErrNotFound when unknown or expired;
	// ErrConflict when claimed.
	ReserveChunkedUpload(ctx context.Context, id string, length int64) error
	// PutChunkAfter is PutChunk for a part the caller expects to follow
	// part prev in the file ("": to be its first part). The digests of
	// the whole file are carried from part to part with the upload, so
	// that its assembly need not read the parts a second time: when they
	// run exactly through prev, a new part (not a replacement) is hashed
	// as it is stored and carries them through name; otherwise it is
	// stored as PutChunk does. Replacing or removing a part they cover
	// starts them again. A store that carries no digests stores the part
	// as PutChunk does.
	PutChunkAfter(ctx context.Context, id, name, prev string, r io.Reader) (Chunk, error)
	// AppendChunks writes into up, an empty Upload from this store's
	// NewUpload, the leading parts of upload id, taken in order, that the
	// carried digests cover, without hashing them again, and returns how
	// many it wrote: the caller writes the rest as usual. It writes none
	// (0, nil) when the digests do not cover exactly order's first parts,
	// lack one that up computes while its bytes arrive (HashInline; a
	// store may carry only PartDigests) or the store carries none. The
	// error of a failed write fails up.
	// ErrNotFound when the upload is unknown or expired.
	AppendChunks(ctx context.Context, up Upload, id string, order []string) (int, error)
}

// Ends reports whether commit c ends upload u, as a commit that assembles
// it does: c names it in Assembles and u is claimed. An upload of that id
// that is not claimed was started anew after the assembly's claim ended
// (removed, or expired): its reservation is its own.
func (c Commit) Ends(u ChunkedUpload) bool {
	return c.Assembles != "" && c.Assembles == u.ID && u.Claimed
}

// ValidChunkName checks a part name as PutChunk documents: it is only a
// key, but clients must not be able to make one no other store could keep.
// A refused name fails with ErrInvalid.
func ValidChunkName(name string) error {
	if name == "" || len(name) > MaxChunkNameBytes || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("part name %.64q: %w", name, ErrInvalid)
	}
	return nil
}

// ValidChunkedUpload checks what a caller gives CreateChunkedUpload, as
// CreateChunkedUpload documents. storable, when not nil, refuses a user or
// space id the store itself cannot hold, as in ValidName. A refused upload
// fails with ErrInvalid.
func ValidChunkedUpload(u ChunkedUpload, storable func(string) bool) error {
	held := func(v string) bool { return storable == nil || storable(v) }
	switch {
	case u.ID == "":
		return fmt.Errorf("empty upload id: %w", ErrInvalid)
	case len(u.ID) > MaxChunkedUploadIDBytes:
		return fmt.Errorf("upload id %.64q… longer than %d bytes: %w", u.ID, MaxChunkedUploadIDBytes, ErrInvalid)
	case u.User == "", !held(u.User):
		return fmt.Errorf("upload %.64q without a valid user: %w", u.ID, ErrInvalid)
	case !held(u.SpaceID):
		return fmt.Errorf("upload %.64q in space %.64q: %w", u.ID, u.SpaceID, ErrInvalid)
	case u.Length < 0, u.Replaces < 0:
		return fmt.Errorf("upload %.64q of negative length %d or %d replaced: %w", u.ID, u.Length, u.Replaces, ErrInvalid)
	}
	return nil
}

// ChunkCap is the cap on one upload's parts a store enforces: its own cap
// when set above zero (tests lower it, so as to reach it quickly), else
// MaxChunksPerUpload.
func ChunkCap(set int64) int {
	if set > 0 {
		return int(set)
	}
	return MaxChunksPerUpload
}

// CheckChunkRoom says why part name may not be put into upload id now, or
// nil: a claimed upload takes no more parts (ErrConflict), and one with
// limit parts (ChunkCap) takes no new one (ErrInvalid), though it may
// replace one. hasPart looks the part up; it is called only when that
// answer matters.
func CheckChunkRoom(id string, claimed bool, parts, limit int, hasPart func() (bool, error)) error {
	if claimed {
		return ChunkedUploadClaimed(id)
	}
	if parts < limit {
		return nil
	}
	replaces, err := hasPart()
	if err != nil || replaces {
		return err
	}
	return fmt.Errorf("chunked upload %.64q has %d parts: %w", id, parts, ErrInvalid)
}

// ChunkedUploadNotFound: no live chunked upload id (ErrNotFound).
func ChunkedUploadNotFound(id string) error {
	return fmt.Errorf("chunked upload %.64q: %w", id, ErrNotFound)
}

// ChunkedUploadClaimed: upload id is being assembled and changes no more
// (ErrConflict).
func ChunkedUploadClaimed(id string) error {
	return fmt.Errorf("chunked upload %.64q is being assembled: %w", id, ErrConflict)
}

// ChunkedUploadClaimedTwice: a second claim of upload id (ErrConflict).
func ChunkedUploadClaimedTwice(id string) error {
	return fmt.Errorf("chunked upload %.64q already claimed: %w", id, ErrConflict)
}

// ChunkNotFound: upload id has no part name (ErrNotFound).
func ChunkNotFound(id, name string) error {
	return fmt.Errorf("part %.64q of %.64q: %w", name, id, ErrNotFound)
}
