package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// LOCK and UNLOCK (RFC 4918 §9.10, §9.11). Locks belong to nodes and are
// kept in the LockStore; the store decides conflicts atomically.

func (h *Handler) handleLock(w http.ResponseWriter, r *http.Request, req *request) error {
	depth, err := parseLockDepth(r)
	if err != nil {
		return err
	}
	timeout, err := parseTimeout(strings.Join(r.Header.Values("Timeout"), ","), h.maxLockTimeout)
	if err != nil {
		return err
	}
	body, err := h.readXMLBody(w, r)
	if err != nil {
		return err
	}
	var li lockInfo
	if body != nil {
		if li, err = parseLockInfo(body); err != nil {
			return err
		}
		if err := h.checkLockOwner(li.owner); err != nil {
			return err
		}
	}
	t, err := h.resolve(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	if !t.access.mayLock() {
		return errReadOnly
	}
	if body == nil {
		return h.refreshLock(w, r, req, t, timeout)
	}
	return h.createLock(w, r, req, t, storage.Lock{
		Deep: depth == depthInfinity, Scope: li.scope, Owner: li.owner, Timeout: timeout,
	})
}

// checkLockOwner refuses a d:owner larger than the cap: every listing that
// shows the lock repeats it, for each resource the lock covers.
func (h *Handler) checkLockOwner(owner string) error {
	if limit := h.lockLimits.MaxOwnerBytes; len(owner) > limit {
		return withReason(errorf(http.StatusBadRequest, "The lock's owner is %d bytes of XML, more than the %d allowed", len(owner), limit), reasonLockOwnerMax)
	}
	return nil
}

// parseLockDepth reads the Depth of a LOCK: 0 or infinity, the default.
func parseLockDepth(r *http.Request) (int, error) {
	depth, err := parseDepth(r, depthInfinity)
	if err == nil && depth == 1 {
		err = errorf(http.StatusBadRequest, "Invalid Depth header value for LOCK: 1 (send 0 or infinity)")
	}
	return depth, err
}

// parseTimeout reads a Timeout header (RFC 4918 §10.7): the first value of
// the list that is Second-N or Infinite, capped to maxTimeout, which is
// also what an absent header and Infinite get. A lock always expires, so a
// client that vanishes cannot hold a resource for ever.
func parseTimeout(v string, maxTimeout time.Duration) (time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return maxTimeout, nil
	}
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if strings.EqualFold(part, "Infinite") {
			return maxTimeout, nil
		}
		if len(part) <= len("Second-") || !strings.EqualFold(part[:len("Second-")], "Second-") {
			continue
		}
		secs, err := strconv.ParseUint(part[len("Second-"):], 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return maxTimeout, nil
		case err != nil:
			continue
		case secs > uint64(maxTimeout/time.Second):
			return maxTimeout, nil
		}
		// Second-0 would be a lock that is gone before its reply arrives.
		return time.Duration(max(secs, 1)) * time.Second, nil
	}
	return 0, errorf(http.StatusBadRequest, "Invalid Timeout header %q: send Second-N or Infinite", v)
}

// createLock takes a new lock l on the target, creating an empty file
// first when the target is unmapped (201). The store names the lock with a
// fresh urn:uuid token.
func (h *Handler) createLock(w http.ResponseWriter, r *http.Request, req *request, t *target, l storage.Lock) error {
	ctx := r.Context()
	l.SpaceID = t.space.ID
	l.User, l.UserName, l.Groups = req.user.ID, req.user.DisplayName, req.user.Groups
	created := false
	if !t.exists {
		node, err := h.createLockedFile(r, req, t, l)
		if err != nil {
			return err
		}
		t.node, t.exists, created = node, true, true
	} else if err := h.checkLockRequest(r, req, t); err != nil {
		return err
	}
	l.NodeID, l.Root = t.node.ID, t.href()
	taken, err := h.locks.CreateLock(ctx, l, h.lockLimits)
	if err != nil {
		if created {
			h.removeCreatedFile(ctx, t.node)
		}
		return h.lockFailure(ctx, l, err)
	}
	w.Header().Set("Lock-Token", "<"+taken.Token+">")
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeLockReply(w, status, taken)
	return nil
}

// createLockedFile creates the empty file a LOCK on an unmapped URL makes
// (RFC 4918 §9.10.4), after checking that the new lock l would not conflict
// with the locks of the folder it goes into, and that the request may add
// a name to that folder as a PUT may, so that a refused LOCK leaves nothing
// behind.
func (h *Handler) createLockedFile(r *http.Request, req *request, t *target, l storage.Lock) (storage.Node, error) {
	ctx := r.Context()
	if !t.hasParent {
		return storage.Node{}, errorf(http.StatusConflict, "The parent collection of %s does not exist", t.name)
	}
	inherited, err := h.locks.LocksOn(ctx, t.space.ID, t.parent.ID, false)
	if err != nil {
		return storage.Node{}, fmt.Errorf("reading the locks of folder %s: %w", t.parent.ID, err)
	}
	for _, o := range inherited {
		if o.Deep && conflicts(o.Scope, l.Scope) {
			return storage.Node{}, lockedError(o.Root)
		}
	}
	if err := h.checkLockRequest(r, req, t); err != nil {
		return storage.Node{}, err
	}
	up, err := h.store.NewUpload(ctx, t.space.ID)
	if err != nil {
		return storage.Node{}, err
	}
	defer up.Discard()
	node, _, err := up.Commit(ctx, storage.Commit{ParentID: t.parent.ID, Name: t.name,
		Conditions: storage.Conditions{IfNoneMatch: true}})
	if errors.Is(err, storage.ErrPrecondition) {
		return storage.Node{}, errorf(http.StatusConflict, "%s was created meanwhile: send the LOCK again", t.name)
	}
	return node, err
}

// removeCreatedFile takes back the empty file of a LOCK that failed, unless
// it has been written meanwhile.
func (h *Handler) removeCreatedFile(ctx context.Context, n storage.Node) {
	err := h.store.Remove(ctx, n.SpaceID, n.ID, storage.Conditions{IfMatch: n.ETag})
	if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrPrecondition) {
		h.logger.Warn("removing the file of a failed LOCK", zap.String("node", n.ID), zap.Error(err))
	}
}

// conflicts reports whether a lock of scope held conflicts with a new one
// of scope wanted: only two shared locks coexist.
func conflicts(held, wanted storage.LockScope) bool {
	return held == storage.LockExclusive || wanted == storage.LockExclusive
}

// lockFailure answers a lock the store refused; for a conflict it names the
// root of the conflicting lock (RFC 4918 §16, no-conflicting-lock).
func (h *Handler) lockFailure(ctx context.Context, l storage.Lock, err error) error {
	switch {
	case errors.Is(err, storage.ErrTooManyLocks):
		return h.tooManyLocks(err)
	case errors.Is(err, storage.ErrLockQuota):
		return h.lockQuotaFull(err)
	case !errors.Is(err, storage.ErrLocked):
		return fmt.Errorf("locking node %s: %w", l.NodeID, err)
	}
	held, lerr := h.locks.LocksOn(ctx, l.SpaceID, l.NodeID, l.Deep)
	if lerr == nil {
		for _, o := range held {
			if conflicts(o.Scope, l.Scope) {
				return lockedError(o.Root)
			}
		}
	}
	return lockedError("")
}

// tooManyLocks is the 423 of a LOCK that would make a resource covered by
// more locks than the cap. It is a 423 with no-conflicting-lock, not a 507:
// the resource cannot be locked because of the locks others hold on it,
// which is what RFC 4918 §9.10.6 answers 423 for and what clients show as
// "locked by someone else" (a 507 would read as a full disk or quota).
func (h *Handler) tooManyLocks(cause error) *davError {
	return &davError{status: http.StatusLocked, cause: cause, condition: "<d:no-conflicting-lock/>",
		message: fmt.Sprintf("The resource is covered by the most locks allowed (%d): try again when one has ended", h.lockLimits.MaxCovering)}
}

// lockQuotaFull is the 423 of a LOCK beyond what the user's locks in the
// space may count or cost. It is a 423, not a 507: no disk or quota is
// full, and clients read a 507 as one (davfs2 stops a copy with "No space
// left on device"); the user's own locks are what stand in the way, and
// they end.
func (h *Handler) lockQuotaFull(cause error) *davError {
	held := fmt.Sprintf("%d bytes of locks", h.lockLimits.MaxBytesPerUser)
	if !errors.Is(cause, storage.ErrLockBytesQuota) {
		held = fmt.Sprintf("%d locks", h.lockLimits.MaxPerUser)
	}
	return &davError{status: http.StatusLocked, cause: cause, condition: "<d:no-conflicting-lock/>",
		message: fmt.Sprintf("You hold the most locks allowed in this space (%s): unlock some first", held)}
}

// lockedError is the 423 of a LOCK that conflicts with the lock rooted at
// root ("" when it is gone meanwhile).
func lockedError(root string) *davError {
	var b davxml.Builder
	b.WriteString("<d:no-conflicting-lock>")
	if root != "" {
		b.WriteString("<d:href>")
		b.Text(root)
		b.WriteString("</d:href>")
	}
	b.WriteString("</d:no-conflicting-lock>")
	return &davError{status: http.StatusLocked, message: "The resource is locked", condition: b.String()}
}

// refreshLock restarts the timeout of the caller's lock whose token the If
// header names (RFC 4918 §9.10.2), on the lock root or a resource the lock
// covers.
func (h *Handler) refreshLock(w http.ResponseWriter, r *http.Request, req *request, t *target, timeout time.Duration) error {
	ih, present, err := ifHeaderOf(r)
	if err != nil {
		return err
	}
	if !present {
		return errorf(http.StatusBadRequest, "A LOCK without a body refreshes a lock: name its token in an If header")
	}
	if !t.exists {
		return errNotFound
	}
	if err := h.checkLockRequest(r, req, t); err != nil {
		return err
	}
	held, err := h.locks.LocksOn(r.Context(), t.space.ID, t.node.ID, false)
	if err != nil {
		return fmt.Errorf("reading the locks of node %s: %w", t.node.ID, err)
	}
	l, ok := ownLockWithToken(held, req.user, ih.Tokens()...)
	if !ok {
		return errorf(http.StatusPreconditionFailed, "No lock of yours on this resource has the token in the If header")
	}
	l, err = h.locks.RefreshLock(r.Context(), t.space.ID, l.Token, timeout)
	if errors.Is(err, storage.ErrNotFound) {
		return errorf(http.StatusPreconditionFailed, "The lock has expired or was removed")
	}
	if err != nil {
		return fmt.Errorf("refreshing a lock on node %s: %w", t.node.ID, err)
	}
	writeLockReply(w, http.StatusOK, l)
	return nil
}

// ownLockWithToken finds the lock of user among held that has one of
// tokens.
func ownLockWithToken(held []storage.Lock, user storage.User, tokens ...string) (storage.Lock, bool) {
	for _, tok := range tokens {
		for _, l := range held {
			if l.Token == tok && l.User == user.ID {
				return l, true
			}
		}
	}
	return storage.Lock{}, false
}

// writeLockReply answers a LOCK that took or refreshed l.
func writeLockReply(w http.ResponseWriter, status int, l storage.Lock) {
	body := davxml.LockReplyBody(activeLockOf(l), time.Now())
	hdr := w.Header()
	hdr.Set("Content-Type", "application/xml; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// errTokenMismatch answers an UNLOCK whose token is not one of the
// caller's live locks covering the resource (RFC 4918 §9.11.1).
var errTokenMismatch = &davError{status: http.StatusConflict,
	message:   "The lock token does not name a lock of yours on this resource",
	condition: "<d:lock-token-matches-request-uri/>"}

func (h *Handler) handleUnlock(w http.ResponseWriter, r *http.Request, req *request) error {
	token, err := lockTokenHeader(r)
	if err != nil {
		return err
	}
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	held, err := h.locks.LocksOn(r.Context(), t.space.ID, t.node.ID, false)
	if err != nil {
		return fmt.Errorf("reading the locks of node %s: %w", t.node.ID, err)
	}
	if !mayUnlock(held, req.user, t.access, token) {
		return errTokenMismatch
	}
	err = h.locks.RemoveLock(r.Context(), t.space.ID, token)
	if errors.Is(err, storage.ErrNotFound) {
		return errTokenMismatch
	}
	if err != nil {
		return fmt.Errorf("removing a lock on node %s: %w", t.node.ID, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mayUnlock reports whether user, with access a to the resource, may
// remove the lock with token among held, the locks covering the request
// URI: their own lock, or as a manager anybody's (a lock left behind by
// someone gone must not keep a resource read-only until it expires).
func mayUnlock(held []storage.Lock, user storage.User, a access, token string) bool {
	if _, ok := ownLockWithToken(held, user, token); ok {
		return true
	}
	return a.mayUnlockAny() && slices.ContainsFunc(held, func(l storage.Lock) bool { return l.Token == token })
}

// lockTokenHeader reads the Lock-Token of an UNLOCK: a Coded-URL, <token>,
// or the bare token some clients send.
func lockTokenHeader(r *http.Request) (string, error) {
	v := strings.TrimSpace(r.Header.Get("Lock-Token"))
	token := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, "<"), ">"))
	if token == "" {
		return "", errorf(http.StatusBadRequest, "UNLOCK needs the lock's token in a Lock-Token header")
	}
	return token, nil
}
