package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/caddyserver/caddy/v2"
)

// The admin endpoint `caddy davspaces backup` takes its database copy from
// when a running server holds the embedded store: bbolt locks its file for
// the one process that writes it, so no other process can read it while
// it serves, not even read-only.

func init() {
	caddy.RegisterModule(SnapshotAdmin{})
}

// snapshotPath is the admin API path of the database copies.
const snapshotPath = "/davspaces/snapshot"

// SnapshotAdmin is the admin API module serving GET
// /davspaces/snapshot?store=<data directory>: a consistent copy of the
// database of an embedded store this process has open, for backups taken
// while it serves. The copy holds every space's metadata: it is served on
// a unix socket admin listener only, unless the store allows TCP
// (adminStore).
type SnapshotAdmin struct{}

// CaddyModule returns the Caddy module information.
func (SnapshotAdmin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.davspaces",
		New: func() caddy.Module { return new(SnapshotAdmin) },
	}
}

// Routes returns the module's admin routes.
func (SnapshotAdmin) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: snapshotPath, Handler: caddy.AdminHandlerFunc(serveSnapshot)}}
}

// snapshotter is a store that copies its database while it serves: the
// embedded store.
type snapshotter interface {
	SnapshotTo(w io.Writer) (int64, error)
}

// serveSnapshot writes the database copy into a temporary file first and
// then sends that: the read transaction that makes the copy must not wait
// for a slow client, since a long one holds up the store's growth. The
// file is unlinked at once, so that nothing is left behind whatever
// happens.
func serveSnapshot(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method %s not allowed", r.Method)}
	}
	key := r.URL.Query().Get("store")
	snap, err := openSnapshotter(r, key)
	if err != nil {
		return err
	}
	spool, err := os.CreateTemp(key, ".snapshot-*")
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("spooling the database copy: %w", err)}
	}
	os.Remove(spool.Name())
	defer spool.Close()
	n, err := snap.SnapshotTo(spool)
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	_, err = io.Copy(w, spool)
	return err // the client went away: nothing to answer
}

// openSnapshotter returns the open embedded store whose data directory is
// key, if r may have its database (adminStore).
func openSnapshotter(r *http.Request, key string) (snapshotter, error) {
	p, err := adminStore(r, key)
	if err != nil {
		return nil, err
	}
	snap, ok := p.Store.(snapshotter)
	if !ok {
		return nil, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: errors.New("the store is no embedded store: it has no database copy")}
	}
	return snap, nil
}

// Interface guards
var _ caddy.AdminRouter = SnapshotAdmin{}
