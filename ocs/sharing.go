package ocs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// sharingPrefix is where ownCloud's sharing API lives below
// /ocs/v{1,2}.php; the mobile apps (owncloud/android's owncloudComLibrary,
// owncloud/ios-sdk) call it for shares and links.
const sharingPrefix = "/apps/files_sharing/api/v1"

// maxFormBytes bounds the form of a POST or PUT: a handful of short fields.
const maxFormBytes = 64 << 10

// sharing answers the files_sharing endpoints from the store.
type sharing struct {
	store   storage.Backend
	user    UserFunc
	spaces  storage.SpacePolicy
	members []string // user ids the configuration names
	groups  []string // group names the configuration names
	log     *zap.Logger
	now     func() time.Time
}

func newSharing(cfg Config) *sharing {
	if cfg.Store == nil {
		return nil
	}
	s := &sharing{store: cfg.Store, user: cfg.User, spaces: cfg.Spaces, log: cfg.Logger, now: time.Now}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	for _, m := range cfg.Members {
		if g, ok := strings.CutPrefix(m, storage.GroupPrefix); ok {
			s.groups = append(s.groups, g)
		} else if m != "" {
			s.members = append(s.members, m)
		}
	}
	slices.Sort(s.members)
	s.members = slices.Compact(s.members)
	slices.Sort(s.groups)
	s.groups = slices.Compact(s.groups)
	return s
}

// ocsError is a refusal the sharing API answers in the envelope.
type ocsError struct {
	status  int
	message string
}

func (e *ocsError) Error() string { return e.message }

func refuse(status int, format string, args ...any) *ocsError {
	return &ocsError{status: status, message: fmt.Sprintf(format, args...)}
}

// sharingEndpoint answers one request of an authenticated user.
type sharingEndpoint func(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error

// route picks the endpoint and method below sharingPrefix.
func (s *sharing) route(v apiVersion, endpoint string) http.Handler {
	endpoint = strings.TrimSuffix(endpoint, "/")
	methods := map[string]sharingEndpoint{}
	switch {
	case endpoint == "/shares":
		methods[http.MethodGet] = s.listShares
		methods[http.MethodPost] = s.createShare
	case endpoint == "/sharees":
		methods[http.MethodGet] = s.sharees
	case strings.HasPrefix(endpoint, "/shares/") && !strings.Contains(endpoint[len("/shares/"):], "/"):
		id := endpoint[len("/shares/"):]
		methods[http.MethodGet] = func(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
			return s.getShare(w, r, v, u, id)
		}
		methods[http.MethodPut] = func(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
			return s.updateShare(w, r, v, u, id)
		}
		methods[http.MethodDelete] = func(w http.ResponseWriter, r *http.Request, v apiVersion, u storage.User) error {
			return s.deleteShare(w, r, v, u, id)
		}
	default:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, r, v, http.StatusNotFound, "Invalid query, please check the syntax")
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer, errors included, depends on the credentials.
		w.Header().Add("Vary", "Authorization")
		serve, ok := methods[r.Method]
		if !ok && r.Method == http.MethodHead {
			serve, ok = methods[http.MethodGet]
		}
		if !ok {
			w.Header().Set("Allow", allowed(methods))
			writeError(w, r, v, http.StatusMethodNotAllowed, "Method not allowed")
			return
		}
		user, ok := s.user(r)
		if !admitted(w, r, v, user, ok) {
			return
		}
		if err := serve(w, r, v, user); err != nil {
			s.fail(w, r, v, err)
		}
	})
}

func allowed(methods map[string]sharingEndpoint) string {
	names := make([]string, 0, len(methods)+1)
	for m := range methods {
		names = append(names, m)
	}
	if methods[http.MethodGet] != nil {
		names = append(names, http.MethodHead)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// fail answers err: a refusal as it says, a store's refusal by its kind,
// anything else as a server failure, logged.
func (s *sharing) fail(w http.ResponseWriter, r *http.Request, v apiVersion, err error) {
	var refusal *ocsError
	switch {
	case errors.As(err, &refusal):
		writeError(w, r, v, refusal.status, refusal.message)
	case errors.Is(err, storage.ErrTooManyShares):
		writeError(w, r, v, http.StatusInsufficientStorage, "You have too many shares")
	case errors.Is(err, storage.ErrInvalid):
		writeError(w, r, v, http.StatusBadRequest, invalidMessage(err))
	case errors.Is(err, storage.ErrExists):
		writeError(w, r, v, http.StatusForbidden, "The item is already shared with them")
	case errors.Is(err, storage.ErrUnavailable):
		writeError(w, r, v, http.StatusServiceUnavailable, "The storage is unavailable, try again later")
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads an answer.
	default:
		s.log.Error("sharing API", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		writeError(w, r, v, http.StatusInternalServerError, "Internal error")
	}
}

// invalidMessage is the words of a store's ErrInvalid refusal: the rule
// that refused, without the wrapping that names ids.
func invalidMessage(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "+storage.ErrInvalid.Error()); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// errNoItem is the answer for a path or id that names nothing the caller
// may see: the same whether it exists elsewhere or not at all.
var errNoItem = refuse(http.StatusNotFound, "Wrong path, file/folder doesn't exist")

// errNoShare is the answer for a share id that names no share the caller
// may see.
var errNoShare = refuse(http.StatusNotFound, "Wrong share ID, share doesn't exist")

// item is a file or folder with its space.
type item struct {
	space storage.Space
	node  storage.Node
}

// mayShare reports whether u may share items of space and manage their
// shares (storage.SpacePolicy.MayShare); refusals say why: 404 when u
// cannot see the space, 403 when u sees it without the right to share.
func (s *sharing) mayShare(space storage.Space, u storage.User) error {
	err := s.spaces.MayShare(u, space)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrForbidden):
		return refuse(http.StatusForbidden, "You are not allowed to share items of this space")
	}
	return errNoItem
}

// resolveItem finds the item a request names: space_ref, a resource id
// (<storage>$<space>!<node>) or a space id (<storage>$<space>), which path
// is then relative to; or else path in u's personal space ("/Documents/x",
// as the apps send it). Anything u cannot see is errNoItem.
func (s *sharing) resolveItem(ctx context.Context, u storage.User, ref, p string) (item, error) {
	if storage.ValidPathSize(p) != nil {
		return item{}, refuse(http.StatusBadRequest, "A path has at most %d bytes and %d names", storage.MaxPathBytes, storage.MaxPathSegments)
	}
	var space storage.Space
	baseID := ""
	if ref != "" {
		spaceID, nodeID, ok := s.parseRef(ref)
		if !ok {
			return item{}, errNoItem
		}
		sp, err := s.store.Space(ctx, spaceID)
		if errors.Is(err, storage.ErrNotFound) {
			return item{}, errNoItem
		}
		if err != nil {
			return item{}, err
		}
		space, baseID = sp, nodeID
		if nodeID != "" {
			p = ""
		}
	} else {
		if p == "" {
			return item{}, refuse(http.StatusBadRequest, "Please specify a file or folder path")
		}
		sp, err := s.store.PersonalSpace(ctx, u)
		if err != nil {
			return item{}, err
		}
		space = sp
	}
	if s.spaces.Visible(u, space) != nil {
		return item{}, errNoItem
	}
	if baseID == "" {
		baseID = space.ID
	}
	node, err := s.store.Node(ctx, space.ID, baseID)
	if err != nil {
		return item{}, notFoundAs(err, errNoItem)
	}
	for _, name := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if name == "" {
			continue
		}
		if !node.IsFolder() {
			return item{}, errNoItem
		}
		if node, err = s.store.Child(ctx, space.ID, node.ID, name); err != nil {
			return item{}, notFoundAs(err, errNoItem)
		}
	}
	if reached, err := u.Scope.ReachesNode(ctx, s.store, node); err != nil || !reached {
		return item{}, cmp.Or(err, error(errNoItem))
	}
	return item{space: space, node: node}, nil
}

// parseRef splits a resource or space id of this store.
func (s *sharing) parseRef(ref string) (spaceID, nodeID string, ok bool) {
	id, err := resourceid.Parse(ref)
	if err != nil || !id.Of(s.store.StorageID()) {
		return "", "", false
	}
	return id.Space, id.Node, true
}

// notFoundAs turns a store's ErrNotFound into refusal.
func notFoundAs(err error, refusal *ocsError) error {
	if errors.Is(err, storage.ErrNotFound) {
		return refusal
	}
	return err
}

// pathOf returns the path of n from its space's root, "/" for the root.
func (s *sharing) pathOf(ctx context.Context, n storage.Node) (string, error) {
	names, err := storage.NodeNames(ctx, s.store, n, "")
	return "/" + strings.Join(names, "/"), err
}

// readForm parses a POST or PUT form (and the query), bounded.
func readForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return refuse(http.StatusBadRequest, "The form cannot be read")
	}
	return nil
}
