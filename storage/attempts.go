package storage

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// AttemptBudgets keeps budgets of attempts (password checks) by key, for
// every node that shares the store: a key has at most Limit attempts
// within a sliding Window, and an attempt is taken before the work it
// pays for, so that no number of concurrent requests gets more. Keys are
// opaque to the store: the caller names what a budget is of (a link and
// a client's address prefix, a user's app passwords…).
type AttemptBudgets interface {
	// AttemptWait is how long key has no attempt left at now under b: 0
	// when one may be taken. It takes nothing.
	AttemptWait(ctx context.Context, key string, b AttemptBudget, now time.Time) (time.Duration, error)
	// TakeAttempt takes one of key's attempts at now, atomically: however
	// many take at once, on however many nodes, no more than b.Limit
	// are taken within b.Window. When none is left it takes nothing and
	// returns how long until one is.
	TakeAttempt(ctx context.Context, key string, b AttemptBudget, now time.Time) (taken bool, wait time.Duration, err error)
	// ReturnAttempt gives back the attempt of key taken at taken, one
	// that the budget is not to count (a right password); giving back an
	// attempt the store no longer holds does nothing.
	ReturnAttempt(ctx context.Context, key string, taken time.Time) error
}

// The bounds of what a budget makes a store keep: per key at most
// MaxAttemptLimit times, under a key of at most MaxAttemptKeyBytes.
const (
	MaxAttemptLimit    = 100
	MaxAttemptKeyBytes = 512
)

// AttemptBudget is how many attempts a key may take within a window.
type AttemptBudget struct {
	Limit  int
	Window time.Duration
}

// ValidAttempt checks a key and budget before a store keeps anything of
// them: ErrInvalid for an empty or too long key, a limit beyond 1 to
// MaxAttemptLimit, or a window that is not positive.
func ValidAttempt(key string, b AttemptBudget) error {
	switch {
	case key == "" || len(key) > MaxAttemptKeyBytes:
		return fmt.Errorf("attempt key of %d bytes: %w", len(key), ErrInvalid)
	case b.Limit < 1 || b.Limit > MaxAttemptLimit || b.Window <= 0:
		return fmt.Errorf("attempt budget %d per %s: %w", b.Limit, b.Window, ErrInvalid)
	}
	return nil
}

// RecentAttempts returns the times of taken that are within b's window at
// now, oldest first: the attempts the budget still counts.
func RecentAttempts(taken []time.Time, b AttemptBudget, now time.Time) []time.Time {
	start := now.Add(-b.Window)
	recent := make([]time.Time, 0, len(taken)+1)
	for _, t := range taken {
		if t.After(start) {
			recent = append(recent, t)
		}
	}
	slices.SortFunc(recent, time.Time.Compare)
	return recent
}

// AttemptWaitOf is how long a key whose recent attempts (RecentAttempts)
// are recent has none left at now: until enough of the oldest leave the
// window that fewer than b.Limit remain; 0 when fewer remain already.
func AttemptWaitOf(recent []time.Time, b AttemptBudget, now time.Time) time.Duration {
	if len(recent) < b.Limit {
		return 0
	}
	// The attempt that has to leave for one to be free.
	leaving := recent[len(recent)-b.Limit]
	return max(leaving.Add(b.Window).Sub(now), time.Nanosecond)
}

// TakeAttemptFrom is TakeAttempt on the attempts a store holds for a
// key: the attempts it is to hold after, whether one was taken, and the
// wait when none was.
func TakeAttemptFrom(taken []time.Time, b AttemptBudget, now time.Time) ([]time.Time, bool, time.Duration) {
	recent := RecentAttempts(taken, b, now)
	if wait := AttemptWaitOf(recent, b, now); wait > 0 {
		return recent, false, wait
	}
	return append(recent, now), true, 0
}

// ReturnAttemptFrom is ReturnAttempt on the attempts a store holds for a
// key: one attempt at taken, if any, leaves them.
func ReturnAttemptFrom(attempts []time.Time, taken time.Time) []time.Time {
	i := slices.IndexFunc(attempts, taken.Equal)
	if i < 0 {
		return attempts
	}
	return slices.Delete(attempts, i, i+1)
}
