// Package clientstub is a stand-in server for the desktop sync clients
// (owncloudcmd, nextcloudcmd) that answers every request at once from
// memory: a sync against it measures the client's own floor, what the
// client costs when the server costs nothing.
//
// It speaks what the clients need for a first sync, a no-op sync and a
// sync of changed files: status.php, the OCS capabilities and user (in
// davspaces' shapes, with its upload capabilities, so that the clients
// choose the same jobs: TUS for the ownCloud client, PUT for the Nextcloud
// client), PROPFIND of depth 0 and 1, MKCOL, PUT, TUS (POST with or
// without data, HEAD, PATCH, DELETE), DELETE and MOVE. Every user that
// sends Basic credentials has a tree of their own, whatever the password.
// Bodies are hashed and dropped, so memory stays flat: the tree keeps
// names, sizes, etags, ids and checksums, and a GET of a file is refused
// (the clients' uploads never read one back).
//
// It is no WebDAV server: no locks, no properties beyond the clients'
// listing, no conditional requests, no quota.
package clientstub

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

// Server is the stub. Its zero value is not usable: use New.
type Server struct {
	// bulk offers Nextcloud's bulk upload (dav.bulkupload).
	bulk    bool
	mu      sync.Mutex
	trees   map[string]*node // by user
	uploads map[string]*upload
	nextID  int64
	now     func() time.Time
}

// Option sets up a stub.
type Option func(*Server)

// WithBulkUpload offers Nextcloud's bulk upload (POST
// /remote.php/dav/bulk), which the Nextcloud client then uses for small
// files instead of a PUT each: its floor where davspaces offers it too.
func WithBulkUpload() Option { return func(s *Server) { s.bulk = true } }

// New returns an empty stub.
func New(opts ...Option) *Server {
	s := &Server{trees: map[string]*node{}, uploads: map[string]*upload{}, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// node is a file or folder of a user's tree.
type node struct {
	name     string
	parent   *node
	children map[string]*node // nil for a file
	id       string
	etag     string
	size     int64
	modTime  time.Time
	sums     checksum.Sums
}

func (n *node) isDir() bool { return n.children != nil }

// upload is an unfinished TUS upload: its bytes so far are hashed, not kept.
type upload struct {
	user   string
	target string // slash-separated path in the user's tree
	length int64
	offset int64
	mtime  time.Time
	sum    *checksum.Writer
}

// ServeHTTP answers a client request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/status.php":
		writeJSON(w, statusJSON)
	case strings.HasPrefix(p, "/ocs/"):
		s.serveOCS(w, r)
	case strings.HasPrefix(p, "/remote.php/"):
		s.serveDAV(w, r)
	default:
		http.NotFound(w, r)
	}
}

// user is the Basic user of r, or "" after answering 401.
func user(w http.ResponseWriter, r *http.Request) string {
	u, _, ok := r.BasicAuth()
	if !ok || u == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="clientstub"`)
		http.Error(w, "credentials needed", http.StatusUnauthorized)
		return ""
	}
	return u
}

// newNode makes a node with a fresh id and etag; the caller holds s.mu.
func (s *Server) newNode(name string, parent *node, dir bool) *node {
	s.nextID++
	n := &node{name: name, parent: parent, id: fileID(s.nextID), modTime: s.now()}
	if dir {
		n.children = map[string]*node{}
	}
	if parent != nil {
		parent.children[name] = n
	}
	s.touch(n)
	return n
}

// touch gives n and every folder above it a new etag, as a change below a
// folder changes the folder's etag for sync clients; the caller holds s.mu.
func (s *Server) touch(n *node) {
	s.nextID++
	for ; n != nil; n = n.parent {
		n.etag = fmt.Sprintf("%032x", s.nextID)
	}
}

// fileID is an id as long as davspaces' (storage, space and node UUIDs):
// over plain HTTP the Qt clients read response headers a byte per system
// call, so a shorter id would lower the floor unfairly.
func fileID(n int64) string {
	const space = "00000000-0000-4000-8000-000000000000$00000000-0000-4000-8000-000000000001!"
	return fmt.Sprintf("%s%08x-0000-4000-8000-%012x", space, n>>48, n)
}

// root is the tree of user, made on first use; the caller holds s.mu.
func (s *Server) root(user string) *node {
	t := s.trees[user]
	if t == nil {
		t = s.newNode("", nil, true)
		s.trees[user] = t
	}
	return t
}

// lookup finds the node at p (slash-separated, relative to the user's
// root) or nil; the caller holds s.mu.
func (s *Server) lookup(user, p string) *node {
	n := s.root(user)
	for _, name := range splitPath(p) {
		if n.children == nil {
			return nil
		}
		if n = n.children[name]; n == nil {
			return nil
		}
	}
	return n
}

// parentOf finds the folder that holds p and p's last name; nil when the
// folder does not exist. The caller holds s.mu.
func (s *Server) parentOf(user, p string) (*node, string) {
	names := splitPath(p)
	if len(names) == 0 {
		return nil, ""
	}
	dir := s.lookup(user, strings.Join(names[:len(names)-1], "/"))
	if dir == nil || !dir.isDir() {
		return nil, ""
	}
	return dir, names[len(names)-1]
}

func splitPath(p string) []string {
	var names []string
	for _, name := range strings.Split(p, "/") {
		if name != "" && name != "." {
			names = append(names, name)
		}
	}
	return names
}

// pathOf is n's slash-separated path below its root.
func pathOf(n *node) string {
	var names []string
	for ; n.parent != nil; n = n.parent {
		names = append(names, n.name)
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return strings.Join(names, "/")
}
