package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

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
// while it serves. Like the rest of the admin API, it is for the
// administrator only: the copy holds every space's metadata.
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
	snap, err := openSnapshotter(key)
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
// key.
func openSnapshotter(key string) (snapshotter, error) {
	var (
		found snapshotter
		keys  []string
	)
	stores.Range(func(k, v any) bool {
		ks, _ := k.(string)
		keys = append(keys, ks)
		if ks != key {
			return true
		}
		if p, ok := v.(*pooledStore); ok {
			found, _ = p.Store.(snapshotter)
		}
		return false
	})
	if found != nil {
		return found, nil
	}
	if key != "" && slices.Contains(keys, key) {
		return nil, caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("the store %s is no embedded store: it has no database copy", key)}
	}
	slices.Sort(keys)
	return nil, caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("no store %q is open in this server; open: %s", key, strings.Join(keys, ", "))}
}

// Interface guards
var _ caddy.AdminRouter = SnapshotAdmin{}
