package identity

import (
	"container/list"
	"sync"
	"time"
)

// entry is a cached verification result: an identity or a refusal.
type entry struct {
	id      *Identity
	err     error
	expires time.Time
	// complete reports that userinfo has been consulted (or refused), so
	// missing claims are really missing.
	complete bool
}

// cache keeps verification results by token hash, at most size of them,
// evicting the least recently used.
type cache struct {
	mu    sync.Mutex
	size  int
	items map[[32]byte]*list.Element
	order *list.List // front: most recently used
}

type cacheItem struct {
	key [32]byte
	e   *entry
}

func newCache(size int) *cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &cache{size: size, items: make(map[[32]byte]*list.Element), order: list.New()}
}

// get returns the entry for key unless it expired.
func (c *cache) get(key [32]byte, now time.Time) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	it := el.Value.(*cacheItem)
	if !now.Before(it.e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return it.e, true
}

// put stores e for key, evicting the least recently used entry when full.
func (c *cache) put(key [32]byte, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*cacheItem).e = e
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheItem{key: key, e: e})
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*cacheItem).key)
	}
}

// len returns the number of entries.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
