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

// The admin endpoints of the `caddy davspaces` commands that reach a
// running server. `backup` takes its database copy from one when the
// server holds the embedded store: bbolt locks its file for the one
// process that writes it, so no other process can read it while it
// serves, not even read-only.

func init() {
	caddy.RegisterModule(AdminAPI{})
}

// snapshotPath is the admin API path of the database copies.
const snapshotPath = "/davspaces/snapshot"

// AdminAPI is the admin API module of the stores this process has open:
//
//   - GET /davspaces/snapshot?store=<data directory>: a consistent copy of
//     the database of an embedded store, for backups taken while it
//     serves (serveSnapshot);
//   - POST /davspaces/check?store=<store key>[&deep=true][&repair=true]: a
//     check of a store (serveCheck);
//   - GET (list) and DELETE (revoke)
//     /davspaces/apppasswords?store=<store key>&user=<id>[&id=<id>]: a
//     user's app passwords (serveAppPasswordsAdmin).
//
// Each holds what the store holds of every space: they are served on a
// unix socket admin listener only, unless the store allows TCP
// (adminStore).
type AdminAPI struct{}

// CaddyModule returns the Caddy module information.
func (AdminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.davspaces",
		New: func() caddy.Module { return new(AdminAPI) },
	}
}

// Routes returns the module's admin routes.
func (AdminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{
		{Pattern: snapshotPath, Handler: caddy.AdminHandlerFunc(serveSnapshot)},
		{Pattern: checkAdminPath, Handler: caddy.AdminHandlerFunc(serveCheck)},
		{Pattern: appPasswordsAdminPath, Handler: caddy.AdminHandlerFunc(serveAppPasswordsAdmin)},
	}
}

// methodNotAllowed is the admin API's answer to a method a path does not
// serve.
func methodNotAllowed(r *http.Request) error {
	return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method %s not allowed", r.Method)}
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
		return methodNotAllowed(r)
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
var _ caddy.AdminRouter = AdminAPI{}
