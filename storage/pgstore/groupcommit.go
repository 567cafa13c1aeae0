package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// Commits of files into one space queue for the space's row lock: each
// would wait for the one before it to take the lock, run its statements
// and make its transaction durable. A group commit records the commits
// that queued meanwhile in one transaction instead, each in a savepoint
// of its own, so that they share one lock and one flush to disk. A commit
// that finds no queue runs at once, as before.
const (
	// groupMax bounds how many commits one transaction records.
	groupMax = 64
	// groupBudget is how long a group's transaction takes commits in; the
	// ones left wait for the next, so that it stays well under a second.
	groupBudget = 200 * time.Millisecond
)

// commitGroups queues the commits of each space that wait while a group
// of the same space records.
type commitGroups struct {
	mu sync.Mutex
	// queued holds, per space with a group recording, the commits that
	// arrived since; a space with a group recording has an entry, maybe
	// empty.
	queued map[string][]*queuedCommit
}

// queuedCommit is one commit waiting in a group: fn records it in a
// change of the group's transaction.
type queuedCommit struct {
	ctx context.Context
	fn  func(*change) error
	// turn receives the outcome: the commit's error, or lead when its
	// committer records the next group itself.
	turn chan groupTurn
}

type groupTurn struct {
	err  error
	lead bool
}

// groupChange runs fn as one change of the space's tree, like change,
// recorded in one transaction together with the other commits of the
// space that queue while one records.
func (s *Store) groupChange(ctx context.Context, spaceID string, fn func(*change) error) error {
	q := &queuedCommit{ctx: ctx, fn: fn, turn: make(chan groupTurn, 1)}
	g := &s.groups
	g.mu.Lock()
	if g.queued == nil {
		g.queued = map[string][]*queuedCommit{}
	}
	waiting, recording := g.queued[spaceID]
	if recording {
		g.queued[spaceID] = append(waiting, q)
		g.mu.Unlock()
		// A turn always comes: the recording committer hands the queue on.
		if t := <-q.turn; !t.lead {
			return t.err
		}
	} else {
		g.queued[spaceID] = nil
		g.mu.Unlock()
	}
	return s.leadGroup(spaceID, q)
}

// leadGroup records the group of first and the commits queued before it
// (first is at the queue's head: it was taken off it, or it started it),
// hands the rest of the queue to its oldest commit, and returns first's
// outcome.
func (s *Store) leadGroup(spaceID string, first *queuedCommit) error {
	g := &s.groups
	group := []*queuedCommit{first}
	g.mu.Lock()
	rest := g.queued[spaceID]
	n := min(len(rest), groupMax-1)
	group = append(group, rest[:n]...)
	g.queued[spaceID] = rest[n:]
	g.mu.Unlock()

	outcomes := s.recordGroup(spaceID, group)
	for i, q := range group[1:] {
		q.turn <- groupTurn{err: outcomes[i+1]}
	}

	g.mu.Lock()
	if next := g.queued[spaceID]; len(next) > 0 {
		g.queued[spaceID] = next[1:]
		next[0].turn <- groupTurn{lead: true}
	} else {
		delete(g.queued, spaceID)
	}
	g.mu.Unlock()
	return outcomes[0]
}

// recordGroup records group's commits and returns their outcomes, in
// group's order. One commit alone is a change of its own; a group shares a
// transaction, each commit in a savepoint so that a refused one changes
// nothing and the others stand. A commit the group did not record (the
// budget passed, PostgreSQL aborted it for a deadlock, the transaction
// failed as a whole) is recorded alone afterwards; a database cut off
// meanwhile is every commit's outcome.
func (s *Store) recordGroup(spaceID string, group []*queuedCommit) []error {
	outcomes := make([]error, len(group))
	recorded := make([]bool, len(group))
	if len(group) > 1 {
		// Not the first committer's context: its end must not cut off the
		// others' commits. Each commit's statements still use its own.
		ctx := context.WithoutCancel(group[0].ctx)
		err := s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
			clear(recorded)
			start := time.Now()
			for i, q := range group {
				if time.Since(start) > groupBudget {
					break
				}
				err := inSavepoint(q.ctx, tx, func(sp pgx.Tx) error { return q.fn(s.changeIn(sp)) })
				if retryable(err) {
					continue
				}
				outcomes[i], recorded[i] = err, true
			}
			return nil
		})
		switch {
		case errors.Is(err, storage.ErrUnavailable):
			// Cut off, the transaction may have committed, as a lone
			// commit's may: each commit reports it.
			for i := range outcomes {
				outcomes[i] = err
			}
			return outcomes
		case err != nil:
			clear(recorded)
		}
	}
	for i, q := range group {
		if !recorded[i] {
			outcomes[i] = s.change(q.ctx, spaceID, q.fn)
		}
	}
	return outcomes
}

// inSavepoint runs fn in a savepoint of tx, which it rolls back to when
// fn fails.
func inSavepoint(ctx context.Context, tx pgx.Tx, fn func(pgx.Tx) error) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(sp); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			// The transaction is lost: recordGroup records them all again.
			return errors.Join(err, rbErr)
		}
		return err
	}
	return sp.Commit(ctx)
}
