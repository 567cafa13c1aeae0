package identity

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of NewClientLimiter's callers.
const (
	// DefaultClientRate is the steady rate of new tokens a client address
	// may have checked: an office behind one address signs in a few users
	// a second at most.
	DefaultClientRate = 2.0
	// DefaultClientBurst lets a client start many connections at once, each
	// with its token.
	DefaultClientBurst = 20
	// DefaultClientLimiters bounds the addresses remembered; the least
	// recently seen one is forgotten first.
	DefaultClientLimiters = 10000
)

// ClientLimiter gives each client (a key such as its address) a token
// bucket for the checks that cost a round trip to the provider, so that no
// client can make the server flood the provider with random tokens. It
// remembers at most size clients. It is safe for concurrent use.
type ClientLimiter struct {
	limit rate.Limit
	burst int
	size  int
	now   func() time.Time

	mu      sync.Mutex
	clients map[string]*list.Element
	order   *list.List // of *clientBucket, front: most recently seen
}

type clientBucket struct {
	client string
	bucket *rate.Limiter
}

// NewClientLimiter returns a limiter allowing perSecond checks per client
// with bursts of burst, remembering size clients (non-positive values mean
// the defaults). now is the clock; nil means time.Now.
func NewClientLimiter(perSecond float64, burst, size int, now func() time.Time) *ClientLimiter {
	if perSecond <= 0 {
		perSecond = DefaultClientRate
	}
	if now == nil {
		now = time.Now
	}
	return &ClientLimiter{
		limit:   rate.Limit(perSecond),
		burst:   orDefault(max(burst, 0), DefaultClientBurst),
		size:    orDefault(max(size, 0), DefaultClientLimiters),
		now:     now,
		clients: make(map[string]*list.Element),
		order:   list.New(),
	}
}

// Allow takes one check from client's bucket. When the bucket is empty it
// takes nothing and reports how long until a check is allowed.
func (l *ClientLimiter) Allow(client string) (ok bool, wait time.Duration) {
	now := l.now()
	r := l.bucket(client).ReserveN(now, 1)
	if wait = r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// bucket returns client's bucket, making it (full) when the client is new
// and forgetting the least recently seen client when too many are known.
func (l *ClientLimiter) bucket(client string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.clients[client]; ok {
		l.order.MoveToFront(el)
		return el.Value.(*clientBucket).bucket
	}
	b := &clientBucket{client: client, bucket: rate.NewLimiter(l.limit, l.burst)}
	l.clients[client] = l.order.PushFront(b)
	if l.order.Len() > l.size {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.clients, oldest.Value.(*clientBucket).client)
	}
	return b.bucket
}

// len returns the number of clients remembered.
func (l *ClientLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
