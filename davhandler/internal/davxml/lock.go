package davxml

import (
	"math"
	"strconv"
	"time"
)

// The XML of locks (RFC 4918 §14.1, §14.19 and §14.20), one form for LOCK
// replies and PROPFIND alike, since clients compare them.

// SupportedLock is the d:supportedlock value: exclusive and shared write
// locks.
const SupportedLock = `<d:lockentry><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>` +
	`<d:lockentry><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>`

// ActiveLock is what a d:activelock shows of a write lock.
type ActiveLock struct {
	Shared bool // a shared lock, else an exclusive one
	Deep   bool // Depth: infinity
	// Owner is the client's d:owner content, verbatim XML; "" for none.
	Owner string
	// Token and Root are the lock token and the path the client locked.
	Token, Root string
	// OwnerName is the display name of the user who took the lock.
	OwnerName string
	// Expires is when the lock ends; zero for never.
	Expires time.Time
}

// AppendActiveLock appends the d:activelock of l as it stands at now to
// dst, the response's own buffer: a listing writes each entry's locks as
// it goes, with no copy of its own.
func AppendActiveLock(dst []byte, l ActiveLock, now time.Time) []byte {
	a := appender{b: dst}
	WriteActiveLock(&a, l, now)
	return a.b
}

// LockReplyBody is the body of a successful LOCK: the d:prop with the
// lockdiscovery of the lock taken or refreshed.
func LockReplyBody(l ActiveLock, now time.Time) string {
	var b Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<d:prop xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:lockdiscovery>`)
	WriteActiveLock(&b, l, now)
	b.WriteString("</d:lockdiscovery></d:prop>\n")
	return b.String()
}

// WriteActiveLock writes the d:activelock of l as it stands at now.
func WriteActiveLock(b Writer, l ActiveLock, now time.Time) {
	b.WriteString("<d:activelock><d:locktype><d:write/></d:locktype><d:lockscope>")
	if l.Shared {
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
		WriteMarkup(b, l.Owner)
		b.WriteString("</d:owner>")
	}
	b.WriteString("<d:timeout>")
	b.WriteString(TimeoutValue(l.Expires, now))
	b.WriteString("</d:timeout><d:locktoken><d:href>")
	WriteText(b, l.Token)
	b.WriteString("</d:href></d:locktoken><d:lockroot><d:href>")
	WriteText(b, l.Root)
	b.WriteString("</d:href></d:lockroot><oc:ownername>")
	WriteText(b, l.OwnerName)
	b.WriteString("</oc:ownername></d:activelock>")
}

// TimeoutValue is the remaining time of a lock as a Timeout value:
// Second-N, rounded up so that a live lock never shows 0. "Infinity", which
// some servers send, is not a Timeout value and neon refuses it.
func TimeoutValue(expires, now time.Time) string {
	if expires.IsZero() {
		return "Infinite"
	}
	secs := math.Ceil(expires.Sub(now).Seconds())
	return "Second-" + strconv.FormatInt(int64(max(secs, 1)), 10)
}
