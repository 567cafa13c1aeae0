package passwordguard

import (
	"context"
	"sync"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Memory is a storage.AttemptBudgets of one process, for a store that
// keeps none: its budgets hold for this node only, and are lost when it
// stops. It keeps at most maxKeys keys; a new one beyond them first
// forgets the keys with no attempt left in their window, then the one
// whose last attempt is the oldest.
type Memory struct {
	mu      sync.Mutex
	maxKeys int
	// attempts holds each key's attempt times, oldest first, and until
	// when the last one counts.
	attempts map[string]memoryKey
}

type memoryKey struct {
	times   []time.Time
	expires time.Time
}

var _ storage.AttemptBudgets = (*Memory)(nil)

// NewMemory returns an empty Memory of at most maxKeys keys.
func NewMemory(maxKeys int) *Memory {
	return &Memory{maxKeys: max(maxKeys, 1), attempts: map[string]memoryKey{}}
}

// AttemptWait is how long key has no attempt left.
func (m *Memory) AttemptWait(_ context.Context, key string, b storage.AttemptBudget, now time.Time) (time.Duration, error) {
	if err := storage.ValidAttempt(key, b); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return storage.AttemptWaitOf(storage.RecentAttempts(m.attempts[key].times, b, now), b, now), nil
}

// TakeAttempt takes one of key's attempts.
func (m *Memory) TakeAttempt(_ context.Context, key string, b storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	if err := storage.ValidAttempt(key, b); err != nil {
		return false, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, known := m.attempts[key]
	times, taken, wait := storage.TakeAttemptFrom(k.times, b, now)
	if !taken {
		return false, wait, nil
	}
	if !known && len(m.attempts) >= m.maxKeys {
		m.evict(now)
	}
	m.attempts[key] = memoryKey{times: times, expires: later(k.expires, now.Add(b.Window))}
	return true, 0, nil
}

// ReturnAttempt gives back the attempt of key taken at taken.
func (m *Memory) ReturnAttempt(_ context.Context, key string, taken time.Time) error {
	if err := storage.ValidAttempt(key, storage.AttemptBudget{Limit: 1, Window: 1}); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.attempts[key]
	if !ok {
		return nil
	}
	k.times = storage.ReturnAttemptFrom(k.times, taken)
	if len(k.times) == 0 {
		delete(m.attempts, key)
		return nil
	}
	m.attempts[key] = k
	return nil
}

// evict makes room for one more key.
func (m *Memory) evict(now time.Time) {
	oldestKey, oldest := "", time.Time{}
	for key, k := range m.attempts {
		if !k.expires.After(now) {
			delete(m.attempts, key)
			continue
		}
		if oldestKey == "" || k.expires.Before(oldest) {
			oldestKey, oldest = key, k.expires
		}
	}
	if len(m.attempts) >= m.maxKeys {
		delete(m.attempts, oldestKey)
	}
}

// size is how many keys are kept.
func (m *Memory) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.attempts)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
