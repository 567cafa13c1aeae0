package traced

import (
	"context"
	"io"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Walker is a store that resolves the segments of a path in one snapshot
// (boltstore's and pgstore's Walk), which davhandler uses instead of a
// lookup per segment when the store offers it.
type Walker interface {
	Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error)
}

// Wrap returns b with every operation traced. The result offers what b
// offers beyond storage.Backend and callers look for: Walk only when b
// has it, so that a caller's fast path stays and no caller is promised
// what b cannot do; Health always, a store without it being as healthy as
// its process.
func Wrap(b storage.Backend) storage.Backend {
	t := &Backend{next: b}
	if w, ok := b.(Walker); ok {
		return &walkingBackend{Backend: t, walker: w}
	}
	return t
}

// Backend is a traced storage.Backend. Each method with a context runs
// the wrapped store's in a span of its own; the others pass through.
type Backend struct {
	next storage.Backend
}

// walkingBackend is a Backend whose store walks paths.
type walkingBackend struct {
	*Backend
	walker Walker
}

// Unwrap returns the traced store, for callers that need what it offers
// beyond storage.Backend (an administrator's command: storage.Checker).
func (b *Backend) Unwrap() storage.Backend { return b.next }

func (b *walkingBackend) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	return call(ctx, "Walk", spaceID, func(ctx context.Context) ([]storage.Node, error) {
		return b.walker.Walk(ctx, spaceID, nodeID, names)
	})
}

// Health asks the store's backends, when it has any (a
// storage.HealthChecker); otherwise the store is healthy.
func (b *Backend) Health(ctx context.Context) error {
	hc, ok := b.next.(storage.HealthChecker)
	if !ok {
		return nil
	}
	return call0(ctx, "Health", "", hc.Health)
}

// The storage.Store methods.

func (b *Backend) StorageID() string { return b.next.StorageID() }

func (b *Backend) Usage(ctx context.Context, spaceID string) (storage.Usage, error) {
	return call(ctx, "Usage", spaceID, func(ctx context.Context) (storage.Usage, error) {
		return b.next.Usage(ctx, spaceID)
	})
}

func (b *Backend) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	return call(ctx, "PersonalSpace", "", func(ctx context.Context) (storage.Space, error) {
		return b.next.PersonalSpace(ctx, u)
	})
}

func (b *Backend) PutSpace(ctx context.Context, s storage.Space) (storage.Space, error) {
	return call(ctx, "PutSpace", s.ID, func(ctx context.Context) (storage.Space, error) {
		return b.next.PutSpace(ctx, s)
	})
}

func (b *Backend) Space(ctx context.Context, id string) (storage.Space, error) {
	return call(ctx, "Space", id, func(ctx context.Context) (storage.Space, error) {
		return b.next.Space(ctx, id)
	})
}

func (b *Backend) Spaces(ctx context.Context) ([]storage.Space, error) {
	return call(ctx, "Spaces", "", func(ctx context.Context) ([]storage.Space, error) {
		return b.next.Spaces(ctx)
	})
}

func (b *Backend) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	return call(ctx, "Node", spaceID, func(ctx context.Context) (storage.Node, error) {
		return b.next.Node(ctx, spaceID, nodeID)
	})
}

func (b *Backend) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	return call(ctx, "Child", spaceID, func(ctx context.Context) (storage.Node, error) {
		return b.next.Child(ctx, spaceID, parentID, name)
	})
}

func (b *Backend) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	return call(ctx, "ReadDir", spaceID, func(ctx context.Context) ([]storage.Node, error) {
		return b.next.ReadDir(ctx, spaceID, folderID, after, limit)
	})
}

func (b *Backend) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	return call(ctx, "ReadDirProps", spaceID, func(ctx context.Context) ([]storage.Entry, error) {
		return b.next.ReadDirProps(ctx, spaceID, folderID, user, after, limit)
	})
}

func (b *Backend) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	return call(ctx, "Mkdir", spaceID, func(ctx context.Context) (storage.Node, error) {
		return b.next.Mkdir(ctx, spaceID, parentID, name)
	})
}

func (b *Backend) Remove(ctx context.Context, spaceID, nodeID string, c storage.Conditions) error {
	return call0(ctx, "Remove", spaceID, func(ctx context.Context) error {
		return b.next.Remove(ctx, spaceID, nodeID, c)
	})
}

func (b *Backend) Move(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	return call2(ctx, "Move", spaceID, func(ctx context.Context) (storage.Node, bool, error) {
		return b.next.Move(ctx, spaceID, t)
	})
}

func (b *Backend) Copy(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	return call2(ctx, "Copy", spaceID, func(ctx context.Context) (storage.Node, bool, error) {
		return b.next.Copy(ctx, spaceID, t)
	})
}

// NewUpload returns an upload whose Commit is traced too.
func (b *Backend) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	u, err := call(ctx, "NewUpload", spaceID, func(ctx context.Context) (storage.Upload, error) {
		return b.next.NewUpload(ctx, spaceID)
	})
	if err != nil {
		return nil, err
	}
	return &upload{Upload: u, spaceID: spaceID}, nil
}

// Open returns the store's content as it is, so that what davhandler looks
// for on it (storage.Prefetcher, an *os.File below) stays.
func (b *Backend) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	return call2(ctx, "Open", spaceID, func(ctx context.Context) (storage.Node, storage.Content, error) {
		return b.next.Open(ctx, spaceID, nodeID)
	})
}

func (b *Backend) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	return call(ctx, "Props", spaceID, func(ctx context.Context) ([]storage.Property, error) {
		return b.next.Props(ctx, spaceID, nodeID, user)
	})
}

func (b *Backend) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	return call0(ctx, "PatchProps", spaceID, func(ctx context.Context) error {
		return b.next.PatchProps(ctx, spaceID, nodeID, patches)
	})
}

// The storage.LockStore methods.

func (b *Backend) CreateLock(ctx context.Context, l storage.Lock, lim storage.LockLimits) (storage.Lock, error) {
	return call(ctx, "CreateLock", l.SpaceID, func(ctx context.Context) (storage.Lock, error) {
		return b.next.CreateLock(ctx, l, lim)
	})
}

func (b *Backend) RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (storage.Lock, error) {
	return call(ctx, "RefreshLock", spaceID, func(ctx context.Context) (storage.Lock, error) {
		return b.next.RefreshLock(ctx, spaceID, token, timeout)
	})
}

func (b *Backend) RemoveLock(ctx context.Context, spaceID, token string) error {
	return call0(ctx, "RemoveLock", spaceID, func(ctx context.Context) error {
		return b.next.RemoveLock(ctx, spaceID, token)
	})
}

func (b *Backend) LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	return call(ctx, "LocksOn", spaceID, func(ctx context.Context) ([]storage.Lock, error) {
		return b.next.LocksOn(ctx, spaceID, nodeID, below)
	})
}

func (b *Backend) SpaceLocks(ctx context.Context, spaceID string) ([]storage.Lock, error) {
	return call(ctx, "SpaceLocks", spaceID, func(ctx context.Context) ([]storage.Lock, error) {
		return b.next.SpaceLocks(ctx, spaceID)
	})
}

// The storage.UploadSessions methods. A session's calls other than its
// creation name no space: the session knows it, the call does not.

func (b *Backend) CreateSession(ctx context.Context, s storage.UploadSession) (storage.UploadSession, error) {
	return call(ctx, "CreateSession", s.SpaceID, func(ctx context.Context) (storage.UploadSession, error) {
		return b.next.CreateSession(ctx, s)
	})
}

func (b *Backend) Session(ctx context.Context, id string) (storage.UploadSession, error) {
	return call(ctx, "Session", "", func(ctx context.Context) (storage.UploadSession, error) {
		return b.next.Session(ctx, id)
	})
}

func (b *Backend) AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	return call(ctx, "AppendSession", "", func(ctx context.Context) (storage.UploadSession, error) {
		return b.next.AppendSession(ctx, id, offset, r, check)
	})
}

func (b *Backend) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	return call2(ctx, "CompleteSession", "", func(ctx context.Context) (storage.Node, bool, error) {
		return b.next.CompleteSession(ctx, id, locks, modTime)
	})
}

func (b *Backend) RemoveSession(ctx context.Context, id string) error {
	return call0(ctx, "RemoveSession", "", func(ctx context.Context) error {
		return b.next.RemoveSession(ctx, id)
	})
}

// The storage.ChunkedUploads methods; as with sessions, only the creation
// names the space.

func (b *Backend) CreateChunkedUpload(ctx context.Context, u storage.ChunkedUpload) (storage.ChunkedUpload, error) {
	return call(ctx, "CreateChunkedUpload", u.SpaceID, func(ctx context.Context) (storage.ChunkedUpload, error) {
		return b.next.CreateChunkedUpload(ctx, u)
	})
}

func (b *Backend) ChunkedUpload(ctx context.Context, id string) (storage.ChunkedUpload, error) {
	return call(ctx, "ChunkedUpload", "", func(ctx context.Context) (storage.ChunkedUpload, error) {
		return b.next.ChunkedUpload(ctx, id)
	})
}

func (b *Backend) PutChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	return call(ctx, "PutChunk", "", func(ctx context.Context) (storage.Chunk, error) {
		return b.next.PutChunk(ctx, id, name, r)
	})
}

func (b *Backend) Chunks(ctx context.Context, id string) ([]storage.Chunk, error) {
	return call(ctx, "Chunks", "", func(ctx context.Context) ([]storage.Chunk, error) {
		return b.next.Chunks(ctx, id)
	})
}

func (b *Backend) ClaimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	return call(ctx, "ClaimChunkedUpload", "", func(ctx context.Context) ([]storage.Chunk, error) {
		return b.next.ClaimChunkedUpload(ctx, id)
	})
}

func (b *Backend) OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error) {
	return call(ctx, "OpenChunk", "", func(ctx context.Context) (io.ReadCloser, error) {
		return b.next.OpenChunk(ctx, id, name)
	})
}

func (b *Backend) RemoveChunk(ctx context.Context, id, name string) error {
	return call0(ctx, "RemoveChunk", "", func(ctx context.Context) error {
		return b.next.RemoveChunk(ctx, id, name)
	})
}

func (b *Backend) RemoveChunkedUpload(ctx context.Context, id string) error {
	return call0(ctx, "RemoveChunkedUpload", "", func(ctx context.Context) error {
		return b.next.RemoveChunkedUpload(ctx, id)
	})
}

func (b *Backend) ReserveChunkedUpload(ctx context.Context, id string, length int64) error {
	return call0(ctx, "ReserveChunkedUpload", "", func(ctx context.Context) error {
		return b.next.ReserveChunkedUpload(ctx, id, length)
	})
}

// The storage.Trash methods.

func (b *Backend) TrashItems(ctx context.Context, spaceID string) ([]storage.TrashItem, error) {
	return call(ctx, "TrashItems", spaceID, func(ctx context.Context) ([]storage.TrashItem, error) {
		return b.next.TrashItems(ctx, spaceID)
	})
}

func (b *Backend) TrashNode(ctx context.Context, spaceID, key string, names []string) (storage.TrashItem, storage.Node, error) {
	return call2(ctx, "TrashNode", spaceID, func(ctx context.Context) (storage.TrashItem, storage.Node, error) {
		return b.next.TrashNode(ctx, spaceID, key, names)
	})
}

func (b *Backend) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]storage.Node, error) {
	return call(ctx, "ReadTrashDir", spaceID, func(ctx context.Context) ([]storage.Node, error) {
		return b.next.ReadTrashDir(ctx, spaceID, key, folderID, after, limit)
	})
}

func (b *Backend) RestoreTrash(ctx context.Context, spaceID, key string, t storage.Transfer) (storage.Node, bool, error) {
	return call2(ctx, "RestoreTrash", spaceID, func(ctx context.Context) (storage.Node, bool, error) {
		return b.next.RestoreTrash(ctx, spaceID, key, t)
	})
}

func (b *Backend) PurgeTrash(ctx context.Context, spaceID, key string) error {
	return call0(ctx, "PurgeTrash", spaceID, func(ctx context.Context) error {
		return b.next.PurgeTrash(ctx, spaceID, key)
	})
}

func (b *Backend) EmptyTrash(ctx context.Context, spaceID string) error {
	return call0(ctx, "EmptyTrash", spaceID, func(ctx context.Context) error {
		return b.next.EmptyTrash(ctx, spaceID)
	})
}

// The storage.Versions methods.

func (b *Backend) FileVersions(ctx context.Context, spaceID, fileID string) ([]storage.Version, error) {
	return call(ctx, "FileVersions", spaceID, func(ctx context.Context) ([]storage.Version, error) {
		return b.next.FileVersions(ctx, spaceID, fileID)
	})
}

func (b *Backend) OpenVersion(ctx context.Context, spaceID, fileID, key string) (storage.Version, storage.Content, error) {
	return call2(ctx, "OpenVersion", spaceID, func(ctx context.Context) (storage.Version, storage.Content, error) {
		return b.next.OpenVersion(ctx, spaceID, fileID, key)
	})
}

func (b *Backend) RestoreVersion(ctx context.Context, spaceID, fileID, key string, c storage.Conditions) (storage.Node, error) {
	return call(ctx, "RestoreVersion", spaceID, func(ctx context.Context) (storage.Node, error) {
		return b.next.RestoreVersion(ctx, spaceID, fileID, key, c)
	})
}

// The storage.Retainer methods and the personal quota: settings pass
// through; an expiry pass is traced when its caller traces.

func (b *Backend) SetRetention(p storage.RetentionPolicy) { b.next.SetRetention(p) }

func (b *Backend) ExpireUndo(ctx context.Context) (int, error) {
	return call(ctx, "ExpireUndo", "", b.next.ExpireUndo)
}

func (b *Backend) SetPersonalQuota(bytes int64) { b.next.SetPersonalQuota(bytes) }

func (b *Backend) SetMaxNodes(n int64) { b.next.SetMaxNodes(n) }

// upload traces the commit of an upload. Its writes are not traced: they
// stream the request's body.
type upload struct {
	storage.Upload
	spaceID string
}

func (u *upload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	return call2(ctx, "Commit", u.spaceID, func(ctx context.Context) (storage.Node, bool, error) {
		return u.Upload.Commit(ctx, c)
	})
}

// ReadFrom keeps the store's own ReadFrom, which io.Copy prefers (both
// stores copy a body in blocks of their choosing through it).
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := u.Upload.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{u.Upload}, r)
}

// Interface guards.
var (
	_ storage.Backend       = (*Backend)(nil)
	_ storage.HealthChecker = (*Backend)(nil)
	_ Walker                = (*walkingBackend)(nil)
	_ io.ReaderFrom         = (*upload)(nil)
)

// The storage.Shares methods.

func (b *Backend) CreateShare(ctx context.Context, s storage.Share) (storage.Share, error) {
	return call(ctx, "CreateShare", s.SpaceID, func(ctx context.Context) (storage.Share, error) {
		return b.next.CreateShare(ctx, s)
	})
}

func (b *Backend) UpdateShare(ctx context.Context, id string, update storage.Share) (storage.Share, error) {
	return call(ctx, "UpdateShare", "", func(ctx context.Context) (storage.Share, error) {
		return b.next.UpdateShare(ctx, id, update)
	})
}

func (b *Backend) DeleteShare(ctx context.Context, id string) error {
	return call0(ctx, "DeleteShare", "", func(ctx context.Context) error {
		return b.next.DeleteShare(ctx, id)
	})
}

func (b *Backend) Share(ctx context.Context, id string) (storage.Share, error) {
	return call(ctx, "Share", "", func(ctx context.Context) (storage.Share, error) {
		return b.next.Share(ctx, id)
	})
}

func (b *Backend) LinkByToken(ctx context.Context, token string) (storage.Share, error) {
	return call(ctx, "LinkByToken", "", func(ctx context.Context) (storage.Share, error) {
		return b.next.LinkByToken(ctx, token)
	})
}

func (b *Backend) ItemShares(ctx context.Context, spaceID, nodeID string) ([]storage.Share, error) {
	return call(ctx, "ItemShares", spaceID, func(ctx context.Context) ([]storage.Share, error) {
		return b.next.ItemShares(ctx, spaceID, nodeID)
	})
}

func (b *Backend) SharesBy(ctx context.Context, creator string) ([]storage.Share, error) {
	return call(ctx, "SharesBy", "", func(ctx context.Context) ([]storage.Share, error) {
		return b.next.SharesBy(ctx, creator)
	})
}

func (b *Backend) SharesWith(ctx context.Context, u storage.User) ([]storage.Share, error) {
	return call(ctx, "SharesWith", "", func(ctx context.Context) ([]storage.Share, error) {
		return b.next.SharesWith(ctx, u)
	})
}

// The storage.Directory methods.

func (b *Backend) RememberUser(ctx context.Context, e storage.DirectoryEntry) error {
	return call0(ctx, "RememberUser", "", func(ctx context.Context) error {
		return b.next.RememberUser(ctx, e)
	})
}

func (b *Backend) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	return call(ctx, "DirectoryUser", "", func(ctx context.Context) (storage.DirectoryEntry, error) {
		return b.next.DirectoryUser(ctx, id)
	})
}

func (b *Backend) SearchUsers(ctx context.Context, query string, limit int) ([]storage.DirectoryEntry, error) {
	return call(ctx, "SearchUsers", "", func(ctx context.Context) ([]storage.DirectoryEntry, error) {
		return b.next.SearchUsers(ctx, query, limit)
	})
}

func (b *Backend) SearchGroups(ctx context.Context, query string, limit int) ([]string, error) {
	return call(ctx, "SearchGroups", "", func(ctx context.Context) ([]string, error) {
		return b.next.SearchGroups(ctx, query, limit)
	})
}
