package davhandler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/storage"
)

// Public links over WebDAV: /dav/public-files/{token}[/path] (and under
// /remote.php) serves the item of a live link to anybody who has its token
// and, when it has one, its password (HTTP Basic; the user name is not
// read, clients send "public"). No user is needed, and a user Caddy may
// have set is ignored: the request acts as the link, with the link's
// access (linkAccess) starting at its item, and every byte it writes
// counts against the item's space's quota. An unknown, malformed,
// expired, dead or deleted token answers exactly as a token that never
// existed. Locks are not offered through links; a file drop takes new
// files at its top level and shows nothing but its own root.

// publicFiles is the segment after /dav that starts public link paths.
const publicFiles = "public-files"

// publicUploads is the segment after /dav/public-files that holds the
// resumable uploads started through links. It cannot be a token (tokens
// have no dot, storage.ValidLinkToken).
const publicUploads = ".uploads"

// linkRealm is the realm of a protected link's Basic challenge.
const linkRealm = `Basic realm="davspaces public link", charset="UTF-8"`

// The refusals of a protected link.
var (
	errLinkPasswordMissing = errorf(http.StatusUnauthorized, "No 'Authorization: Basic' header found: this link has a password")
	errLinkPasswordWrong   = errorf(http.StatusUnauthorized, "Username or password was incorrect")
	errDropOnly            = errorf(http.StatusForbidden, "This link is a file drop: it takes new files only")
	errLinkRootFixed       = errorf(http.StatusForbidden, "The shared item itself can not be deleted, moved or replaced through its link")
)

// IsPublicPath reports whether a request path is a public link's (its
// WebDAV paths and its uploads), which the handler serves without a user:
// an authentication layer in front lets such paths through.
func IsPublicPath(p string) bool {
	p = strings.TrimPrefix(p, "/remote.php")
	return strings.HasPrefix(p, "/dav/"+publicFiles+"/")
}

// parsePublicPath handles what follows /dav/public-files: a token and
// the names below the link's item, or an upload. A path that names no
// link answers as an unknown token; "." and ".." name nothing below a
// link either.
func parsePublicPath(base, token, rest string) (davPath, bool, *davError) {
	if token == publicUploads {
		id, more := cutSegment(rest)
		if id == "" || strings.Trim(more, "/") != "" || validateName(id) != nil {
			return davPath{}, true, errNotFound
		}
		return davPath{kind: basePublicUpload, upload: id, base: base + "/" + publicUploads + "/" + id}, true, nil
	}
	if storage.ValidLinkToken(token) != nil {
		return davPath{}, true, errNotFound
	}
	dp := davPath{kind: basePublic, token: token, base: base + "/" + token}
	segs, err := splitSegments(rest)
	if err != nil && escapesName(rest) {
		err = errNotFound
	}
	dp.segments = segs
	return dp, true, err
}

// escapesName reports whether a path has a "." or ".." segment.
func escapesName(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// servePublic answers a request on a public path. The token is judged
// before anything else, the path's own refusal included, so that nothing
// tells a malformed path of an unknown token from a known one.
func (h *Handler) servePublic(w http.ResponseWriter, r *http.Request, dp davPath, perr *davError) error {
	if dp.kind == basePublicUpload {
		return h.servePublicUpload(w, r, dp)
	}
	if perr != nil && dp.token == "" {
		return perr
	}
	link, err := h.openLink(r.Context(), dp.token)
	if err != nil {
		return err
	}
	if err := h.admitLink(w, r, link); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	r = r.Clone(withLink(r.Context(), &link))
	req := &request{user: linkCaller(&link), path: dp}
	noteUser(r.Context(), req.user.ID)
	return h.serveThroughLink(w, r, req, link.Role)
}

// openLink finds the live link of a token.
func (h *Handler) openLink(ctx context.Context, token string) (storage.Share, error) {
	if h.shares == nil || storage.ValidLinkToken(token) != nil {
		return storage.Share{}, errNotFound
	}
	link, err := h.shares.LinkByToken(ctx, token)
	if errors.Is(err, storage.ErrNotFound) {
		return link, errNotFound
	}
	if err != nil {
		return link, fmt.Errorf("looking up a link: %w", err)
	}
	return link, nil
}

// admitLink lets a request through link if the link is live and the
// request has its password: a dead link answers as an unknown one.
func (h *Handler) admitLink(w http.ResponseWriter, r *http.Request, link storage.Share) error {
	if link.Kind != storage.ShareLink {
		return errNotFound
	}
	live, err := storage.LiveShare(r.Context(), h.shareReader, link, time.Now())
	if err != nil {
		return fmt.Errorf("judging link %s: %w", link.ID, err)
	}
	if !live {
		return errNotFound
	}
	return h.checkLinkPassword(w, r, link)
}

// The budget of wrong passwords of a link from one client (an IPv4
// address or an IPv6 /64): attempts being compared count as well, so that
// no number of concurrent guesses compares more.
var linkPasswordBudget = storage.AttemptBudget{Limit: 10, Window: 5 * time.Minute}

// checkLinkPassword asks a protected link's password of the request.
// Attempts are counted per link and client address prefix in the store,
// for every node, before the password is compared; past the budget the
// request is refused before its password is even read, until the oldest
// attempt leaves the window. A right password counts nothing.
func (h *Handler) checkLinkPassword(w http.ResponseWriter, r *http.Request, link storage.Share) error {
	if link.PasswordHash == nil {
		return nil
	}
	ctx := r.Context()
	key := "link " + link.ID + " " + passwordguard.AddressPrefix(h.clientOf(r))
	if err := h.passwords.Blocked(ctx, key, linkPasswordBudget); err != nil {
		return linkPasswordRefusal(err)
	}
	_, password, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", linkRealm)
		return errLinkPasswordMissing
	}
	now := time.Now()
	if h.linkPasswords.known(link, password, now) {
		return nil
	}
	right, err := h.passwords.Check(ctx, key, linkPasswordBudget, func() bool {
		return storage.CheckLinkPassword(link, password)
	})
	if err != nil {
		return linkPasswordRefusal(err)
	}
	if !right {
		w.Header().Set("WWW-Authenticate", linkRealm)
		return errLinkPasswordWrong
	}
	h.linkPasswords.remember(link, password, now)
	return nil
}

// linkPasswordRefusal answers a password check that compared nothing:
// 429 with the wait for a link out of attempts or a node out of compare
// slots, err itself (a failure of the store) otherwise.
func linkPasswordRefusal(err error) error {
	var refusal *passwordguard.Refusal
	if !errors.As(err, &refusal) {
		return err
	}
	if refusal.Busy {
		return &davError{status: http.StatusTooManyRequests, retryAfter: retryAfterSeconds(refusal.RetryAfter),
			message: "Too many passwords are being checked: retry shortly", reason: reasonPasswordChecks}
	}
	return &davError{status: http.StatusTooManyRequests, retryAfter: retryAfterSeconds(refusal.RetryAfter),
		message: "Too many wrong passwords for this link: try again later", reason: reasonLinkPasswords}
}

// retryAfterSeconds rounds a wait up to whole seconds.
func retryAfterSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// clientOf names the client a request came from: as the configuration
// says, or else the address it came from, without its port.
func (h *Handler) clientOf(r *http.Request) string {
	if h.clientAddress != nil {
		if c := h.clientAddress(r); c != "" {
			return c
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// serveThroughLink dispatches a request that a link admitted.
func (h *Handler) serveThroughLink(w http.ResponseWriter, r *http.Request, req *request, role storage.ShareRole) error {
	if role == storage.ShareFileDrop {
		if err := checkDropRequest(r, req.path); err != nil {
			return err
		}
	}
	if isV1Chunk(r) {
		return errorf(http.StatusNotImplemented, "chunked uploads are not offered through public links: use PUT or TUS")
	}
	if !linkAccess(role).mayChange() && (r.Method == http.MethodPut || r.Method == http.MethodPost) {
		// Who may not change may only create: an upload that finds its
		// name taken meanwhile fails rather than replacing.
		r.Header.Set("If-None-Match", "*")
	}
	if handle := h.treeMethod(r.Method); handle != nil {
		return handle(w, r, req)
	}
	switch r.Method {
	case "LOCK", "UNLOCK":
		return methodNotAllowed(allowedOnPublic, "Locks are not offered through public links")
	}
	return h.handleUnsupported(w, r, req)
}

// checkDropRequest refuses what a file drop does not take: anything but
// a PROPFIND of its root, a PUT of a name at its top level and a TUS
// creation there. Below the root every refusal is a 404, so that nobody
// learns which names the drop holds.
func checkDropRequest(r *http.Request, dp davPath) error {
	switch n := len(dp.segments); {
	case n > 1:
		return errNotFound
	case n == 0 && (r.Method == "PROPFIND" || r.Method == http.MethodPost):
		return nil
	case n == 1 && r.Method == http.MethodPut:
		return nil
	case n == 0:
		return errDropOnly
	}
	return errNotFound
}

// servePublicUpload answers a request at the upload URL of an upload
// started through a link: the link must still be live and the request
// must have its password, as every request through it.
func (h *Handler) servePublicUpload(w http.ResponseWriter, r *http.Request, dp davPath) error {
	if h.uploads == nil || h.shares == nil {
		return errNotFound
	}
	s, err := h.uploads.Session(r.Context(), dp.upload)
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("reading upload %s: %w", dp.upload, err)
	}
	shareID, ok := strings.CutPrefix(s.User, linkCallerPrefix)
	if !ok {
		return errNotFound
	}
	link, err := h.shares.Share(r.Context(), shareID)
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("reading the link of upload %s: %w", dp.upload, err)
	}
	if err := h.admitLink(w, r, link); err != nil {
		return err
	}
	r = r.Clone(withLink(r.Context(), &link))
	req := &request{user: linkCaller(&link), path: davPath{kind: baseUploads, upload: dp.upload, base: dp.base}}
	noteUser(r.Context(), req.user.ID)
	return h.serveUpload(w, r, req)
}

// publicUploadLocation is the upload URL of an upload through a link.
func publicUploadLocation(dp davPath, id string) string {
	prefix := ""
	if strings.HasPrefix(dp.base, "/remote.php/") {
		prefix = "/remote.php"
	}
	return prefix + "/dav/" + publicFiles + "/" + publicUploads + "/" + id
}

// linkSessionAccess is the access of a link's request to the target of
// one of its uploads: the link's, when the target (the file, or the folder
// it goes into) is still the link's item or below it.
func (h *Handler) linkSessionAccess(ctx context.Context, link *storage.Share, space storage.Space, nodeID string) (access, error) {
	if space.ID != link.SpaceID || !h.spaces.Serves(space) {
		return access{}, errNotFound
	}
	below, err := h.isWithin(ctx, space.ID, nodeID, link.NodeID)
	if err != nil {
		return access{}, err
	}
	if !below {
		return access{}, errNotFound
	}
	return linkAccess(link.Role), nil
}

// maxTreeDepth bounds the walk up from a node to its space's root.
const maxTreeDepth = 4096

// isWithin reports whether node nodeID of a space is ancestorID or below
// it.
func (h *Handler) isWithin(ctx context.Context, spaceID, nodeID, ancestorID string) (bool, error) {
	for range maxTreeDepth {
		if nodeID == ancestorID {
			return true, nil
		}
		if nodeID == "" {
			return false, nil
		}
		n, err := h.store.Node(ctx, spaceID, nodeID)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		nodeID = n.ParentID
	}
	return false, nil
}
