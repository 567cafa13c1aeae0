package davhandler

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// The XML of locks (RFC 4918 §14.1, §14.19 and §14.20), one form for LOCK
// replies and PROPFIND alike, since clients compare them.

// supportedLockXML is the d:supportedlock value: exclusive and shared write
// locks.
const supportedLockXML = `<d:lockentry><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>` +
	`<d:lockentry><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>`

// appendLockDiscovery appends the d:lockdiscovery value of a node covered
// by locks to dst, the response's own buffer: a listing writes each entry's
// locks as it goes, with no copy of its own (the caps of storage.LockLimits
// bound one entry's).
func appendLockDiscovery(dst []byte, locks []storage.Lock, now time.Time) []byte {
	a := byteAppender{b: dst}
	for _, l := range locks {
		writeActiveLock(&a, l, now)
	}
	return a.b
}

// byteAppender is an xmlWriter appending to a byte slice.
type byteAppender struct{ b []byte }

func (a *byteAppender) WriteString(s string) (int, error) {
	a.b = append(a.b, s...)
	return len(s), nil
}

func (a *byteAppender) WriteByte(c byte) error {
	a.b = append(a.b, c)
	return nil
}

// lockReplyBody is the body of a successful LOCK: the d:prop with the
// lockdiscovery of the lock taken or refreshed.
func lockReplyBody(l storage.Lock, now time.Time) string {
	var b davxml.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<d:prop xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:lockdiscovery>`)
	writeActiveLock(&b, l, now)
	b.WriteString("</d:lockdiscovery></d:prop>\n")
	return b.String()
}

// writeActiveLock writes the d:activelock of l as it stands at now.
func writeActiveLock(b xmlWriter, l storage.Lock, now time.Time) {
	b.WriteString("<d:activelock><d:locktype><d:write/></d:locktype><d:lockscope>")
	if l.Scope == storage.LockShared {
		b.WriteString("<d:shared/>")
	} else {
		b.WriteString("<d:exclusive/>")
	}
	b.WriteString("</d:lockscope><d:depth>")
	if l.Deep {
		b.WriteString("infinity")
	} else {
		b.WriteString("0")
	}
	b.WriteString("</d:depth>")
	if l.Owner != "" {
		b.WriteString("<d:owner>")
		davxml.WriteMarkup(b, l.Owner)
		b.WriteString("</d:owner>")
	}
	b.WriteString("<d:timeout>")
	b.WriteString(timeoutValue(l.Expires, now))
	b.WriteString("</d:timeout><d:locktoken><d:href>")
	davxml.WriteText(b, l.Token)
	b.WriteString("</d:href></d:locktoken><d:lockroot><d:href>")
	davxml.WriteText(b, l.Root)
	b.WriteString("</d:href></d:lockroot><oc:ownername>")
	davxml.WriteText(b, cmp.Or(l.UserName, l.User))
	b.WriteString("</oc:ownername></d:activelock>")
}

// timeoutValue is the remaining time of a lock as a Timeout value:
// Second-N, rounded up so that a live lock never shows 0. "Infinity", which
// some servers send, is not a Timeout value and neon refuses it.
func timeoutValue(expires, now time.Time) string {
	if expires.IsZero() {
		return "Infinite"
	}
	secs := math.Ceil(expires.Sub(now).Seconds())
	return "Second-" + strconv.FormatInt(int64(max(secs, 1)), 10)
}

// lockIndex is what a PROPFIND needs to tell the locks of each node it
// lists: the locks of the space, read once, by the node they are rooted at.
// A listing carries the Deep locks of the folder it lists down to the
// children, so no node costs a lock store read of its own.
type lockIndex struct {
	byRoot map[string][]storage.Lock // nil when the space holds no lock
	now    time.Time
}

// loadLocks reads the locks of the space once and those covering the
// target of the PROPFIND.
func (pc *propContext) loadLocks(ls storage.LockStore, target *nodeView) error {
	all, err := ls.SpaceLocks(pc.ctx, pc.space.ID)
	if err != nil {
		return fmt.Errorf("reading the locks of space %s: %w", pc.space.ID, err)
	}
	pc.locks = &lockIndex{now: time.Now()}
	if len(all) == 0 {
		return nil
	}
	pc.locks.byRoot = make(map[string][]storage.Lock, len(all))
	for _, l := range all {
		pc.locks.byRoot[l.NodeID] = append(pc.locks.byRoot[l.NodeID], l)
	}
	target.locks, err = ls.LocksOn(pc.ctx, pc.space.ID, target.node.ID, false)
	if err != nil {
		return fmt.Errorf("reading the locks of node %s: %w", target.node.ID, err)
	}
	return nil
}

// covering returns the locks covering a child whose parent passes down the
// Deep locks inherited, ordered by token as the LockStore orders them, so
// that a node shows its locks alike whichever folder is listed.
func (idx *lockIndex) covering(inherited []storage.Lock, nodeID string) []storage.Lock {
	if idx == nil {
		return nil
	}
	own := idx.byRoot[nodeID]
	switch {
	case len(own) == 0:
		return inherited
	case len(inherited) == 0:
		return own
	}
	all := append(slices.Clip(inherited), own...)
	slices.SortFunc(all, func(a, b storage.Lock) int { return strings.Compare(a.Token, b.Token) })
	return all
}

// deepLocks returns the locks that also cover what is below their node.
func deepLocks(locks []storage.Lock) []storage.Lock {
	var deep []storage.Lock
	for _, l := range locks {
		if l.Deep {
			deep = append(deep, l)
		}
	}
	return deep
}
