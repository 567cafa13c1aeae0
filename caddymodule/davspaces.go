// Package caddymodule registers the davspaces Caddy modules: the
// http.handlers.davspaces WebDAV handler and its Caddyfile directive. It is
// glue only; the protocol lives in davhandler and the data in storage.
package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/avatar"
	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/graph"
	"github.com/davspaces/davspaces/internal/samesite"
	"github.com/davspaces/davspaces/loginflow"
	"github.com/davspaces/davspaces/ocs"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/settings"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/webui"
)

func init() {
	caddy.RegisterModule(DAVSpaces{})
	httpcaddyfile.RegisterHandlerDirective("davspaces", parseDAVSpaces)
	// Ordered like other terminal handlers, so that no `order` line is
	// needed.
	httpcaddyfile.RegisterDirectiveOrder("davspaces", httpcaddyfile.Before, "respond")
}

// DAVSpaces serves the ownCloud-compatible WebDAV "spaces" interface under
// /dav/spaces, /dav/files, /webdav and their /remote.php forms, and beside
// it what clients read before they sync: /status.php, the OCS capabilities
// and user under /ocs/v1.php and /ocs/v2.php, and the spaces under
// /graph/v1.0/me; and what ownCloud Web reads while it starts: /app/list,
// the role definitions under /graph/v1beta1 and the settings service's
// lists under /api/v0/settings. Requests for other paths go to the next
// handler.
//
// The user comes from Caddy's authentication ({http.auth.user.id}, with
// {http.auth.user.name} and {http.auth.user.groups} when set, as oidc_auth
// does); requests without one are answered 401, except OPTIONS.
type DAVSpaces struct {
	// Root is the data directory of the embedded store, short for a bolt
	// store module with this root; it cannot be set beside StoreRaw.
	// Default: the "davspaces" folder in Caddy's data directory.
	Root string `json:"root,omitempty"`
	// StoreRaw is the store backend, a davspaces.stores module ("bolt" or
	// "postgres" in its "backend" key). Default: bolt on Root.
	StoreRaw json.RawMessage `json:"store,omitempty" caddy:"namespace=davspaces.stores inline_key=backend"`
	// StorageID prefixes every resource id. Default: generated once and kept
	// in the data directory.
	StorageID string `json:"storage_id,omitempty"`
	// BulkUpload is to which clients Nextcloud's bulk upload
	// (/remote.php/dav/bulk) is offered, in the capabilities'
	// dav.bulkupload, which makes Nextcloud's desktop client send its small
	// new files 100 to a request: "auto" to every client but Nextcloud's
	// desktop clients 3.4 to 3.8, which fail a whole batch at every sync
	// when it holds an empty file (nextcloud/desktop#4157, fixed in 3.9);
	// "all" to every client; "off" to none, and the endpoint is not served.
	// Default: auto.
	BulkUpload string `json:"bulk_upload,omitempty"`
	// AllowDepthInfinity permits PROPFIND with Depth: infinity (and without
	// Depth). Default: false, such requests are answered 400.
	AllowDepthInfinity bool `json:"allow_depth_infinity,omitempty"`
	// MaxXMLBytes caps PROPFIND and PROPPATCH bodies. Default: 1 MiB.
	MaxXMLBytes int64 `json:"max_xml_bytes,omitempty"`
	// PersonalQuotaBytes limits the size of every personal space; 0 means
	// no limit. The store has one personal quota, so every davspaces
	// handler on the same root must set the same.
	PersonalQuotaBytes int64 `json:"personal_quota_bytes,omitempty"`
	// MaxNodes caps the files, folders, trash entries and versions of a
	// space without a quota; a space with a quota holds one per 4 KiB of
	// it, at least 1,000 (storage.NodeCap). Default: 1,000,000
	// (storage.DefaultMaxNodes). The store has one, as it has one personal
	// quota.
	MaxNodes int `json:"max_nodes,omitempty"`
	// LockTimeoutMax caps the timeout of a WebDAV lock: a client asking
	// for more, or for "Infinite", gets this. Default: 24h
	// (davhandler.DefaultMaxLockTimeout).
	LockTimeoutMax caddy.Duration `json:"lock_timeout_max,omitempty"`
	// LockOwnerMaxBytes caps a lock's d:owner (as re-encoded XML); a LOCK
	// with a larger one is answered 400. Default: 4 KiB
	// (davhandler.DefaultMaxLockOwnerBytes).
	LockOwnerMaxBytes int64 `json:"lock_owner_max_bytes,omitempty"`
	// MaxLocksPerResource caps the locks covering one file or folder; a LOCK
	// beyond is answered 423. Default: 16
	// (davhandler.DefaultMaxLocksCovering).
	MaxLocksPerResource int `json:"max_locks_per_resource,omitempty"`
	// AdminOverTCP lets the admin endpoints of `caddy davspaces backup` and
	// `check` (the store's database, what a check finds) answer on a TCP
	// admin listener, which every local user can reach; by default they
	// answer on a unix socket admin listener only.
	AdminOverTCP bool `json:"admin_over_tcp,omitempty"`
	// MaxLockBytesPerUser caps what the locks one user holds in one space
	// cost the store (storage.LockBytes: a lock's text and a fixed
	// overhead); a LOCK beyond is answered 423. Default: 16 MiB
	// (davhandler.DefaultMaxLockBytesPerUser), 10,000 locks of davfs2.
	MaxLockBytesPerUser int64 `json:"max_lock_bytes_per_user,omitempty"`
	// MaxLocksPerUser also caps the number of locks one user holds in one
	// space, when set; a LOCK beyond is answered 423. Default: none. It
	// was the cap before MaxLockBytesPerUser (then 128, which davfs2
	// outgrew): a configuration that sets it keeps the count it asked for.
	MaxLocksPerUser int `json:"max_locks_per_user,omitempty"`
	// UploadTTL is how long an unfinished resumable (TUS) upload is kept
	// after its creation; its bytes are dropped then. Default: 24h
	// (davhandler.DefaultUploadTTL).
	UploadTTL caddy.Duration `json:"upload_ttl,omitempty"`
	// TUSMaxChunkSize is the largest PATCH of a resumable (TUS) upload
	// that clients are told to send (files.tus_support.max_chunk_size):
	// ownCloud Web uploads with TUS only when it is above 0, and splits
	// files in chunks of this size. Default: 10 MB
	// (DefaultTUSMaxChunkSize), what oCIS announces.
	TUSMaxChunkSize int64 `json:"tus_max_chunk_size,omitempty"`
	// MaxOpenUploads caps the unfinished uploads (TUS, chunking NG, v1
	// chunks together) of one user, with or without a quota. Default:
	// 100 (davhandler.DefaultMaxOpenUploads).
	MaxOpenUploads int `json:"max_open_uploads,omitempty"`
	// TrashRetention is how long a deleted file or folder is kept in its
	// space's trash, from where it can be restored; 0 keeps no trash (a
	// DELETE destroys at once). Default: 30 days
	// (storage.DefaultTrashRetention).
	TrashRetention *caddy.Duration `json:"trash_retention,omitempty"`
	// Versions is how the content a file had before it was replaced is
	// kept. Default: 30 days, at most 100 versions per file.
	Versions *VersionsRetention `json:"versions,omitempty"`
	// Spaces are the project spaces and their members. Only these are
	// served: a project space taken out of the configuration keeps its
	// data and comes back when it is configured again.
	Spaces []ProjectSpace `json:"spaces,omitempty"`
	// Web configures the browser page. Default: served.
	Web *WebSettings `json:"web,omitempty"`
	// Previews are the limits of the previews of files, on by default.
	Previews *PreviewSettings `json:"previews,omitempty"`
	// MassDelete configures the mass-delete brake (docs/undo.md); nil
	// means on, with the defaults.
	MassDelete *MassDeleteSettings `json:"mass_delete,omitempty"`

	handler *davhandler.Handler
	ocs     *ocs.Handler
	appPass *apppass.Service
	// loginFlow serves Nextcloud's Login Flow v2; its page is the
	// browser page's.
	loginFlow *loginflow.Handler
	// unlistAppPasswords takes the store's app password checks off the
	// configuration's list (appPasswordStores).
	unlistAppPasswords func()
	graph              *graph.Handler
	settings           *settings.Handler
	avatars            *avatar.Handler
	web                *webui.Handler // nil when the page is off
	store              *pooledStore
	// users reads the signed-in user Caddy's authentication set;
	// directory writes them to the store's directory of users.
	users     func(*http.Request) (storage.User, bool)
	directory *directoryWriter
	storeKey  string      // the backend's key in the pool
	claim     *storeClaim // this handler's say in the store's personal quota and retention
	logger    *zap.Logger
}

// ProjectSpace declares a project space. Project spaces have members but no
// owner.
type ProjectSpace struct {
	// ID of the space. Default: derived from the name, so it stays the same
	// as long as the name does.
	ID string `json:"id,omitempty"`
	// Name is shown as the space root's name.
	Name string `json:"name"`
	// QuotaBytes limits the space's size; 0 means no limit.
	QuotaBytes int64 `json:"quota_bytes,omitempty"`
	// Managers, Editors and Viewers are user ids, or groups written
	// "group:<name>". Viewers can only read, editors can change content,
	// managers can do everything.
	Managers []string `json:"managers,omitempty"`
	Editors  []string `json:"editors,omitempty"`
	Viewers  []string `json:"viewers,omitempty"`
	// TrashRetention and Versions override the handler's for this space
	// alone; what they leave unset is the handler's.
	TrashRetention *caddy.Duration    `json:"trash_retention,omitempty"`
	Versions       *VersionsRetention `json:"versions,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (DAVSpaces) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.davspaces",
		New: func() caddy.Module { return new(DAVSpaces) },
	}
}

// spaceNamespace derives stable project space ids from names.
var spaceNamespace = uuid.MustParse("0b7b5cf4-6a2e-4c59-9a51-4f3b8c6d2e10")

// Provision opens the store, applies the personal quota and declares the
// project spaces; the handler serves only the spaces declared here. The
// store keeps the WebDAV locks and the resumable (TUS) and chunked uploads
// too, so they outlive restarts and are shared by the configurations a
// reload overlaps: an upload started before a reload continues after it.
func (dav *DAVSpaces) Provision(ctx caddy.Context) error {
	dav.logger = ctx.Logger()
	registerHTTP2Windows(ctx)
	// Caddy validates after provisioning, but a rejected configuration must
	// not have declared its spaces in the store already.
	if err := dav.Validate(); err != nil {
		return err
	}
	store, err := dav.takeStore(ctx)
	if err != nil {
		return err
	}
	// Every module of one configuration is provisioned with the same
	// context, and each reload brings a new one: it tells handlers of one
	// configuration from those of the configuration being replaced.
	claim, ignored, err := store.claimSettings(storeClaim{
		config:        ctx.Context,
		personalQuota: dav.PersonalQuotaBytes,
		maxNodes:      int64(dav.MaxNodes),
		retention:     dav.retentionPolicy(),
		adminOverTCP:  dav.AdminOverTCP,
	})
	if err != nil {
		return fmt.Errorf("davspaces store %s: %w", dav.storeKey, err)
	}
	dav.claim = claim
	if len(ignored) > 0 {
		dav.logger.Warn("another davspaces handler on this store, earlier in the configuration, set a different trash or versions retention: the earlier handler's applies",
			zap.String("store", dav.storeKey), zap.Strings("ignored", ignored))
	}
	projectSpaces, err := dav.declareSpaces(ctx, store)
	if err != nil {
		return err
	}
	if err := registerStoreMetrics(ctx.GetMetricsRegistry(), store, dav.storeKey, projectSpaces); err != nil {
		return fmt.Errorf("davspaces metrics: %w", err)
	}
	// One policy says which spaces are served and who sees them, to
	// every front-end alike.
	spaces := storage.NewSpacePolicy(projectSpaces)
	users := userFromCaddy(dav.logger)
	dav.users = users
	if dav.web, err = newWebPage(dav.Web); err != nil {
		return err
	}
	// Every store call a request makes is traced and timed (observe).
	served := observe(store.Store, store.metrics)
	bulkUpload, _ := ocs.ParseBulkUpload(dav.BulkUpload) // validated above
	dav.directory = newDirectoryWriter(served, dav.logger, directoryCacheSize)
	dav.handler, err = davhandler.New(davhandler.Config{
		Store:              served,
		Locks:              served,
		Uploads:            served,
		Chunks:             served,
		BulkUpload:         bulkUpload != ocs.BulkUploadOff,
		UploadTTL:          time.Duration(dav.UploadTTL),
		MaxOpenUploads:     dav.MaxOpenUploads,
		User:               users,
		AllowDepthInfinity: dav.AllowDepthInfinity,
		MaxXMLBytes:        dav.MaxXMLBytes,
		MaxLockTimeout:     time.Duration(dav.LockTimeoutMax),
		LockLimits: storage.LockLimits{
			MaxOwnerBytes:   int(dav.LockOwnerMaxBytes),
			MaxCovering:     dav.MaxLocksPerResource,
			MaxBytesPerUser: dav.MaxLockBytesPerUser,
			MaxPerUser:      dav.MaxLocksPerUser,
		},
		Logger:       dav.logger,
		Spaces:       spaces,
		Page:         dav.davPage(),
		Previews:     dav.Previews.generator(),
		PreviewCache: dav.Previews.cache(served),
		// Wrong link passwords are limited per client as Caddy sees it
		// (trusted_proxies honoured).
		ClientAddress: clientKey,
		Passwords:     store.passwords,
		// The brake counts a user's clients apart by the app password they
		// signed in with, else by their User-Agent.
		MassDelete:       dav.MassDelete.rules(),
		Credential:       usedCredential,
		MassDeleteOpened: func(storage.MassDelete) { store.metrics.massDeletes.Inc() },
	})
	if err != nil {
		return err
	}
	// The capabilities advertise what the WebDAV handler serves: TUS
	// always, the bulk upload when configured, chunked uploads when the
	// store keeps them, the trash and versions when the store keeps them
	// for any of this handler's spaces.
	_, chunked := any(store.Store).(storage.ChunkedUploads)
	dav.appPass, err = apppass.New(apppass.Config{
		Store:        served,
		User:         users,
		UsedPassword: usedAppPassword,
		Revoked:      store.appPasswords.Forget,
		Tree:         served,
		Spaces:       spaces,
	})
	if err != nil {
		return err
	}
	dav.unlistAppPasswords = appPasswordStores.add(ctx.Context, store.appPasswords, served)
	dav.loginFlow, err = loginflow.New(loginflow.Config{
		Flows:         served,
		AppPasswords:  dav.appPass,
		Budgets:       served,
		ClientAddress: clientKey,
		Page:          dav.loginFlowPage(),
		Logger:        dav.logger,
	})
	if err != nil {
		return err
	}
	dav.ocs, err = ocs.New(ocs.Config{
		User:           users,
		Email:          emailFromCaddy,
		Status:         ocs.DefaultStatus(moduleVersion()),
		LoginFlow:      dav.web != nil, // the page signs Login Flow v2's users in
		Health:         storage.NewHealthProbe(store.Store).Check,
		TUS:            true,
		ChunkedUploads: chunked,
		BulkUpload:     bulkUpload,
		Trash:          keepsAny(dav.claim.granted, storage.Retention.KeepsTrash),
		Versions:       keepsAny(dav.claim.granted, storage.Retention.KeepsVersions),
		PreviewTypes:   dav.Previews.types(),
		Store:          served,
		Spaces:         spaces,
		Members:        dav.configuredMembers(),
		Logger:         dav.logger,
		Sharing:        true,
		AppPasswords:   dav.appPass,
		// Web uploads with TUS only with a chunk size; favourites are
		// kept and listed by the WebDAV handler.
		TUSMaxChunkSize: dav.tusMaxChunkSize(),
		Favorites:       true,
	})
	if err != nil {
		return err
	}
	dav.graph, err = graph.New(graph.Config{
		Store:     served,
		Shares:    served,
		Directory: served,
		User:      users,
		Email:     emailFromCaddy,
		Spaces:    spaces,
		Logger:    dav.logger,
	})
	if err != nil {
		return err
	}
	dav.settings, err = settings.New(settings.Config{User: users, Sharing: true, Favorites: true})
	if err != nil {
		return err
	}
	dav.avatars, err = avatar.New(avatar.Config{User: users, Directory: served})
	return err
}

// declareSpaces puts the configured project spaces in the store and returns
// their ids. A store whose backends cannot be reached yet (a database that
// is down) gets them in the background once it can: until then it answers
// 503, and Caddy's other sites start all the same.
func (dav *DAVSpaces) declareSpaces(ctx caddy.Context, store *pooledStore) ([]string, error) {
	ids := make([]string, 0, len(dav.Spaces))
	var later []storage.Space
	for _, ps := range dav.Spaces {
		space := ps.space()
		ids = append(ids, space.ID)
		_, err := store.PutSpace(ctx, space)
		switch {
		case errors.Is(err, storage.ErrUnavailable):
			later = append(later, space)
		case err != nil:
			return nil, fmt.Errorf("declaring space %q: %w", ps.Name, err)
		}
	}
	if len(later) > 0 {
		dav.logger.Warn("the store cannot be reached: its project spaces are declared once it can", zap.Int("spaces", len(later)))
		go dav.declareLater(ctx, store, later)
	}
	return ids, nil
}

// declareRetry is how often declareLater tries again.
const declareRetry = 500 * time.Millisecond

// declareLater puts spaces in the store once it can be reached, until the
// configuration is unloaded.
func (dav *DAVSpaces) declareLater(ctx caddy.Context, store *pooledStore, spaces []storage.Space) {
	tick := time.NewTicker(declareRetry)
	defer tick.Stop()
	for len(spaces) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for len(spaces) > 0 {
			_, err := store.PutSpace(ctx, spaces[0])
			if errors.Is(err, storage.ErrUnavailable) {
				break
			}
			if err != nil {
				dav.logger.Error("declaring a project space", zap.String("space", spaces[0].Name), zap.Error(err))
			}
			spaces = spaces[1:]
		}
	}
	dav.logger.Info("the project spaces are declared")
}

// takeStore loads the store backend, resolves the storage id and takes the
// backend's store from the pool.
func (dav *DAVSpaces) takeStore(ctx caddy.Context) (*pooledStore, error) {
	backend, err := dav.loadStoreBackend(ctx)
	if err != nil {
		return nil, err
	}
	storageID := caddy.NewReplacer().ReplaceAll(dav.StorageID, "")
	if err := checkID("storage_id", storageID); err != nil {
		return nil, err
	}
	store, err := openStore(ctx, backend, storageID, dav.logger)
	if err != nil {
		return nil, err
	}
	dav.storeKey, dav.store = backend.StoreKey(), store
	if storageID != "" && store.StorageID() != storageID {
		return nil, fmt.Errorf("storage_id %q differs from %q, which the store %s is open with: restart Caddy to change it", storageID, store.StorageID(), dav.storeKey)
	}
	return store, nil
}

// checkNotNegative refuses a size, count or duration below zero, which
// only a JSON configuration can set: zero means the default.
func (dav *DAVSpaces) checkNotNegative() error {
	for _, s := range []struct {
		name  string
		value int64
	}{
		{"max_xml_bytes", dav.MaxXMLBytes},
		{"personal_quota_bytes", dav.PersonalQuotaBytes},
		{"max_nodes", int64(dav.MaxNodes)},
		{"lock_timeout_max", int64(dav.LockTimeoutMax)},
		{"upload_ttl", int64(dav.UploadTTL)},
		{"tus_max_chunk_size", dav.TUSMaxChunkSize},
		{"max_open_uploads", int64(dav.MaxOpenUploads)},
	} {
		if s.value < 0 {
			return fmt.Errorf("%s must not be negative", s.name)
		}
	}
	return nil
}

// Validate checks the configuration.
func (dav *DAVSpaces) Validate() error {
	if err := dav.checkNotNegative(); err != nil {
		return err
	}
	if _, err := ocs.ParseBulkUpload(dav.BulkUpload); err != nil {
		return err
	}
	if dav.LockOwnerMaxBytes < 0 || dav.LockOwnerMaxBytes > math.MaxInt32 {
		return fmt.Errorf("lock_owner_max_bytes must be between 0 and %d", math.MaxInt32)
	}
	if dav.MaxLocksPerResource < 0 || dav.MaxLocksPerUser < 0 || dav.MaxLockBytesPerUser < 0 {
		return fmt.Errorf("max_locks_per_resource, max_locks_per_user and max_lock_bytes_per_user must not be negative")
	}
	if dav.Root != "" && dav.StoreRaw != nil {
		return fmt.Errorf("root and store are both set: give the directory as the bolt store's root")
	}
	if err := checkRetention(dav.TrashRetention, dav.Versions); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, ps := range dav.Spaces {
		if ps.Name == "" {
			return fmt.Errorf("a project space needs a name")
		}
		id := ps.space().ID
		if err := checkID("space id", id); err != nil {
			return fmt.Errorf("project space %q: %w", ps.Name, err)
		}
		if seen[id] {
			return fmt.Errorf("project space %q: id %s is declared twice", ps.Name, id)
		}
		seen[id] = true
		if err := checkRetention(ps.TrashRetention, ps.Versions); err != nil {
			return fmt.Errorf("project space %q: %w", ps.Name, err)
		}
		for _, m := range slices.Concat(ps.Managers, ps.Editors, ps.Viewers) {
			if m == "" || m == storage.GroupPrefix {
				return fmt.Errorf("project space %q: member %q names nobody", ps.Name, m)
			}
		}
	}
	return nil
}

// Cleanup withdraws this handler's personal quota and retention and
// releases the store.
func (dav *DAVSpaces) Cleanup() error {
	if dav.storeKey == "" {
		return nil
	}
	if dav.unlistAppPasswords != nil {
		dav.unlistAppPasswords()
		dav.unlistAppPasswords = nil
	}
	dav.store.releaseSettings(dav.claim)
	_, err := stores.Delete(dav.storeKey)
	dav.storeKey, dav.store, dav.claim = "", nil, nil
	return err
}

// checkID refuses ids that could not be told apart inside a resource id
// (<storage>$<space>!<node>) or a path.
func checkID(what, id string) error {
	if !resourceid.Separable(id) {
		return fmt.Errorf("%s %q must not contain $, ! or /", what, id)
	}
	return nil
}

// ServeHTTP serves the browser page, the WebDAV, OCS, Graph and settings
// paths and passes everything else on. A state change a browser sends for
// another site is refused before any of them sees it.
func (dav *DAVSpaces) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	r = withForwardedScheme(r)
	if served, err := dav.serveSignedOut(w, r); served {
		return err
	}
	for _, route := range []func(*http.Request) (http.Handler, bool){dav.webRoute, dav.avatars.Route, dav.handler.Route, dav.appPass.Route, dav.loginFlow.Route, dav.ocs.Route, dav.graph.Route, dav.settings.Route} {
		if h, ok := route(r); ok {
			if samesite.Forged(r) {
				h = http.HandlerFunc(refuseForged)
			}
			dav.rememberCaller(r)
			dav.store.metrics.serveCounted(h, w, r)
			return nil
		}
	}
	return next.ServeHTTP(w, r)
}

// refuseForged answers a state change sent for another site (see package
// samesite) with 403 and the WebDAV error body.
func refuseForged(w http.ResponseWriter, r *http.Request) {
	davhandler.WriteError(w, r, http.StatusForbidden, "a request from another site may not change anything here: send a Bearer token")
}

// space turns the declaration into a storage space.
func (ps ProjectSpace) space() storage.Space {
	id := ps.ID
	if id == "" {
		id = uuid.NewSHA1(spaceNamespace, []byte(ps.Name)).String()
	}
	quota := storage.NoQuota
	if ps.QuotaBytes > 0 {
		quota = ps.QuotaBytes
	}
	members := map[string]storage.Role{}
	for _, group := range []struct {
		users []string
		role  storage.Role
	}{{ps.Viewers, storage.RoleViewer}, {ps.Editors, storage.RoleEditor}, {ps.Managers, storage.RoleManager}} {
		for _, u := range group.users {
			members[u] = group.role
		}
	}
	return storage.Space{ID: id, Type: storage.SpaceProject, Name: ps.Name, Quota: quota, Members: members}
}

// configuredMembers are the members the configuration names in any
// project space (user ids, and groups as storage.GroupPrefix + name): the
// people one may share with beside those who signed in.
func (dav *DAVSpaces) configuredMembers() []string {
	var members []string
	for _, ps := range dav.Spaces {
		members = append(members, ps.Viewers...)
		members = append(members, ps.Editors...)
		members = append(members, ps.Managers...)
	}
	return members
}

func parseDAVSpaces(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	return parseHandler(h, new(DAVSpaces))
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	davspaces [<matcher>] {
//		root           <directory>
//		store          <backend> { … }
//		storage_id     <id>
//		depth_infinity
//		max_xml_body   <size>
//		personal_quota <size>
//		max_nodes      <count>
//		lock_timeout_max <duration>
//		lock_owner_max <size>
//		locks_per_resource <count>
//		lock_bytes_per_user <size>
//		admin_over_tcp
//		locks_per_user <count>
//		upload_ttl     <duration>
//		max_open_uploads <count>
//		tus_max_chunk_size <size>
//		trash_retention <duration>|off
//		versions off | versions {
//			keep <duration>
//			max  <count>
//		}
//		space <name> {
//			id      <id>
//			quota   <size>
//			manager <user...>
//			editor  <user...>
//			viewer  <user...>
//			trash_retention <duration>|off
//			versions off | versions { … }
//		}
//		web on|off | web {
//			client_id <id>
//			issuer    <url>
//			scopes    <scope...>
//		}
//		previews on|off | previews {
//			sizes          <pixels...>
//			max_pixels     <count>
//			max_memory     <size>
//			max_concurrent <count>
//			timeout        <duration>
//		}
//		mass_delete off | mass_delete {
//			files  <count>
//			share  <percent>%|off
//			window <duration>
//			hold
//		}
//	}
func (dav *DAVSpaces) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "subdirective", dav.options(), dav.checkCaddyfile)
}

// checkCaddyfile refuses settings that contradict each other.
func (dav *DAVSpaces) checkCaddyfile() error {
	if dav.Root != "" && dav.StoreRaw != nil {
		return errors.New("root and store are both set: write root inside `store bolt { … }`")
	}
	return nil
}

// options are the davspaces subdirectives.
func (dav *DAVSpaces) options() options {
	return options{
		"root":                set(&dav.Root, oneArg),
		"store":               dav.parseStore,
		"storage_id":          set(&dav.StorageID, oneArg),
		"depth_infinity":      set(&dav.AllowDepthInfinity, flagArg),
		"bulk_upload":         set(&dav.BulkUpload, bulkUploadArg),
		"max_xml_body":        set(&dav.MaxXMLBytes, sizeArg),
		"personal_quota":      set(&dav.PersonalQuotaBytes, sizeArg),
		"max_nodes":           set(&dav.MaxNodes, countArg),
		"lock_timeout_max":    set(&dav.LockTimeoutMax, positiveDurationArg),
		"lock_owner_max":      set(&dav.LockOwnerMaxBytes, positiveSizeArg),
		"locks_per_resource":  set(&dav.MaxLocksPerResource, countArg),
		"admin_over_tcp":      set(&dav.AdminOverTCP, flagArg),
		"lock_bytes_per_user": set(&dav.MaxLockBytesPerUser, positiveSizeArg),
		"locks_per_user":      set(&dav.MaxLocksPerUser, countArg),
		"upload_ttl":          set(&dav.UploadTTL, positiveDurationArg),
		"tus_max_chunk_size":  set(&dav.TUSMaxChunkSize, positiveSizeArg),
		"max_open_uploads":    set(&dav.MaxOpenUploads, positiveIntArg),
		"trash_retention":     set(&dav.TrashRetention, parseTrashRetention),
		"versions":            set(&dav.Versions, parseVersions),
		"web":                 set(&dav.Web, parseWeb),
		"previews":            set(&dav.Previews, parsePreviews),
		"mass_delete":         set(&dav.MassDelete, parseMassDelete),
		"space":               add(&dav.Spaces, parseSpace),
	}
}

// bulkUploadArg reads the bulk_upload setting, refusing one ocs would not
// serve.
func bulkUploadArg(d *caddyfile.Dispenser) (string, error) {
	v, err := oneArg(d)
	if err != nil {
		return "", err
	}
	if _, err := ocs.ParseBulkUpload(v); err != nil {
		return "", d.Err(err.Error())
	}
	return v, nil
}

// parseSpace reads one space block.
func parseSpace(d *caddyfile.Dispenser) (ProjectSpace, error) {
	var ps ProjectSpace
	if !d.Args(&ps.Name) {
		return ps, d.ArgErr()
	}
	err := parseBlock(d, "space subdirective", ps.options())
	return ps, err
}

// options are the subdirectives of a space block.
func (ps *ProjectSpace) options() options {
	return options{
		"id":              set(&ps.ID, oneArg),
		"quota":           set(&ps.QuotaBytes, sizeArg),
		"manager":         allArgs(&ps.Managers),
		"editor":          allArgs(&ps.Editors),
		"viewer":          allArgs(&ps.Viewers),
		"trash_retention": set(&ps.TrashRetention, parseTrashRetention),
		"versions":        set(&ps.Versions, parseVersions),
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*DAVSpaces)(nil)
	_ caddy.Validator             = (*DAVSpaces)(nil)
	_ caddy.CleanerUpper          = (*DAVSpaces)(nil)
	_ caddyhttp.MiddlewareHandler = (*DAVSpaces)(nil)
	_ caddyfile.Unmarshaler       = (*DAVSpaces)(nil)
)

// DefaultTUSMaxChunkSize is the TUS chunk size announced by default: 10 MB,
// as oCIS announces it.
const DefaultTUSMaxChunkSize = 10_000_000

// tusMaxChunkSize is the TUS chunk size to announce.
func (dav *DAVSpaces) tusMaxChunkSize() int64 {
	if dav.TUSMaxChunkSize == 0 {
		return DefaultTUSMaxChunkSize
	}
	return dav.TUSMaxChunkSize
}
