// Package passwordguard runs password checks so that no pattern of
// requests makes a node compare more passwords than a budget allows, nor
// more at once than it has CPUs for: every check takes an attempt of its
// key's budget before the compare, from a store every node shares
// (storage.AttemptBudgets), and compares run in a bounded number of
// slots. A hash compare (bcrypt) costs tens of milliseconds of CPU, so
// without both a burst of guesses both beats a per-key limit and starves
// every other request of the node.
package passwordguard

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Defaults of Options.
const (
	// DefaultMaxWait is how long a check waits for a compare slot: a few
	// compares' time, so that a short burst of rightful checks queues
	// rather than being refused.
	DefaultMaxWait = time.Second
	// BusyRetryAfter is the wait a refusal for want of a slot names.
	BusyRetryAfter = time.Second
)

// Refusal is a check that compared nothing: its key had no attempt left,
// or every compare slot stayed taken for longer than the guard waits
// (Busy). RetryAfter is how long the client should wait.
type Refusal struct {
	Busy       bool
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	if r.Busy {
		return fmt.Sprintf("too many passwords are being checked: retry in %s", r.RetryAfter)
	}
	return fmt.Sprintf("too many attempts: retry in %s", r.RetryAfter)
}

// Options configure a Guard.
type Options struct {
	// Budgets keeps the attempts. Required.
	Budgets storage.AttemptBudgets
	// MaxConcurrent bounds the compares run at once; 0 means half the
	// CPUs Go uses, at least one, so that compares never take every core
	// from the other requests.
	MaxConcurrent int
	// MaxWait bounds how long a check waits for a slot; 0 means
	// DefaultMaxWait.
	MaxWait time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Guard runs password checks under budgets and a bound on the compares
// running at once. It is safe for concurrent use; one Guard serves every
// kind of password of a handler, so that they share its slots.
type Guard struct {
	budgets storage.AttemptBudgets
	slots   chan struct{}
	maxWait time.Duration
	now     func() time.Time
}

// New returns the Guard of opts.
func New(opts Options) (*Guard, error) {
	if opts.Budgets == nil {
		return nil, errors.New("passwordguard: a store of attempt budgets is required")
	}
	n := opts.MaxConcurrent
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0)/2, 1)
	}
	g := &Guard{budgets: opts.Budgets, slots: make(chan struct{}, n), maxWait: opts.MaxWait, now: opts.Now}
	if g.maxWait <= 0 {
		g.maxWait = DefaultMaxWait
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// Blocked refuses at once, with a *Refusal, a key that has no attempt
// left under b, taking nothing: a check that needs no compare (a password
// known to be right) is refused as one that does.
func (g *Guard) Blocked(ctx context.Context, key string, b storage.AttemptBudget) error {
	wait, err := g.budgets.AttemptWait(ctx, key, b, g.now())
	if err != nil {
		return fmt.Errorf("reading the attempts of a password: %w", err)
	}
	if wait > 0 {
		return &Refusal{RetryAfter: wait}
	}
	return nil
}

// Check takes an attempt of key under b and then, in a slot, runs
// compare, which reports whether the password is right. Only a right
// password gives its attempt back: the budget counts the wrong ones, those
// being compared, and those that waited in vain for a slot (a busy
// *Refusal) or were abandoned. So a burst spends its key's budget however
// busy the node is, and only the key's own client pays for it.
func (g *Guard) Check(ctx context.Context, key string, b storage.AttemptBudget, compare func() bool) (bool, error) {
	return g.CheckAll(ctx, []Budget{{key, b}}, compare)
}

// Budget is a key and the budget its attempts are taken under.
type Budget struct {
	Key    string
	Budget storage.AttemptBudget
}

// CheckAll is Check under several budgets at once (of a user and of a
// client's address, say): an attempt of each is taken before the
// compare, and a key without one left refuses the check and gives back
// those taken before it, which then paid for nothing.
func (g *Guard) CheckAll(ctx context.Context, budgets []Budget, compare func() bool) (bool, error) {
	at := g.now()
	for i, b := range budgets {
		taken, wait, err := g.budgets.TakeAttempt(ctx, b.Key, b.Budget, at)
		if err == nil && taken {
			continue
		}
		if back := g.giveBack(budgets[:i], at); back != nil && err == nil {
			err = back
		}
		if err != nil {
			return false, fmt.Errorf("taking an attempt of a password: %w", err)
		}
		return false, &Refusal{RetryAfter: wait}
	}
	if err := g.acquire(ctx); err != nil {
		return false, err
	}
	right := compare()
	<-g.slots
	if right {
		return true, g.giveBack(budgets, at)
	}
	return false, nil
}

// acquire takes a compare slot, waiting at most maxWait.
func (g *Guard) acquire(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(g.maxWait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-timer.C:
		return &Refusal{Busy: true, RetryAfter: BusyRetryAfter}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveBack returns the attempts taken at at of budgets (a right
// password's), even when the request that took them is gone: they are
// owed.
func (g *Guard) giveBack(budgets []Budget, at time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, b := range budgets {
		if err := g.budgets.ReturnAttempt(ctx, b.Key, at); err != nil {
			return fmt.Errorf("giving back an attempt of a password: %w", err)
		}
	}
	return nil
}

// AddressPrefix is the part of a client's address its budget is kept by:
// an IPv6 address's /64, which one client has whole, and an IPv4 address
// itself (also when written as IPv4-mapped IPv6). What does not parse as
// an address is kept as it is.
func AddressPrefix(client string) string {
	addr, err := netip.ParseAddr(client)
	if err != nil {
		return client
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	p, err := addr.WithZone("").Prefix(64)
	if err != nil {
		return client
	}
	return p.String()
}
