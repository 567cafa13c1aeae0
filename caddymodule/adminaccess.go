package caddymodule

import (
	"errors"
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2"
)

// The snapshot and check endpoints hand out every space's metadata (small
// files are inline in the database): only who may read the store's files
// may have them. Caddy's default admin listener, localhost:2019, is open
// to every local user, so on a TCP listener they answer only for a store
// whose handler sets admin_over_tcp; on a unix socket, which its mode
// (`admin unix//run/davspaces/admin.sock|0600`) keeps to its owner, they
// answer. Their errors name no path: a refused caller learns nothing of
// the data directories.

// errAdminOverTCP refuses a store's database on a TCP admin listener.
var errAdminOverTCP = caddy.APIError{
	HTTPStatus: http.StatusForbidden,
	Err: errors.New("the davspaces snapshot and check endpoints answer on a unix socket admin listener only " +
		"(admin unix//path|0600): a TCP one is open to every local user; " +
		"admin_over_tcp in the davspaces handler allows them there"),
}

// errNoOpenStore is the answer for a store key no open store has.
var errNoOpenStore = caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New("no such store is open in this server")}

// adminStore returns the open store whose key is key, if the request may
// have its database: it came through a unix socket, or the store allows
// TCP. On TCP an unknown store is refused as a store that does not allow
// it, so that the answer tells nothing about what is open.
func adminStore(r *http.Request, key string) (*pooledStore, error) {
	p := openPooledStore(key)
	if !overUnixSocket(r) && (p == nil || !p.adminOverTCP()) {
		return nil, errAdminOverTCP
	}
	if p == nil {
		return nil, errNoOpenStore
	}
	return p, nil
}

// openPooledStore returns the open store whose key is key, or nil.
func openPooledStore(key string) *pooledStore {
	var found *pooledStore
	stores.Range(func(k, v any) bool {
		if k != key {
			return true
		}
		found, _ = v.(*pooledStore)
		return false
	})
	return found
}

// overUnixSocket reports whether r came through a unix socket listener.
func overUnixSocket(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && (addr.Network() == "unix" || addr.Network() == "unixpacket")
}
