package observed

import (
	"context"
	"io"
	"maps"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// Op is a store operation, named as the method the call is of: the
// name of its span (SpanPrefix+Op) and its operation attribute.
type Op string

// The operations, one table of them: every method of storage.Backend
// that takes a context, an upload's Commit, and the methods of the
// optional interfaces the wrapper carries through.
const (
	// storage.Store
	OpUsage         Op = "Usage"
	OpPersonalSpace Op = "PersonalSpace"
	OpPutSpace      Op = "PutSpace"
	OpSpace         Op = "Space"
	OpSpaces        Op = "Spaces"
	OpNode          Op = "Node"
	OpChild         Op = "Child"
	OpReadDir       Op = "ReadDir"
	OpReadDirProps  Op = "ReadDirProps"
	OpMkdir         Op = "Mkdir"
	OpRemove        Op = "Remove"
	OpMove          Op = "Move"
	OpCopy          Op = "Copy"
	OpNewUpload     Op = "NewUpload"
	OpCommit        Op = "Commit"
	OpOpen          Op = "Open"
	OpProps         Op = "Props"
	OpPatchProps    Op = "PatchProps"
	// storage.LockStore
	OpCreateLock  Op = "CreateLock"
	OpRefreshLock Op = "RefreshLock"
	OpRemoveLock  Op = "RemoveLock"
	OpLocksOn     Op = "LocksOn"
	OpSpaceLocks  Op = "SpaceLocks"
	// storage.UploadSessions
	OpCreateSession   Op = "CreateSession"
	OpSession         Op = "Session"
	OpAppendSession   Op = "AppendSession"
	OpCompleteSession Op = "CompleteSession"
	OpRemoveSession   Op = "RemoveSession"
	// storage.ChunkedUploads
	OpCreateChunkedUpload  Op = "CreateChunkedUpload"
	OpChunkedUpload        Op = "ChunkedUpload"
	OpPutChunk             Op = "PutChunk"
	OpPutChunkAfter        Op = "PutChunkAfter"
	OpAppendChunks         Op = "AppendChunks"
	OpChunks               Op = "Chunks"
	OpClaimChunkedUpload   Op = "ClaimChunkedUpload"
	OpOpenChunk            Op = "OpenChunk"
	OpRemoveChunk          Op = "RemoveChunk"
	OpRemoveChunkedUpload  Op = "RemoveChunkedUpload"
	OpReserveChunkedUpload Op = "ReserveChunkedUpload"
	// storage.Trash
	OpTrashItems        Op = "TrashItems"
	OpTrashNode         Op = "TrashNode"
	OpReadTrashDir      Op = "ReadTrashDir"
	OpRestoreTrash      Op = "RestoreTrash"
	OpRestoreTrashBatch Op = "RestoreTrashBatch"
	OpPurgeTrash        Op = "PurgeTrash"
	OpEmptyTrash        Op = "EmptyTrash"
	// storage.Versions
	OpFileVersions   Op = "FileVersions"
	OpOpenVersion    Op = "OpenVersion"
	OpRestoreVersion Op = "RestoreVersion"
	// storage.Retainer
	OpExpireUndo Op = "ExpireUndo"
	// storage.Shares
	OpCreateShare Op = "CreateShare"
	OpUpdateShare Op = "UpdateShare"
	OpDeleteShare Op = "DeleteShare"
	OpShare       Op = "Share"
	OpLinkByToken Op = "LinkByToken"
	OpItemShares  Op = "ItemShares"
	OpSharesBy    Op = "SharesBy"
	OpSharesWith  Op = "SharesWith"
	// storage.Directory
	OpRememberUser  Op = "RememberUser"
	OpDirectoryUser Op = "DirectoryUser"
	OpSearchUsers   Op = "SearchUsers"
	OpSearchGroups  Op = "SearchGroups"
	// storage.Searcher
	OpSearchNames     Op = "SearchNames"
	OpSearchFavorites Op = "SearchFavorites"
	// storage.PreviewCache
	OpCachedPreview Op = "CachedPreview"
	OpKeepPreview   Op = "KeepPreview"
	// storage.AttemptBudgets
	OpAttemptWait   Op = "AttemptWait"
	OpTakeAttempt   Op = "TakeAttempt"
	OpReturnAttempt Op = "ReturnAttempt"
	// storage.AppPasswords
	OpCreateAppPassword Op = "CreateAppPassword"
	OpAppPasswords      Op = "AppPasswords"
	OpAppPassword       Op = "AppPassword"
	OpDeleteAppPassword Op = "DeleteAppPassword"
	OpTouchAppPassword  Op = "TouchAppPassword"
	// storage.LoginFlows
	OpCreateLoginFlow Op = "CreateLoginFlow"
	OpLoginFlow       Op = "LoginFlow"
	OpGrantLoginFlow  Op = "GrantLoginFlow"
	OpDeleteLoginFlow Op = "DeleteLoginFlow"
	OpTakeLoginFlow   Op = "TakeLoginFlow"
	// storage.MassDeletes
	OpOpenMassDelete    Op = "OpenMassDelete"
	OpExtendMassDelete  Op = "ExtendMassDelete"
	OpMassDeletes       Op = "MassDeletes"
	OpMassDelete        Op = "MassDelete"
	OpResolveMassDelete Op = "ResolveMassDelete"
	// Health, and the optional interfaces (features.go)
	OpWalk             Op = "Walk"
	OpHealth           Op = "Health"
	OpCheck            Op = "Check"
	OpCountOpenUploads Op = "CountOpenUploads"
)

// metrics are the latency histogram's operation labels of the operations
// requests wait for, a fixed set; the others are not measured. A commit
// is one, whether it ends a plain upload or a resumable one.
var metrics = map[Op]string{
	OpPersonalSpace: "personal_space", OpSpace: "space", OpUsage: "usage", OpWalk: "walk",
	OpNode: "node", OpChild: "child", OpReadDir: "read_dir", OpReadDirProps: "read_dir_props",
	OpMkdir: "mkdir", OpRemove: "remove", OpMove: "move", OpCopy: "copy", OpOpen: "open",
	OpProps: "props", OpPatchProps: "patch_props", OpCommit: "commit", OpCompleteSession: "commit",
	OpCreateLock: "create_lock", OpLocksOn: "locks_on", OpAppPassword: "app_password",
}

func (op Op) String() string { return string(op) }

// Metrics returns the measured operations and their latency labels.
func Metrics() map[Op]string { return maps.Clone(metrics) }

// Wrap returns b observed by hook: each call of an operation is seen by
// hook as it begins and ends (a nil hook sees nothing). The result offers
// the optional interfaces b has, exactly those (features.go), and Health
// always, a store without it being as healthy as its process.
func Wrap(b storage.Backend, hook Hook) storage.Backend {
	if hook == nil {
		hook = Hooks(nil)
	}
	o := &Backend{next: b, hook: hook}
	return o.offering(featuresOf(b))
}

// Backend is an observed storage.Backend. Each method with a context
// runs the wrapped store's between its hook's Begin and End; the others
// pass through.
type Backend struct {
	next storage.Backend
	hook Hook
}

// Unwrap returns the observed store, for callers that need what it
// offers beyond storage.Backend.
func (b *Backend) Unwrap() storage.Backend { return b.next }

// Health asks the store's backends, when it has any (a
// storage.HealthChecker); otherwise the store is healthy.
func (b *Backend) Health(ctx context.Context) error {
	hc, ok := b.next.(storage.HealthChecker)
	if !ok {
		return nil
	}
	ctx, obs := b.observe(ctx, OpHealth, "")
	return obs.end(hc.Health(ctx))
}

// The settings pass through.

func (b *Backend) StorageID() string                      { return b.next.StorageID() }
func (b *Backend) SetRetention(p storage.RetentionPolicy) { b.next.SetRetention(p) }
func (b *Backend) SetPersonalQuota(bytes int64)           { b.next.SetPersonalQuota(bytes) }
func (b *Backend) SetMaxNodes(n int64)                    { b.next.SetMaxNodes(n) }
func (b *Backend) SetPreviewCacheSize(bytes int64)        { b.next.SetPreviewCacheSize(bytes) }

// The storage.Store methods.

func (b *Backend) Usage(ctx context.Context, spaceID string) (storage.Usage, error) {
	ctx, obs := b.observe(ctx, OpUsage, spaceID)
	u, err := b.next.Usage(ctx, spaceID)
	return u, obs.end(err)
}

func (b *Backend) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	ctx, obs := b.observe(ctx, OpPersonalSpace, "")
	sp, err := b.next.PersonalSpace(ctx, u)
	obs.call.SpaceID = sp.ID // the space found, for the hooks' End
	return sp, obs.end(err)
}

func (b *Backend) PutSpace(ctx context.Context, s storage.Space) (storage.Space, error) {
	ctx, obs := b.observe(ctx, OpPutSpace, s.ID)
	sp, err := b.next.PutSpace(ctx, s)
	return sp, obs.end(err)
}

func (b *Backend) Space(ctx context.Context, id string) (storage.Space, error) {
	ctx, obs := b.observe(ctx, OpSpace, id)
	sp, err := b.next.Space(ctx, id)
	return sp, obs.end(err)
}

func (b *Backend) Spaces(ctx context.Context) ([]storage.Space, error) {
	ctx, obs := b.observe(ctx, OpSpaces, "")
	spaces, err := b.next.Spaces(ctx)
	return spaces, obs.end(err)
}

func (b *Backend) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	ctx, obs := b.observe(ctx, OpNode, spaceID)
	n, err := b.next.Node(ctx, spaceID, nodeID)
	return n, obs.end(err)
}

func (b *Backend) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	ctx, obs := b.observe(ctx, OpChild, spaceID)
	n, err := b.next.Child(ctx, spaceID, parentID, name)
	return n, obs.end(err)
}

func (b *Backend) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	ctx, obs := b.observe(ctx, OpReadDir, spaceID)
	nodes, err := b.next.ReadDir(ctx, spaceID, folderID, after, limit)
	return nodes, obs.end(err)
}

func (b *Backend) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	ctx, obs := b.observe(ctx, OpReadDirProps, spaceID)
	entries, err := b.next.ReadDirProps(ctx, spaceID, folderID, user, after, limit)
	return entries, obs.end(err)
}

func (b *Backend) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	ctx, obs := b.observe(ctx, OpMkdir, spaceID)
	n, err := b.next.Mkdir(ctx, spaceID, parentID, name)
	return n, obs.end(err)
}

func (b *Backend) Remove(ctx context.Context, spaceID, nodeID string, c storage.Conditions) error {
	ctx, obs := b.observe(ctx, OpRemove, spaceID)
	return obs.end(b.next.Remove(ctx, spaceID, nodeID, c))
}

func (b *Backend) Move(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	ctx, obs := b.observe(ctx, OpMove, spaceID)
	n, created, err := b.next.Move(ctx, spaceID, t)
	return n, created, obs.end(err)
}

func (b *Backend) Copy(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	ctx, obs := b.observe(ctx, OpCopy, spaceID)
	n, created, err := b.next.Copy(ctx, spaceID, t)
	return n, created, obs.end(err)
}

// NewUpload returns an upload whose Commit is observed too. Its writes
// are not: they stream the request's body, paced by the client.
func (b *Backend) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	ctx, obs := b.observe(ctx, OpNewUpload, spaceID)
	u, err := b.next.NewUpload(ctx, spaceID)
	if obs.end(err) != nil {
		return nil, err
	}
	return &upload{Upload: u, b: b, spaceID: spaceID}, nil
}

// upload observes the commit of an upload.
type upload struct {
	storage.Upload
	b       *Backend
	spaceID string
}

func (u *upload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	ctx, obs := u.b.observe(ctx, OpCommit, u.spaceID)
	n, created, err := u.Upload.Commit(ctx, c)
	return n, created, obs.end(err)
}

// HashInline passes the hint on to a store whose uploads take it
// (storage.LaterDigests); one whose uploads do not computes every digest
// inline, which the hint allows.
func (u *upload) HashInline(algs ...checksum.Algorithm) { storage.HashInline(u.Upload, algs...) }

// AwaitDigests waits for the digests a store computes after a commit
// (storage.DigestWaiter); a store that computes none later has none to
// wait for.
func (b *Backend) AwaitDigests(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	if w, ok := b.next.(storage.DigestWaiter); ok {
		return w.AwaitDigests(ctx, spaceID, nodeID)
	}
	return b.next.Node(ctx, spaceID, nodeID)
}

// ReadFrom keeps the store's own ReadFrom, which io.Copy prefers (both
// stores copy a body in blocks of their choosing through it).
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := u.Upload.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{u.Upload}, r)
}

func (b *Backend) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	ctx, obs := b.observe(ctx, OpOpen, spaceID)
	n, content, err := b.next.Open(ctx, spaceID, nodeID)
	return n, content, obs.end(err)
}

func (b *Backend) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	ctx, obs := b.observe(ctx, OpProps, spaceID)
	props, err := b.next.Props(ctx, spaceID, nodeID, user)
	return props, obs.end(err)
}

func (b *Backend) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	ctx, obs := b.observe(ctx, OpPatchProps, spaceID)
	return obs.end(b.next.PatchProps(ctx, spaceID, nodeID, patches))
}

// The storage.LockStore methods.

func (b *Backend) CreateLock(ctx context.Context, l storage.Lock, lim storage.LockLimits) (storage.Lock, error) {
	ctx, obs := b.observe(ctx, OpCreateLock, l.SpaceID)
	lock, err := b.next.CreateLock(ctx, l, lim)
	return lock, obs.end(err)
}

func (b *Backend) RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (storage.Lock, error) {
	ctx, obs := b.observe(ctx, OpRefreshLock, spaceID)
	l, err := b.next.RefreshLock(ctx, spaceID, token, timeout)
	return l, obs.end(err)
}

func (b *Backend) RemoveLock(ctx context.Context, spaceID, token string) error {
	ctx, obs := b.observe(ctx, OpRemoveLock, spaceID)
	return obs.end(b.next.RemoveLock(ctx, spaceID, token))
}

func (b *Backend) LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	ctx, obs := b.observe(ctx, OpLocksOn, spaceID)
	locks, err := b.next.LocksOn(ctx, spaceID, nodeID, below)
	return locks, obs.end(err)
}

func (b *Backend) SpaceLocks(ctx context.Context, spaceID string) ([]storage.Lock, error) {
	ctx, obs := b.observe(ctx, OpSpaceLocks, spaceID)
	locks, err := b.next.SpaceLocks(ctx, spaceID)
	return locks, obs.end(err)
}

// The storage.UploadSessions methods.

func (b *Backend) CreateSession(ctx context.Context, s storage.UploadSession) (storage.UploadSession, error) {
	ctx, obs := b.observe(ctx, OpCreateSession, s.SpaceID)
	session, err := b.next.CreateSession(ctx, s)
	return session, obs.end(err)
}

func (b *Backend) Session(ctx context.Context, id string) (storage.UploadSession, error) {
	ctx, obs := b.observe(ctx, OpSession, "")
	session, err := b.next.Session(ctx, id)
	return session, obs.end(err)
}

func (b *Backend) AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	ctx, obs := b.observe(ctx, OpAppendSession, "")
	session, err := b.next.AppendSession(ctx, id, offset, r, check)
	return session, obs.end(err)
}

func (b *Backend) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	ctx, obs := b.observe(ctx, OpCompleteSession, "")
	n, created, err := b.next.CompleteSession(ctx, id, locks, modTime)
	return n, created, obs.end(err)
}

func (b *Backend) RemoveSession(ctx context.Context, id string) error {
	ctx, obs := b.observe(ctx, OpRemoveSession, "")
	return obs.end(b.next.RemoveSession(ctx, id))
}

// The storage.ChunkedUploads methods.

func (b *Backend) CreateChunkedUpload(ctx context.Context, u storage.ChunkedUpload) (storage.ChunkedUpload, error) {
	ctx, obs := b.observe(ctx, OpCreateChunkedUpload, u.SpaceID)
	upload, err := b.next.CreateChunkedUpload(ctx, u)
	return upload, obs.end(err)
}

func (b *Backend) ChunkedUpload(ctx context.Context, id string) (storage.ChunkedUpload, error) {
	ctx, obs := b.observe(ctx, OpChunkedUpload, "")
	upload, err := b.next.ChunkedUpload(ctx, id)
	return upload, obs.end(err)
}

func (b *Backend) PutChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	ctx, obs := b.observe(ctx, OpPutChunk, "")
	chunk, err := b.next.PutChunk(ctx, id, name, r)
	return chunk, obs.end(err)
}

func (b *Backend) PutChunkAfter(ctx context.Context, id, name, prev string, r io.Reader) (storage.Chunk, error) {
	ctx, obs := b.observe(ctx, OpPutChunkAfter, "")
	chunk, err := b.next.PutChunkAfter(ctx, id, name, prev, r)
	return chunk, obs.end(err)
}

// AppendChunks hands the store the upload it made: the wrapper only
// observes its commit.
func (b *Backend) AppendChunks(ctx context.Context, up storage.Upload, id string, order []string) (int, error) {
	ctx, obs := b.observe(ctx, OpAppendChunks, "")
	if o, ok := up.(*upload); ok {
		up = o.Upload
	}
	n, err := b.next.AppendChunks(ctx, up, id, order)
	return n, obs.end(err)
}

func (b *Backend) Chunks(ctx context.Context, id string) ([]storage.Chunk, error) {
	ctx, obs := b.observe(ctx, OpChunks, "")
	chunks, err := b.next.Chunks(ctx, id)
	return chunks, obs.end(err)
}

func (b *Backend) ClaimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	ctx, obs := b.observe(ctx, OpClaimChunkedUpload, "")
	chunks, err := b.next.ClaimChunkedUpload(ctx, id)
	return chunks, obs.end(err)
}

func (b *Backend) OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error) {
	ctx, obs := b.observe(ctx, OpOpenChunk, "")
	r, err := b.next.OpenChunk(ctx, id, name)
	return r, obs.end(err)
}

func (b *Backend) RemoveChunk(ctx context.Context, id, name string) error {
	ctx, obs := b.observe(ctx, OpRemoveChunk, "")
	return obs.end(b.next.RemoveChunk(ctx, id, name))
}

func (b *Backend) RemoveChunkedUpload(ctx context.Context, id string) error {
	ctx, obs := b.observe(ctx, OpRemoveChunkedUpload, "")
	return obs.end(b.next.RemoveChunkedUpload(ctx, id))
}

func (b *Backend) ReserveChunkedUpload(ctx context.Context, id string, length int64) error {
	ctx, obs := b.observe(ctx, OpReserveChunkedUpload, "")
	return obs.end(b.next.ReserveChunkedUpload(ctx, id, length))
}

// The storage.Trash methods.

func (b *Backend) TrashItems(ctx context.Context, spaceID, after string, limit int) ([]storage.TrashItem, error) {
	ctx, obs := b.observe(ctx, OpTrashItems, spaceID)
	items, err := b.next.TrashItems(ctx, spaceID, after, limit)
	return items, obs.end(err)
}

func (b *Backend) TrashNode(ctx context.Context, spaceID, key string, names []string) (storage.TrashItem, storage.Node, error) {
	ctx, obs := b.observe(ctx, OpTrashNode, spaceID)
	item, n, err := b.next.TrashNode(ctx, spaceID, key, names)
	return item, n, obs.end(err)
}

func (b *Backend) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]storage.Node, error) {
	ctx, obs := b.observe(ctx, OpReadTrashDir, spaceID)
	nodes, err := b.next.ReadTrashDir(ctx, spaceID, key, folderID, after, limit)
	return nodes, obs.end(err)
}

func (b *Backend) RestoreTrash(ctx context.Context, spaceID, key string, t storage.Transfer) (storage.Node, bool, error) {
	ctx, obs := b.observe(ctx, OpRestoreTrash, spaceID)
	n, created, err := b.next.RestoreTrash(ctx, spaceID, key, t)
	return n, created, obs.end(err)
}

func (b *Backend) RestoreTrashBatch(ctx context.Context, spaceID string, restores []storage.TrashRestore) ([]error, int, error) {
	ctx, obs := b.observe(ctx, OpRestoreTrashBatch, spaceID)
	outcomes, done, err := b.next.RestoreTrashBatch(ctx, spaceID, restores)
	return outcomes, done, obs.end(err)
}

func (b *Backend) PurgeTrash(ctx context.Context, spaceID, key string) error {
	ctx, obs := b.observe(ctx, OpPurgeTrash, spaceID)
	return obs.end(b.next.PurgeTrash(ctx, spaceID, key))
}

func (b *Backend) EmptyTrash(ctx context.Context, spaceID string) error {
	ctx, obs := b.observe(ctx, OpEmptyTrash, spaceID)
	return obs.end(b.next.EmptyTrash(ctx, spaceID))
}

// The storage.Versions methods.

func (b *Backend) FileVersions(ctx context.Context, spaceID, fileID string) ([]storage.Version, error) {
	ctx, obs := b.observe(ctx, OpFileVersions, spaceID)
	versions, err := b.next.FileVersions(ctx, spaceID, fileID)
	return versions, obs.end(err)
}

func (b *Backend) OpenVersion(ctx context.Context, spaceID, fileID, key string) (storage.Version, storage.Content, error) {
	ctx, obs := b.observe(ctx, OpOpenVersion, spaceID)
	v, content, err := b.next.OpenVersion(ctx, spaceID, fileID, key)
	return v, content, obs.end(err)
}

func (b *Backend) RestoreVersion(ctx context.Context, spaceID, fileID, key string, c storage.Conditions) (storage.Node, error) {
	ctx, obs := b.observe(ctx, OpRestoreVersion, spaceID)
	n, err := b.next.RestoreVersion(ctx, spaceID, fileID, key, c)
	return n, obs.end(err)
}

// The storage.Retainer methods.

func (b *Backend) ExpireUndo(ctx context.Context) (int, error) {
	ctx, obs := b.observe(ctx, OpExpireUndo, "")
	n, err := b.next.ExpireUndo(ctx)
	return n, obs.end(err)
}

// The storage.Shares methods.

func (b *Backend) CreateShare(ctx context.Context, s storage.Share) (storage.Share, error) {
	ctx, obs := b.observe(ctx, OpCreateShare, s.SpaceID)
	share, err := b.next.CreateShare(ctx, s)
	return share, obs.end(err)
}

func (b *Backend) UpdateShare(ctx context.Context, id string, update storage.Share) (storage.Share, error) {
	ctx, obs := b.observe(ctx, OpUpdateShare, "")
	share, err := b.next.UpdateShare(ctx, id, update)
	return share, obs.end(err)
}

func (b *Backend) DeleteShare(ctx context.Context, id string) error {
	ctx, obs := b.observe(ctx, OpDeleteShare, "")
	return obs.end(b.next.DeleteShare(ctx, id))
}

func (b *Backend) Share(ctx context.Context, id string) (storage.Share, error) {
	ctx, obs := b.observe(ctx, OpShare, "")
	share, err := b.next.Share(ctx, id)
	return share, obs.end(err)
}

func (b *Backend) LinkByToken(ctx context.Context, token string) (storage.Share, error) {
	ctx, obs := b.observe(ctx, OpLinkByToken, "")
	share, err := b.next.LinkByToken(ctx, token)
	return share, obs.end(err)
}

func (b *Backend) ItemShares(ctx context.Context, spaceID, nodeID string) ([]storage.Share, error) {
	ctx, obs := b.observe(ctx, OpItemShares, spaceID)
	shares, err := b.next.ItemShares(ctx, spaceID, nodeID)
	return shares, obs.end(err)
}

func (b *Backend) SharesBy(ctx context.Context, creator string) ([]storage.Share, error) {
	ctx, obs := b.observe(ctx, OpSharesBy, "")
	shares, err := b.next.SharesBy(ctx, creator)
	return shares, obs.end(err)
}

func (b *Backend) SharesWith(ctx context.Context, u storage.User) ([]storage.Share, error) {
	ctx, obs := b.observe(ctx, OpSharesWith, "")
	shares, err := b.next.SharesWith(ctx, u)
	return shares, obs.end(err)
}

// The storage.Directory methods.

func (b *Backend) RememberUser(ctx context.Context, e storage.DirectoryEntry) error {
	ctx, obs := b.observe(ctx, OpRememberUser, "")
	return obs.end(b.next.RememberUser(ctx, e))
}

func (b *Backend) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	ctx, obs := b.observe(ctx, OpDirectoryUser, "")
	e, err := b.next.DirectoryUser(ctx, id)
	return e, obs.end(err)
}

func (b *Backend) SearchUsers(ctx context.Context, query string, limit int) ([]storage.DirectoryEntry, error) {
	ctx, obs := b.observe(ctx, OpSearchUsers, "")
	entries, err := b.next.SearchUsers(ctx, query, limit)
	return entries, obs.end(err)
}

func (b *Backend) SearchGroups(ctx context.Context, query string, limit int) ([]string, error) {
	ctx, obs := b.observe(ctx, OpSearchGroups, "")
	groups, err := b.next.SearchGroups(ctx, query, limit)
	return groups, obs.end(err)
}

// The storage.Searcher methods.

func (b *Backend) SearchNames(ctx context.Context, scope storage.SearchScope, pattern string) (storage.Found, error) {
	ctx, obs := b.observe(ctx, OpSearchNames, scope.SpaceID)
	found, err := b.next.SearchNames(ctx, scope, pattern)
	return found, obs.end(err)
}

func (b *Backend) SearchFavorites(ctx context.Context, scope storage.SearchScope, user string) (storage.Found, error) {
	ctx, obs := b.observe(ctx, OpSearchFavorites, scope.SpaceID)
	found, err := b.next.SearchFavorites(ctx, scope, user)
	return found, obs.end(err)
}

// The storage.PreviewCache methods.

func (b *Backend) CachedPreview(ctx context.Context, key storage.PreviewKey) ([]byte, string, error) {
	ctx, obs := b.observe(ctx, OpCachedPreview, "")
	data, contentType, err := b.next.CachedPreview(ctx, key)
	return data, contentType, obs.end(err)
}

func (b *Backend) KeepPreview(ctx context.Context, key storage.PreviewKey, data []byte, contentType string) error {
	ctx, obs := b.observe(ctx, OpKeepPreview, "")
	return obs.end(b.next.KeepPreview(ctx, key, data, contentType))
}

// The storage.AttemptBudgets methods.

func (b *Backend) AttemptWait(ctx context.Context, key string, budget storage.AttemptBudget, now time.Time) (time.Duration, error) {
	ctx, obs := b.observe(ctx, OpAttemptWait, "")
	wait, err := b.next.AttemptWait(ctx, key, budget, now)
	return wait, obs.end(err)
}

func (b *Backend) TakeAttempt(ctx context.Context, key string, budget storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	ctx, obs := b.observe(ctx, OpTakeAttempt, "")
	taken, wait, err := b.next.TakeAttempt(ctx, key, budget, now)
	return taken, wait, obs.end(err)
}

func (b *Backend) ReturnAttempt(ctx context.Context, key string, taken time.Time) error {
	ctx, obs := b.observe(ctx, OpReturnAttempt, "")
	return obs.end(b.next.ReturnAttempt(ctx, key, taken))
}

// The storage.AppPasswords methods.

func (b *Backend) CreateAppPassword(ctx context.Context, p storage.AppPassword) error {
	ctx, obs := b.observe(ctx, OpCreateAppPassword, "")
	return obs.end(b.next.CreateAppPassword(ctx, p))
}

func (b *Backend) AppPasswords(ctx context.Context, user string) ([]storage.AppPassword, error) {
	ctx, obs := b.observe(ctx, OpAppPasswords, "")
	passwords, err := b.next.AppPasswords(ctx, user)
	return passwords, obs.end(err)
}

func (b *Backend) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	ctx, obs := b.observe(ctx, OpAppPassword, "")
	p, err := b.next.AppPassword(ctx, id)
	return p, obs.end(err)
}

func (b *Backend) DeleteAppPassword(ctx context.Context, user, id string) error {
	ctx, obs := b.observe(ctx, OpDeleteAppPassword, "")
	return obs.end(b.next.DeleteAppPassword(ctx, user, id))
}

func (b *Backend) TouchAppPassword(ctx context.Context, id string, at time.Time) error {
	ctx, obs := b.observe(ctx, OpTouchAppPassword, "")
	return obs.end(b.next.TouchAppPassword(ctx, id, at))
}

// The storage.LoginFlows methods.

func (b *Backend) CreateLoginFlow(ctx context.Context, f storage.LoginFlow) error {
	ctx, obs := b.observe(ctx, OpCreateLoginFlow, "")
	return obs.end(b.next.CreateLoginFlow(ctx, f))
}

func (b *Backend) LoginFlow(ctx context.Context, loginKey string, now time.Time) (storage.LoginFlow, error) {
	ctx, obs := b.observe(ctx, OpLoginFlow, "")
	f, err := b.next.LoginFlow(ctx, loginKey, now)
	return f, obs.end(err)
}

func (b *Backend) GrantLoginFlow(ctx context.Context, loginKey, user string, sealed []byte, now time.Time) error {
	ctx, obs := b.observe(ctx, OpGrantLoginFlow, "")
	return obs.end(b.next.GrantLoginFlow(ctx, loginKey, user, sealed, now))
}

func (b *Backend) DeleteLoginFlow(ctx context.Context, loginKey string) error {
	ctx, obs := b.observe(ctx, OpDeleteLoginFlow, "")
	return obs.end(b.next.DeleteLoginFlow(ctx, loginKey))
}

func (b *Backend) TakeLoginFlow(ctx context.Context, pollKey string, now time.Time) (storage.LoginFlow, error) {
	ctx, obs := b.observe(ctx, OpTakeLoginFlow, "")
	f, err := b.next.TakeLoginFlow(ctx, pollKey, now)
	return f, obs.end(err)
}

// The storage.MassDeletes methods.

func (b *Backend) OpenMassDelete(ctx context.Context, e storage.MassDelete) error {
	ctx, obs := b.observe(ctx, OpOpenMassDelete, e.SpaceID)
	return obs.end(b.next.OpenMassDelete(ctx, e))
}

func (b *Backend) ExtendMassDelete(ctx context.Context, spaceID, id string, items []string, files int64, end time.Time) (storage.MassDelete, error) {
	ctx, obs := b.observe(ctx, OpExtendMassDelete, spaceID)
	e, err := b.next.ExtendMassDelete(ctx, spaceID, id, items, files, end)
	return e, obs.end(err)
}

func (b *Backend) MassDeletes(ctx context.Context, spaceID string) ([]storage.MassDelete, error) {
	ctx, obs := b.observe(ctx, OpMassDeletes, spaceID)
	events, err := b.next.MassDeletes(ctx, spaceID)
	return events, obs.end(err)
}

func (b *Backend) MassDelete(ctx context.Context, spaceID, id string) (storage.MassDelete, error) {
	ctx, obs := b.observe(ctx, OpMassDelete, spaceID)
	e, err := b.next.MassDelete(ctx, spaceID, id)
	return e, obs.end(err)
}

func (b *Backend) ResolveMassDelete(ctx context.Context, spaceID, id string, state storage.MassDeleteState, by string, at time.Time) (storage.MassDelete, error) {
	ctx, obs := b.observe(ctx, OpResolveMassDelete, spaceID)
	e, err := b.next.ResolveMassDelete(ctx, spaceID, id, state, by, at)
	return e, obs.end(err)
}

// Interface guards.
var (
	_ storage.Backend       = (*Backend)(nil)
	_ storage.HealthChecker = (*Backend)(nil)
	_ io.ReaderFrom         = (*upload)(nil)
)
