package caddymodule

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// directoryCacheSize is how many users' last written directory entries a
// handler keeps in memory: enough that the users of a busy server cost no
// store access per request, bounded so that a stream of new users cannot
// grow it.
const directoryCacheSize = 10_000

// directoryWriter keeps the store's directory of users who signed in up
// to date (storage.Directory): after authentication, a request's user is
// written when storage.DirectoryStale says the kept entry is out of date.
// It remembers what it last wrote per user, so that an unchanged user
// costs no store access. It is safe for concurrent use.
type directoryWriter struct {
	dir    storage.Directory
	logger *zap.Logger
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // of *storage.DirectoryEntry
	order   *list.List               // most recently used first
	size    int
}

func newDirectoryWriter(dir storage.Directory, logger *zap.Logger, size int) *directoryWriter {
	return &directoryWriter{
		dir:     dir,
		logger:  throttled(logger, newWarnThrottle(nil)),
		now:     time.Now,
		entries: map[string]*list.Element{},
		order:   list.New(),
		size:    size,
	}
}

// remember writes u (with email) when what was last written of them is
// stale. A failure is logged and never fails the request: the entry is
// written again on the user's next request.
func (d *directoryWriter) remember(ctx context.Context, u storage.User, email string) {
	fresh, err := storage.NormalizeDirectoryEntry(storage.DirectoryEntry{
		ID: u.ID, DisplayName: u.DisplayName, Email: email, Groups: u.Groups,
	}, d.now())
	if err != nil {
		return // not a user id the directory keeps; the handlers refuse it
	}
	kept, found := d.kept(u.ID)
	if !storage.DirectoryStale(kept, found, fresh) {
		return
	}
	// The request's cancellation must not leave a half-made write behind
	// a client that went away; the store bounds its own time.
	if err := d.dir.RememberUser(context.WithoutCancel(ctx), fresh); err != nil {
		d.logger.Warn("remembering a signed-in user in the directory", zap.String("user", u.ID), zap.Error(err))
		return
	}
	d.keep(fresh)
}

// kept returns the entry last written of id, marking it recently used.
func (d *directoryWriter) kept(id string) (storage.DirectoryEntry, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.entries[id]
	if !ok {
		return storage.DirectoryEntry{}, false
	}
	d.order.MoveToFront(el)
	return *el.Value.(*storage.DirectoryEntry), true
}

// keep records e as written, forgetting the least recently used entry
// beyond the cache's size.
func (d *directoryWriter) keep(e storage.DirectoryEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.entries[e.ID]; ok {
		el.Value = &e
		d.order.MoveToFront(el)
		return
	}
	d.entries[e.ID] = d.order.PushFront(&e)
	for d.order.Len() > d.size {
		oldest := d.order.Back()
		d.order.Remove(oldest)
		delete(d.entries, oldest.Value.(*storage.DirectoryEntry).ID)
	}
}

// rememberCaller writes the request's signed-in user, if any, to the
// directory. A sign-in with an app password writes nothing: its user was
// read from the directory, and renewing Seen would keep a user removed
// at the provider alive (OIDCAuth.AppPasswordIdle).
func (dav *DAVSpaces) rememberCaller(r *http.Request) {
	if usedAppPassword(r) != "" {
		return
	}
	u, ok := dav.users(r)
	if !ok {
		return
	}
	dav.directory.remember(r.Context(), u, emailFromCaddy(r))
}
