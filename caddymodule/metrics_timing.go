package caddymodule

import (
	"context"
	"io"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/traced"
)

// timedStore measures the latency of the store operations a request
// waits for, by operation, into the store's metrics. It is a decorator of
// the whole Store rather than timing at the davhandler boundary: the
// boundary would measure WebDAV methods, which Caddy's own
// http_request_duration_seconds does already, while a slow store shows
// here as the operation that is slow. Operations not overridden pass
// through untimed; the operation label is one of storeOperations, a
// fixed set.
type timedStore struct {
	storage.Backend
	m *storeMetrics
}

// walkingTimedStore is a timedStore over a store that resolves whole
// paths at once: it keeps davhandler's fast path.
type walkingTimedStore struct {
	timedStore
	walker traced.Walker
}

// withTiming returns b measuring its operations into m. It offers Walk
// when b does, so that davhandler's fast path stays, and Health always, a
// store without it being as healthy as its process; it wraps any
// storage.Backend, another decorator as well as a store.
func withTiming(b storage.Backend, m *storeMetrics) storage.Backend {
	t := timedStore{Backend: b, m: m}
	if w, ok := b.(traced.Walker); ok {
		return &walkingTimedStore{timedStore: t, walker: w}
	}
	return &t
}

// Unwrap returns the timed store, for callers that need what it offers
// beyond storage.Backend.
func (t *timedStore) Unwrap() storage.Backend { return t.Backend }

// Health asks the wrapped store's backends, when it has any.
func (t *timedStore) Health(ctx context.Context) error {
	if hc, ok := t.Backend.(storage.HealthChecker); ok {
		return hc.Health(ctx)
	}
	return nil
}

// since records that operation op, started at start, has ended. Called
// as `defer t.since(op, time.Now())`, it costs no allocation.
func (t *timedStore) since(op string, start time.Time) {
	t.m.observeOperation(op, time.Since(start))
}

func (w *walkingTimedStore) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	defer w.since("walk", time.Now())
	return w.walker.Walk(ctx, spaceID, nodeID, names)
}

func (t *timedStore) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	defer t.since("personal_space", time.Now())
	sp, err := t.Backend.PersonalSpace(ctx, u)
	if err == nil {
		t.m.sawSpace(sp)
	}
	return sp, err
}

func (t *timedStore) Space(ctx context.Context, id string) (storage.Space, error) {
	defer t.since("space", time.Now())
	return t.Backend.Space(ctx, id)
}

func (t *timedStore) Usage(ctx context.Context, spaceID string) (storage.Usage, error) {
	defer t.since("usage", time.Now())
	return t.Backend.Usage(ctx, spaceID)
}

func (t *timedStore) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	defer t.since("node", time.Now())
	return t.Backend.Node(ctx, spaceID, nodeID)
}

func (t *timedStore) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	defer t.since("child", time.Now())
	return t.Backend.Child(ctx, spaceID, parentID, name)
}

func (t *timedStore) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	defer t.since("read_dir", time.Now())
	return t.Backend.ReadDir(ctx, spaceID, folderID, after, limit)
}

func (t *timedStore) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	defer t.since("read_dir_props", time.Now())
	return t.Backend.ReadDirProps(ctx, spaceID, folderID, user, after, limit)
}

func (t *timedStore) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	defer t.since("mkdir", time.Now())
	return t.Backend.Mkdir(ctx, spaceID, parentID, name)
}

func (t *timedStore) Remove(ctx context.Context, spaceID, nodeID string, c storage.Conditions) error {
	defer t.since("remove", time.Now())
	return t.Backend.Remove(ctx, spaceID, nodeID, c)
}

func (t *timedStore) Move(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	defer t.since("move", time.Now())
	return t.Backend.Move(ctx, spaceID, tr)
}

func (t *timedStore) Copy(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	defer t.since("copy", time.Now())
	return t.Backend.Copy(ctx, spaceID, tr)
}

// Open times the opening only: reading the content is paced by the client.
func (t *timedStore) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	defer t.since("open", time.Now())
	return t.Backend.Open(ctx, spaceID, nodeID)
}

func (t *timedStore) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	defer t.since("props", time.Now())
	return t.Backend.Props(ctx, spaceID, nodeID, user)
}

func (t *timedStore) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	defer t.since("patch_props", time.Now())
	return t.Backend.PatchProps(ctx, spaceID, nodeID, patches)
}

// NewUpload returns an upload whose commit is timed; writing its content
// is paced by the client, so it is not.
func (t *timedStore) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	u, err := t.Backend.NewUpload(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	return &timedUpload{Upload: u, t: t}, nil
}

// CompleteSession times the commit of a resumable (TUS) upload.
func (t *timedStore) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	defer t.since("commit", time.Now())
	return t.Backend.CompleteSession(ctx, id, locks, modTime)
}

func (t *timedStore) CreateLock(ctx context.Context, l storage.Lock, lim storage.LockLimits) (storage.Lock, error) {
	defer t.since("create_lock", time.Now())
	return t.Backend.CreateLock(ctx, l, lim)
}

func (t *timedStore) LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	defer t.since("locks_on", time.Now())
	return t.Backend.LocksOn(ctx, spaceID, nodeID, below)
}

// AppPassword times the read of an app password, which a sign-in with
// one waits for (at most once per apppass.DefaultRecheck per password).
func (t *timedStore) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	defer t.since("app_password", time.Now())
	return t.Backend.AppPassword(ctx, id)
}

// timedUpload times the commit of an upload.
type timedUpload struct {
	storage.Upload
	t *timedStore
}

func (u *timedUpload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	defer u.t.since("commit", time.Now())
	return u.Upload.Commit(ctx, c)
}

// ReadFrom keeps the store's own ReadFrom, which some stores have to
// write content without a copy through a buffer.
func (u *timedUpload) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := u.Upload.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{u.Upload}, r)
}

// storeOperations is the operation label's set of values, in the order
// the README lists them.
var storeOperations = []string{
	"personal_space", "space", "usage", "walk", "node", "child", "read_dir", "read_dir_props",
	"mkdir", "remove", "move", "copy", "open", "props", "patch_props", "commit",
	"create_lock", "locks_on", "app_password",
}
