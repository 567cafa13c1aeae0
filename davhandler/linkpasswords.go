package davhandler

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// How long, and for how many links and passwords at most, a password
// bcrypt accepted is taken again without bcrypt: a client sends it with
// every request (rclone copying a tree sends hundreds), and bcrypt costs
// tens of milliseconds of CPU each time.
const (
	linkPasswordTTL       = 10 * time.Minute
	maxLinkPasswordsKnown = 1024
)

// passwordCache remembers the passwords that opened links lately, by a
// digest of the link, its password hash and the password: a changed
// password or a deleted link is never matched again.
type passwordCache struct {
	mu     sync.Mutex
	ttl    time.Duration
	max    int
	opened map[[sha256.Size]byte]time.Time
}

func newPasswordCache(ttl time.Duration, max int) *passwordCache {
	return &passwordCache{ttl: ttl, max: max, opened: map[[sha256.Size]byte]time.Time{}}
}

// known reports whether password opened link lately.
func (c *passwordCache) known(link storage.Share, password string, now time.Time) bool {
	key := passwordKey(link, password)
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.opened[key]
	return ok && now.Before(until)
}

// remember notes that password opened link at now.
func (c *passwordCache) remember(link storage.Share, password string, now time.Time) {
	c.rememberKey(passwordKey(link, password), now)
}

func (c *passwordCache) rememberKey(key [sha256.Size]byte, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.opened) >= c.max {
		for k, until := range c.opened {
			if !now.Before(until) {
				delete(c.opened, k)
			}
		}
	}
	if len(c.opened) >= c.max {
		// Full of live entries: start over rather than track their age.
		clear(c.opened)
	}
	c.opened[key] = now.Add(c.ttl)
}

func passwordKey(link storage.Share, password string) [sha256.Size]byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(link.ID), link.PasswordHash, []byte(password)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
