package davhandler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/preview"
	"github.com/davspaces/davspaces/storage"
)

// DefaultUploadTTL is how long an unfinished upload (TUS, or chunked) is
// kept unless configured.
const DefaultUploadTTL = 24 * time.Hour

// DefaultMaxOpenUploads caps the unfinished uploads (TUS sessions, NG and
// v1 chunked uploads together) one user may have open unless configured.
const DefaultMaxOpenUploads = 100

// DefaultMaxLockTimeout caps lock timeouts unless configured.
const DefaultMaxLockTimeout = 24 * time.Hour

// The caps on locks unless configured (storage.LockLimits): they bound
// what one user's locks make the store keep, and the d:lockdiscovery of one
// resource to DefaultMaxLocksCovering × (DefaultMaxLockOwnerBytes + about
// 400 bytes).
const (
	// DefaultMaxLockOwnerBytes caps a lock's d:owner, as re-encoded XML.
	// Clients send a name, a URL or an e-mail address there.
	DefaultMaxLockOwnerBytes = 4 << 10
	// DefaultMaxLocksCovering caps the locks covering one resource: room
	// for a few shared locks of people working together.
	DefaultMaxLocksCovering = 16
	// DefaultMaxLockBytesPerUser caps what the locks one user holds in one
	// space cost the store (storage.LockBytes). davfs2 locks every new file
	// until its delayed upload, so a copied folder holds a lock per file
	// for a while: its locks cost about 800 bytes each (a small owner, the
	// file's path), and 10,000 of them fit with paths of up to 900 bytes.
	// A count would either refuse such a copy or, at 4 KiB owners, let a
	// user keep far more.
	DefaultMaxLockBytesPerUser = 16 << 20
)

// DefaultMaxXMLBytes caps PROPFIND and PROPPATCH bodies unless configured.
const DefaultMaxXMLBytes = 1 << 20

// UserFunc returns the authenticated user of a request, if any.
type UserFunc func(*http.Request) (storage.User, bool)

// Config configures a Handler.
type Config struct {
	// Store holds the spaces. Required.
	Store storage.Store
	// User identifies the caller. Required.
	User UserFunc
	// AllowDepthInfinity permits PROPFIND with Depth: infinity.
	AllowDepthInfinity bool
	// MaxXMLBytes caps XML request bodies; 0 means DefaultMaxXMLBytes.
	MaxXMLBytes int64
	// Logger receives server-side failures; nil means no logging.
	Logger *zap.Logger
	// Locks keeps the WebDAV locks; nil means locking is not offered
	// (DAV: 1, 3, and LOCK/UNLOCK answer 501).
	Locks storage.LockStore
	// MaxLockTimeout caps the timeout a client may ask for; "Infinite"
	// gets this. 0 means DefaultMaxLockTimeout.
	MaxLockTimeout time.Duration
	// LockLimits cap locks; a zero field means its default
	// (DefaultMaxLockOwnerBytes, DefaultMaxLocksCovering,
	// DefaultMaxLockBytesPerUser), but for MaxPerUser, which counts no
	// locks unless set: the bytes bound what a user's locks keep.
	LockLimits storage.LockLimits
	// Uploads keeps resumable (TUS) uploads; nil means TUS is not offered.
	Uploads storage.UploadSessions
	// UploadTTL is how long an unfinished upload is kept after it was
	// created (its Upload-Expires); 0 means DefaultUploadTTL.
	UploadTTL time.Duration
	// MaxOpenUploads caps the unfinished uploads of one user, with or
	// without a quota; 0 means DefaultMaxOpenUploads, negative no cap.
	MaxOpenUploads int
	// Chunks keeps chunked uploads (Nextcloud chunking NG, ownCloud v1
	// chunks); nil means they are not offered. They expire after UploadTTL.
	Chunks storage.ChunkedUploads
	// BulkUpload serves Nextcloud's bulk upload at /dav/bulk (bulk.go);
	// false answers 404 there.
	BulkUpload bool
	// Trash serves the trash-bin of every space
	// (/dav/spaces/trash-bin/{space}); nil means the Store's own when it
	// keeps one, as a storage.Backend does. Without either the trash-bin
	// is not offered: its paths answer 404.
	Trash storage.Trash
	// Versions serves the versions of files (/dav/meta/{id}/v); nil means
	// the Store's own when it keeps them. Without either those paths
	// answer 404.
	Versions storage.Versions
	// Spaces are the spaces this handler serves and who sees them: any
	// project space in the store it does not serve is as absent as one the
	// user is not a member of (its data stays until it is configured
	// again). The zero value serves personal spaces only.
	Spaces storage.SpacePolicy
	// Page answers a browser's GET of a folder (webui.Handler); nil means
	// browsers get the WebDAV answers like every other client.
	Page Page
	// Shares keeps the public links served at /dav/public-files/{token};
	// nil means the Store's own when it keeps them. Directory tells the
	// groups of a link's creator, whose role decides whether the link is
	// live (storage.LiveShare); nil means the Store's own. Without both
	// public links are not offered: their paths answer 404.
	Shares    storage.Shares
	Directory storage.Directory
	// Previews makes the previews of files asked for with ?preview=1; nil
	// means none are offered (404). PreviewCache keeps them; nil means the
	// Store's own when it keeps them, else every preview is made anew.
	Previews     *preview.Generator
	PreviewCache storage.PreviewCache
	// ClientAddress names the client a request comes from, for the limit
	// on wrong link passwords (per link and client); nil, or an empty
	// answer, means the host of the request's RemoteAddr. Behind a proxy
	// it is the address the proxy forwarded for.
	ClientAddress func(*http.Request) string
	// Passwords runs the checks of link passwords under their budgets and
	// the node's bound on compares; nil means a guard of the Store's
	// budgets (storage.AttemptBudgets), or of this process's when it
	// keeps none.
	Passwords *passwordguard.Guard
	// MassDelete sets the mass-delete brake (massdelete.go); the zero
	// value is on, with the defaults. MassDeletes keeps its events; nil
	// means the Store's own, and without either the brake is off.
	MassDelete  MassDeleteRules
	MassDeletes storage.MassDeletes
	// Credential names the credential a request signed in with (an app
	// password's id, a token's client), "" for none or nil: with the
	// User-Agent it tells one client of a user from another.
	Credential func(*http.Request) string
	// MassDeleteOpened is told of every mass-delete event opened; nil
	// for none.
	MassDeleteOpened func(storage.MassDelete)
}

// Handler serves WebDAV requests under /dav/spaces, /dav/files, /webdav and
// their /remote.php forms.
type Handler struct {
	store         storage.Store
	user          UserFunc
	depthInfinity bool
	maxXMLBytes   int64
	logger        *zap.Logger
	// spaces are the spaces served and who sees them.
	spaces storage.SpacePolicy
	// locks keeps the WebDAV locks; nil when locking is not offered.
	locks          storage.LockStore
	maxLockTimeout time.Duration
	lockLimits     storage.LockLimits
	// uploads keeps the TUS uploads; nil when TUS is not offered.
	uploads   storage.UploadSessions
	uploadTTL time.Duration
	// maxOpenUploads caps a user's unfinished uploads (0: no cap).
	maxOpenUploads int
	// chunks keeps chunked uploads; nil when they are not offered.
	chunks storage.ChunkedUploads
	// bulkUpload: /dav/bulk is served.
	bulkUpload bool
	// trash keeps the trash-bins; nil when they are not offered.
	trash storage.Trash
	// versions keeps the versions of files; nil when they are not offered.
	versions storage.Versions
	// page answers browsers' GETs of folders; nil when there is no page.
	page Page
	// shares keeps the links; nil when public links are not offered.
	shares storage.Shares
	// shareReader judges whether a link is live.
	shareReader storage.ShareReader
	// passwords checks link passwords under their budgets.
	passwords *passwordguard.Guard
	// linkPasswords remembers the link passwords accepted lately.
	linkPasswords *passwordCache
	// clientAddress names a request's client; nil means RemoteAddr's host.
	clientAddress func(*http.Request) string
	// previews makes previews; nil when they are not offered.
	previews *preview.Generator
	// previewCache keeps previews; nil when the store keeps none.
	previewCache storage.PreviewCache
	// responseBuffers are the buffers of multistatus answers, reused.
	responseBuffers davxml.BufferPool
	// brake counts the bursts of deletions; nil when it is off.
	brake *brake
	// credential names a request's credential; nil for none.
	credential func(*http.Request) string
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("davhandler: a store is required")
	}
	if cfg.User == nil {
		return nil, errors.New("davhandler: a user function is required")
	}
	h := &Handler{
		store:          cfg.Store,
		user:           cfg.User,
		depthInfinity:  cfg.AllowDepthInfinity,
		maxXMLBytes:    cfg.MaxXMLBytes,
		logger:         cfg.Logger,
		spaces:         cfg.Spaces,
		locks:          cfg.Locks,
		maxLockTimeout: cfg.MaxLockTimeout,
		lockLimits:     withLockDefaults(cfg.LockLimits),
		uploads:        cfg.Uploads,
		uploadTTL:      cmp.Or(cfg.UploadTTL, DefaultUploadTTL),
		maxOpenUploads: max(cmp.Or(cfg.MaxOpenUploads, DefaultMaxOpenUploads), 0),
		chunks:         cfg.Chunks,
		bulkUpload:     cfg.BulkUpload,
		trash:          offered(cfg.Trash, cfg.Store),
		versions:       offered(cfg.Versions, cfg.Store),
		page:           cfg.Page,
		passwords:      cfg.Passwords,
		linkPasswords:  newPasswordCache(linkPasswordTTL, maxLinkPasswordsKnown),
		clientAddress:  cfg.ClientAddress,
		previews:       cfg.Previews,
		previewCache:   offered(cfg.PreviewCache, cfg.Store),
	}
	if directory := offered(cfg.Directory, cfg.Store); directory != nil {
		h.shares = offered(cfg.Shares, cfg.Store)
		h.shareReader = shareReader{Store: cfg.Store, Directory: directory}
	}
	if h.passwords == nil {
		var err error
		if h.passwords, err = defaultGuard(cfg.Store); err != nil {
			return nil, err
		}
	}
	if h.maxXMLBytes <= 0 {
		h.maxXMLBytes = DefaultMaxXMLBytes
	}
	if h.logger == nil {
		h.logger = zap.NewNop()
	}
	if h.maxLockTimeout <= 0 {
		h.maxLockTimeout = DefaultMaxLockTimeout
	}
	h.credential = cfg.Credential
	h.brake = newBrake(cfg.MassDelete, offered(cfg.MassDeletes, cfg.Store), cfg.Store, h.logger, cfg.MassDeleteOpened)
	return h, nil
}

// maxMemoryAttemptKeys bounds the keys of the budgets kept in memory
// when the store keeps none: about a megabyte.
const maxMemoryAttemptKeys = 10_000

// defaultGuard is the password guard of a handler configured with none:
// on the store's budgets, which every node shares, else on this
// process's.
func defaultGuard(store storage.Store) (*passwordguard.Guard, error) {
	budgets, ok := store.(storage.AttemptBudgets)
	if !ok {
		budgets = passwordguard.NewMemory(maxMemoryAttemptKeys)
	}
	return passwordguard.New(passwordguard.Options{Budgets: budgets})
}

// shareReader is what judging a link needs: the store's spaces and the
// directory's users.
type shareReader struct {
	storage.Store
	storage.Directory
}

// DirectoryUser is the directory's entry of user id; a store that keeps no
// directory (errors.ErrUnsupported) knows nobody, so that a link's creator
// is judged by their own membership, without groups.
func (r shareReader) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	e, err := r.Directory.DirectoryUser(ctx, id)
	if errors.Is(err, errors.ErrUnsupported) {
		return e, fmt.Errorf("directory of user %s: %w", id, storage.ErrNotFound)
	}
	return e, err
}

// offered returns configured, or else store as an I when it implements
// it (nil otherwise): what a store offers beyond storage.Store is found
// on it as pathWalker is, unless the configuration names another.
func offered[I any](configured I, store storage.Store) I {
	if any(configured) != nil {
		return configured
	}
	i, _ := store.(I)
	return i
}

// withLockDefaults fills the caps lim leaves at zero with their defaults.
func withLockDefaults(lim storage.LockLimits) storage.LockLimits {
	return storage.LockLimits{
		MaxOwnerBytes:   cmp.Or(lim.MaxOwnerBytes, DefaultMaxLockOwnerBytes),
		MaxCovering:     cmp.Or(lim.MaxCovering, DefaultMaxLocksCovering),
		MaxBytesPerUser: cmp.Or(lim.MaxBytesPerUser, DefaultMaxLockBytesPerUser),
		MaxPerUser:      lim.MaxPerUser,
	}
}
