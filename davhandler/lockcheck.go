package davhandler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// Lock enforcement (RFC 4918 §6, §7 and §10.4): every method that changes
// state calls checkLocks once, after its permission checks and before it
// changes anything. That check reads the locks in one transaction and the
// change happens in another, so a LOCK granted in between would let the
// change through: PUT, TUS completion, DELETE, MOVE and COPY also hand the
// submitted tokens (heldTokens) to the store, which checks them again in the
// change's own transaction and answers ErrLocked, mapped to the same 423.
// MKCOL and PROPPATCH rely on checkLocks alone: Mkdir and PatchProps take
// no conditions.

// lockTarget is a node a request changes. Its own locks and the Deep locks
// of its ancestors must have their tokens submitted; with below, so must
// the locks of every node under it.
type lockTarget struct {
	spaceID string
	nodeID  string
	below   bool
}

// written are the lock targets of writing t in place (PUT, PROPPATCH,
// MKCOL, a LOCK that creates a file): the node when it exists, else its
// folder, whose membership changes (RFC 4918 §7.5: a lock on a folder, of
// any depth, protects the names in it).
func written(t *target) []lockTarget {
	if t.exists {
		return []lockTarget{{spaceID: t.space.ID, nodeID: t.node.ID}}
	}
	if t.hasParent {
		return []lockTarget{{spaceID: t.space.ID, nodeID: t.parent.ID}}
	}
	return nil
}

// replaced are the lock targets of a COPY or MOVE destination: the node and
// everything below it when it exists, else its folder.
func replaced(t *target) []lockTarget {
	if !t.exists {
		return written(t)
	}
	return []lockTarget{{spaceID: t.space.ID, nodeID: t.node.ID, below: t.node.IsFolder()}}
}

// removed are the lock targets of a DELETE or of a MOVE source: the node,
// everything below it, and its folder, which loses a name.
func removed(t *target) []lockTarget {
	out := replaced(t)
	if t.exists && t.node.ParentID != "" {
		out = append(out, lockTarget{spaceID: t.space.ID, nodeID: t.node.ParentID})
	}
	return out
}

// transferred are the lock targets of a COPY (the destination) or a MOVE
// (the source too).
func transferred(src, dst *target, move bool) []lockTarget {
	if move {
		return append(removed(src), replaced(dst)...)
	}
	return replaced(dst)
}

// checkLocks lets a state-changing request proceed. First the If header,
// when present, must hold (400 when malformed, 412 when no list holds);
// untagged lists are about t, the resource the request URI names. Then,
// when locking is offered, every lock on the changed targets must have its
// token submitted by the user who holds it (423 naming the lock's root).
// Called with no targets it only evaluates the If header, as a LOCK that
// takes a new lock on an existing resource needs: the lock store decides
// conflicts there.
func (h *Handler) checkLocks(r *http.Request, req *request, t *target, changed ...lockTarget) error {
	ih, present, err := ifHeaderOf(r)
	if err != nil {
		return err
	}
	if present {
		if err := h.evaluateIf(r, req.user, t, ih); err != nil {
			return err
		}
	}
	if h.locks == nil {
		return nil
	}
	submitted := submittedTokens(r, ih)
	for _, c := range changed {
		if err := h.checkTokens(r.Context(), req.user, c, submitted); err != nil {
			return err
		}
	}
	return nil
}

// checkLockRequest is checkLocks for a LOCK, called before it refreshes or
// takes a lock. A refresh, or a new lock on an existing resource, needs only
// the If header to hold: the lock store decides conflicts, and a lock of
// another user covering the resource answers there. A LOCK on an unmapped
// URL also creates a file, which changes its folder's membership, so the
// folder's locks need their tokens as for a PUT.
func (h *Handler) checkLockRequest(r *http.Request, req *request, t *target) error {
	if t.exists {
		return h.checkLocks(r, req, t)
	}
	return h.checkLocks(r, req, t, written(t)...)
}

// heldTokens returns the tokens r submits, for the store to check the
// locks again in the change's own transaction: checkLocks answers early,
// but a LOCK granted after it must still stop the change. Nil when locking
// is not offered. Call it after checkLocks, which refuses a malformed If
// header.
func (h *Handler) heldTokens(r *http.Request, req *request) *storage.LockTokens {
	if h.locks == nil {
		return nil
	}
	ih, _, err := ifHeaderOf(r)
	if err != nil {
		ih = davxml.IfHeader{}
	}
	tokens := slices.Sorted(maps.Keys(submittedTokens(r, ih)))
	return &storage.LockTokens{User: req.user.ID, Tokens: tokens}
}

// lockTokenMethods accept a lock token in a Lock-Token header too, where
// ownCloud clients send it instead of in an If header; a TUS upload is a
// PUT in parts.
var lockTokenMethods = map[string]bool{
	http.MethodPut: true, http.MethodDelete: true, "MOVE": true, "PROPPATCH": true,
	http.MethodPost: true, http.MethodPatch: true,
}

// submittedTokens returns the tokens the request submits: every state token
// its If header names (RFC 4918 §10.4.1: naming a token submits it, whether
// or not its list holds) and, for ownCloud clients, the Lock-Token header.
func submittedTokens(r *http.Request, ih davxml.IfHeader) map[string]bool {
	out := map[string]bool{}
	for _, tok := range ih.Tokens() {
		out[tok] = true
	}
	if lockTokenMethods[r.Method] {
		v := strings.TrimSpace(r.Header.Get("Lock-Token"))
		if tok := strings.TrimSuffix(strings.TrimPrefix(v, "<"), ">"); tok != "" {
			out[tok] = true
		}
	}
	return out
}

// checkTokens refuses changing c unless every resource there that is
// locked has a lock whose token its holder submitted: one of its locks is
// enough, since holders of shared locks may each write (RFC 4918 §6.2).
func (h *Handler) checkTokens(ctx context.Context, user storage.User, c lockTarget, submitted map[string]bool) error {
	held := func(l storage.Lock) bool { return submitted[l.Token] && l.User == user.ID }
	covering, err := h.locksOn(ctx, c.spaceID, c.nodeID, false)
	if err != nil {
		return err
	}
	if len(covering) > 0 && !anyLock(covering, held) {
		return tokenNotSubmitted(covering[0])
	}
	if !c.below {
		return nil
	}
	all, err := h.locksOn(ctx, c.spaceID, c.nodeID, true)
	if err != nil {
		return err
	}
	// A held Deep lock of the target or above covers the whole subtree.
	heldDeep := anyLock(covering, func(l storage.Lock) bool { return l.Deep && held(l) })
	for _, l := range below(all, covering) {
		sameNode := func(o storage.Lock) bool { return o.NodeID == l.NodeID && held(o) }
		if !heldDeep && !anyLock(all, sameNode) {
			return tokenNotSubmitted(l)
		}
	}
	return nil
}

// locksOn reads the live locks covering a node; a node removed meanwhile
// has none (the change itself will find it gone).
func (h *Handler) locksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	locks, err := h.locks.LocksOn(ctx, spaceID, nodeID, below)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the locks of node %s: %w", nodeID, err)
	}
	return locks, nil
}

// below returns the locks of all that are not in covering: those of nodes
// below the target.
func below(all, covering []storage.Lock) []storage.Lock {
	var out []storage.Lock
	for _, l := range all {
		if !anyLock(covering, func(c storage.Lock) bool { return c.Token == l.Token }) {
			out = append(out, l)
		}
	}
	return out
}

func anyLock(locks []storage.Lock, pred func(storage.Lock) bool) bool {
	for _, l := range locks {
		if pred(l) {
			return true
		}
	}
	return false
}

// evaluateIf answers 412 unless one list of ih holds (RFC 4918 §10.4.3).
func (h *Handler) evaluateIf(r *http.Request, user storage.User, t *target, ih davxml.IfHeader) error {
	ev := ifEvaluator{h: h, r: r, user: user, target: t, states: map[string]*ifState{}}
	for _, l := range ih.Lists {
		ok, err := ev.holds(l)
		if err != nil || ok {
			return err
		}
	}
	return errorf(http.StatusPreconditionFailed, "No list of the If header holds")
}

// ifEvaluator evaluates the lists of one If header, reading the state of
// each resource it names once.
type ifEvaluator struct {
	h      *Handler
	r      *http.Request
	user   storage.User
	target *target
	states map[string]*ifState // by resource tag, "" for the request URI
}

// ifState is what If conditions compare with: a resource's entity tag and
// the tokens of the live locks covering it.
type ifState struct {
	// known is false for a tag that names no existing resource of the
	// request's space that the user can see: its lists never hold, so the
	// header tells nothing about other spaces.
	known  bool
	exists bool
	etag   string // quoted
	tokens map[string]bool
}

// holds reports whether every condition of l holds.
func (ev *ifEvaluator) holds(l davxml.IfList) (bool, error) {
	st, err := ev.stateOf(l.ResourceTag)
	if err != nil || !st.known {
		return false, err
	}
	for _, c := range l.Conditions {
		if st.matches(c) == c.Not {
			return false, nil
		}
	}
	return true, nil
}

// matches reports whether the resource has the token or entity tag of c.
// Entity tags use the strong comparison, as If-Match does (RFC 4918
// §10.4.4 leaves the choice; these guard writes). DAV:no-lock is no lock's
// token, so it never matches.
func (st *ifState) matches(c davxml.IfCondition) bool {
	if c.Token != "" {
		return st.tokens[c.Token]
	}
	return st.exists && c.ETag == st.etag
}

// stateOf returns the state of the resource a list is about.
func (ev *ifEvaluator) stateOf(tag string) (*ifState, error) {
	if st, ok := ev.states[tag]; ok {
		return st, nil
	}
	t, err := ev.resourceOf(tag)
	st := &ifState{}
	if err == nil && t != nil {
		st, err = ev.h.ifStateOf(ev.r.Context(), t)
	}
	if err != nil {
		return nil, err
	}
	ev.states[tag] = st
	return st, nil
}

// resourceOf resolves a resource tag through the WebDAV base paths; nil
// when it names nothing the If header may ask about.
func (ev *ifEvaluator) resourceOf(tag string) (*target, error) {
	if tag == "" {
		return ev.target, nil
	}
	u, err := url.Parse(tag)
	if err != nil || (u.Host != "" && !strings.EqualFold(u.Host, ev.r.Host)) {
		return nil, nil
	}
	dp, ok, perr := parseDAVPath(u.Path)
	if !ok || perr != nil {
		return nil, nil
	}
	t, err := ev.h.resolve(ev.r.Context(), ev.user, dp)
	if err != nil {
		if storageError(err).serverFault() {
			return nil, err
		}
		// Absent, invisible or malformed: all alike.
		return nil, nil
	}
	if !t.exists || t.space.ID != ev.target.space.ID {
		return nil, nil
	}
	return t, nil
}

// ifStateOf reads the state of t. An unmapped URL has no entity tag and is
// covered by the Deep locks of its folder (RFC 4918 §10.4.11).
func (h *Handler) ifStateOf(ctx context.Context, t *target) (*ifState, error) {
	st := &ifState{known: true, exists: t.exists, tokens: map[string]bool{}}
	if t.exists {
		st.etag = quoteETag(t.node.ETag)
	}
	if h.locks == nil {
		return st, nil
	}
	var locks []storage.Lock
	var err error
	switch {
	case t.exists:
		locks, err = h.locksOn(ctx, t.space.ID, t.node.ID, false)
	case t.hasParent:
		locks, err = h.locksOn(ctx, t.space.ID, t.parent.ID, false)
	}
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		if t.exists || l.Deep {
			st.tokens[l.Token] = true
		}
	}
	return st, nil
}
