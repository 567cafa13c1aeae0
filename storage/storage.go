// Package storage defines what the WebDAV protocol needs from a spaces store:
// spaces with members, a tree of nodes addressed by stable ids, immutable file
// content committed atomically, and dead properties. It holds no
// implementation; the embedded store lives in storage/boltstore, and a
// distributed one (PostgreSQL + S3) implements the same interface.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

// Errors every Store returns (wrapped) so the protocol layer can map them to
// status codes without knowing the implementation.
var (
	// ErrNotFound: the space, node or parent does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a node with that name already exists and may not be replaced.
	ErrExists = errors.New("already exists")
	// ErrConflict: the operation does not fit the tree (missing parent, parent
	// is a file, folder moved into itself).
	ErrConflict = errors.New("conflict")
	// ErrPrecondition: an If-Match / If-None-Match condition failed.
	ErrPrecondition = errors.New("precondition failed")
	// ErrInsufficientStorage: the space quota or a limit on dead properties
	// would be exceeded, or the backing storage is full (ErrNoSpace).
	ErrInsufficientStorage = errors.New("insufficient storage")
	// ErrNoSpace: the backing storage itself is full (a full disk, a file
	// system or bucket quota). It is an ErrInsufficientStorage, but the
	// operator's problem rather than the user's.
	ErrNoSpace = fmt.Errorf("%w: no space left on the backing storage", ErrInsufficientStorage)
	// ErrCrossSpace: source and destination are in different spaces.
	ErrCrossSpace = errors.New("cannot move across spaces")
	// ErrInvalid: a malformed name or argument.
	ErrInvalid = errors.New("invalid argument")
	// ErrUnavailable: a backend the store depends on (a database, an object
	// store) cannot be reached right now. Nothing was changed; the same
	// request may succeed once the backend is back.
	ErrUnavailable = errors.New("storage backend temporarily unavailable")
)

// Kind tells files from folders.
type Kind uint8

// The node kinds.
const (
	KindFile Kind = iota + 1
	KindFolder
)

// SpaceType tells personal spaces from project spaces.
type SpaceType string

// The space types.
const (
	SpacePersonal SpaceType = "personal"
	SpaceProject  SpaceType = "project"
)

// Role is what a member may do in a space.
type Role uint8

// The member roles, weakest first.
const (
	RoleNone Role = iota
	RoleViewer
	RoleEditor
	RoleManager
)

// NoQuota is the Quota of a space without a limit.
const NoQuota int64 = -1

// Space is a tree of nodes with its own members. Its root node's id is the
// space id.
type Space struct {
	ID   string
	Type SpaceType
	Name string
	// Owner is the user id owning a personal space; empty for project spaces.
	Owner string
	// OwnerDisplayName is the owner's display name, if known.
	OwnerDisplayName string
	// Quota in bytes, or NoQuota.
	Quota int64
	// Members maps user ids to their role. Owners are implicit managers.
	Members map[string]Role
}

// GroupPrefix marks a group in Space.Members: "group:physicists" gives
// every member of the group physicists that role.
const GroupPrefix = "group:"

// RoleOf returns the role u has in the space: the strongest of the roles given
// to u and to u's groups, as u's Scope narrows it.
func (s Space) RoleOf(u User) Role {
	return u.Scope.limit(s.ID, s.memberRole(u))
}

// memberRole is RoleOf without the request's scope.
func (s Space) memberRole(u User) Role {
	if s.Type == SpacePersonal && s.Owner == u.ID {
		return RoleManager
	}
	role := RoleNone
	// A user id that looks like a group key must not pick up the group's role.
	if !strings.HasPrefix(u.ID, GroupPrefix) {
		role = s.Members[u.ID]
	}
	for _, g := range u.Groups {
		role = max(role, s.Members[GroupPrefix+g])
	}
	return role
}

// Node is a file or folder.
type Node struct {
	ID       string
	SpaceID  string
	ParentID string // empty for the space root
	Name     string // empty for the space root
	Kind     Kind
	// Size is the content length of a file, or the total size of all files
	// below a folder.
	Size int64
	// ModTime is a file's modification time, or the latest change anywhere
	// below a folder.
	ModTime time.Time
	// ETag is the unquoted entity tag; it changes with every change of the
	// node and, for folders, of anything below it.
	ETag        string
	ContentType string        // files only
	Checksums   checksum.Sums // files only
}

// IsFolder reports whether n is a folder.
func (n Node) IsFolder() bool { return n.Kind == KindFolder }

// PropName is the qualified name of a dead property.
type PropName struct {
	Space string // XML namespace
	Local string
}

// Property is a dead property with its raw inner XML.
type Property struct {
	Name PropName
	// User scopes the property to one user (favourites); empty means shared.
	User  string
	Value string
}

// Limits on dead properties. Every store enforces them so that a client
// cannot make a node's listing arbitrarily large or its keys too long for
// the backend. The per-node limits apply to each scope of a node on its own:
// the shared properties, and each user's (favourites), so one user cannot
// use up another's allowance.
const (
	// MaxPropNameBytes caps the namespace and the local name of a property,
	// each; a longer one is ErrInvalid.
	MaxPropNameBytes = 1024
	// MaxPropsPerNode caps the number of properties in one scope of a node;
	// more is ErrInsufficientStorage.
	MaxPropsPerNode = 256
	// MaxPropBytesPerNode caps the bytes of namespaces, local names and
	// values of the properties in one scope of a node; more is
	// ErrInsufficientStorage.
	MaxPropBytesPerNode = 256 << 10
)

// PropPatch sets (or with Remove, deletes) one dead property.
type PropPatch struct {
	Property
	Remove bool
}

// Conditions guard a change against concurrent ones.
type Conditions struct {
	// IfMatch, if set, is the unquoted etag the target must currently have.
	IfMatch string
	// IfNoneMatch fails the change if the target exists.
	IfNoneMatch bool
	// Locks, when set, are the lock tokens the request submitted: the store
	// refuses the change with a *LockedError (an ErrLocked) when a live lock
	// covering what it changes is not held, checked in the change's own
	// transaction so that a lock granted after the caller's check still
	// counts. Nil means the caller does not enforce locks (internal use, or
	// a server without locking); an empty LockTokens holds no lock.
	Locks *LockTokens
}

// LockTokens are the lock tokens a request submitted and the user who
// submitted them: a lock is held when its token is among Tokens and User
// took it (RFC 4918 §6.4: a token is only good for its owner).
//
// A change must hold, for every node it changes, one of the locks covering
// that node (its own or a Deep lock of an ancestor; holders of shared locks
// may each write). What each method changes follows RFC 4918 §7:
//
//   - Upload.Commit and CompleteSession: the file when it exists, else its
//     folder, which gains a name;
//   - Remove: the node, every locked node below it (unless a held Deep lock
//     covers the node) and its folder, which loses a name;
//   - Move: what Remove changes for the source, plus the target as Copy;
//   - Copy: an existing target as Remove changes it but its folder, else
//     the target's folder.
type LockTokens struct {
	User   string
	Tokens []string
}

// Holds reports whether the submitter holds l.
func (lt *LockTokens) Holds(l Lock) bool {
	return l.User == lt.User && slices.Contains(lt.Tokens, l.Token)
}

// Commit names where an upload becomes a file: the file NodeID wherever it
// is now, or else the file Name in folder ParentID.
type Commit struct {
	// NodeID, when set, names the file to replace, wherever a concurrent
	// MOVE has put it; the commit fails with ErrNotFound once it is gone
	// and with ErrConflict if it is a folder. ParentID and Name are ignored
	// then.
	NodeID   string
	ParentID string
	Name     string
	// ModTime is applied instead of the commit time when not zero.
	ModTime     time.Time
	ContentType string
	// Assembles, when set, is the id of the claimed chunked upload whose
	// parts are the content: the commit ends it in its own transaction,
	// before it checks the quota, so that the upload's reservation becomes
	// the file's use in one step (Commit.Ends).
	Assembles string
	// KeepSame makes a commit that would write the file again as it is
	// (Unchanged) change nothing: the file keeps its etag.
	KeepSame bool
	Conditions
}

// Transfer names the target of a COPY or MOVE.
type Transfer struct {
	NodeID      string
	NewParentID string
	NewName     string
	// Overwrite replaces an existing target; otherwise it is ErrExists.
	Overwrite bool
	// Shallow copies a folder without its children (COPY Depth 0).
	Shallow bool
	// Conditions guard the source node (the request URI of COPY and MOVE),
	// checked in the same transaction as the change; IfNoneMatch always
	// fails, since the source exists.
	Conditions
}

// User is the identity a personal space is created for.
type User struct {
	ID          string
	DisplayName string
	// Groups the user belongs to; they can grant space roles.
	Groups []string
	// Scope narrows what the request signed in as the user may reach (an
	// app password's); zero for every other sign-in.
	Scope Scope
}

// Store is a spaces store. Every method is safe for concurrent use. Node ids
// are stable across MOVE and restarts and unique within the store.
type Store interface {
	// StorageID is the id that prefixes resource ids of this store.
	StorageID() string
	// Usage tells what a space holds against its quota.
	UsageReader

	// PersonalSpace returns the personal space of u, creating it on first use.
	PersonalSpace(ctx context.Context, u User) (Space, error)
	// PutSpace creates or updates a project space with the given id.
	PutSpace(ctx context.Context, s Space) (Space, error)
	// Space returns the space with the given id.
	Space(ctx context.Context, id string) (Space, error)

	// Node returns a node of the space.
	Node(ctx context.Context, spaceID, nodeID string) (Node, error)
	// Child returns the child called name of folder parentID.
	Child(ctx context.Context, spaceID, parentID, name string) (Node, error)
	// ReadDir returns up to limit children of a folder, ordered by name,
	// starting after the name after. Callers page through large folders.
	ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]Node, error)
	// ReadDirProps is ReadDir with each child's dead properties (the shared
	// ones and those scoped to user), read in the same snapshot as the page
	// so that a child deleted meanwhile is either complete or absent.
	ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]Entry, error)

	// Mkdir creates an empty folder.
	Mkdir(ctx context.Context, spaceID, parentID, name string) (Node, error)
	// Remove deletes a node and everything below it.
	Remove(ctx context.Context, spaceID, nodeID string, c Conditions) error
	// Move renames or moves a node within its space; its id stays. It reports
	// whether an existing target was replaced.
	Move(ctx context.Context, spaceID string, t Transfer) (Node, bool, error)
	// Copy duplicates a node (and its subtree unless Shallow) with new ids.
	// It reports whether an existing target was replaced.
	Copy(ctx context.Context, spaceID string, t Transfer) (Node, bool, error)

	// NewUpload starts receiving the content of a file in the space. The
	// content is invisible until Commit.
	NewUpload(ctx context.Context, spaceID string) (Upload, error)
	// Open returns the content of a file and the node as of that content's
	// version, so headers describing it (ETag, checksums) match the bytes
	// even while the file is being replaced.
	Open(ctx context.Context, spaceID, nodeID string) (Node, Content, error)

	// Props returns the dead properties of a node: shared ones and those
	// scoped to user.
	Props(ctx context.Context, spaceID, nodeID, user string) ([]Property, error)
	// PatchProps applies all patches or none. Dead properties count
	// against the space's quota (Usage.Props): a patch that grows them
	// past it fails with ErrInsufficientStorage and changes nothing.
	PatchProps(ctx context.Context, spaceID, nodeID string, patches []PropPatch) error
}

// Entry is a node with its dead properties.
type Entry struct {
	Node
	Props []Property
}

// Upload receives file content. The checksums are computed as the bytes are
// written.
type Upload interface {
	io.Writer
	// Size is the number of bytes written so far.
	Size() int64
	// Checksums of the bytes written so far.
	Checksums() checksum.Sums
	// Commit makes the content visible as a file, atomically and durably,
	// creating or replacing it. It reports whether the file was created.
	Commit(ctx context.Context, c Commit) (Node, bool, error)
	// Discard drops the content. It is safe to call after Commit.
	Discard() error
}

// Content is the readable, seekable content of a file at one version. It
// stays readable while it is open even if the file is replaced.
type Content interface {
	io.ReadSeekCloser
}

// A Prefetcher is Content that a store reads from elsewhere, such as an
// object store. Prefetch starts reading at the current offset, so that the
// reader learns of an outage (ErrUnavailable) before it answers that the
// content follows; a later Read goes on from there.
type Prefetcher interface {
	Prefetch() error
}
