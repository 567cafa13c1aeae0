package boltstore

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds how many writes share one transaction, so that a burst
// does not make one transaction, and the wait of its first writer, grow
// without limit.
const maxGroup = 128

// groupCommit runs write transactions so that writers arriving together
// share one bolt commit. A bolt commit costs two fdatasyncs whatever it
// holds, so with a commit of its own per write, concurrent writers mostly
// wait for each other's fsyncs. Here the writes that arrive while a commit
// is on its way to disk queue up, and the next transaction runs them all.
// Unlike bolt.DB.Batch, nothing ever waits for company: a lone writer
// commits at once, and a group is just what queued meanwhile.
//
// The writer that finds nobody committing leads: it runs the queued writes,
// answers them, and hands the lead to the first writer that queued since,
// so no writer runs more than its own group.
type groupCommit struct {
	db *bolt.DB

	mu      sync.Mutex
	queue   []*groupCall
	leading bool // some writer leads; it or its successor takes the queue

	// committed counts the transactions that committed.
	committed atomic.Uint64
}

// groupCall is one write waiting in a group.
type groupCall struct {
	fn       func(*bolt.Tx) error
	err      error
	panicked any // what fn panicked with, raised again in its own writer
	// done is closed when err is final, or when the writer is to lead.
	done chan struct{}
	lead bool
}

// update runs fn in a write transaction, possibly together with other
// calls of update, and returns once the transaction is durable or failed.
// fn may run more than once: when another write of its group fails, the
// transaction is rolled back and run again without that one.
func (g *groupCommit) update(fn func(*bolt.Tx) error) error {
	c := &groupCall{fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.leading {
		g.mu.Unlock()
		<-c.done
		if !c.lead {
			return c.result()
		}
	} else {
		g.leading = true
		g.mu.Unlock()
	}
	g.lead(c)
	return c.result()
}

// result returns the outcome of the call, panicking again with what fn
// panicked with, in the writer that called update.
func (c *groupCall) result() error {
	if c.panicked != nil {
		panic(c.panicked)
	}
	return c.err
}

// lead runs the group at the head of the queue, which starts with self,
// answers its writers and hands the lead on.
func (g *groupCommit) lead(self *groupCall) {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	g.run(group)

	for _, c := range group {
		if c != self {
			close(c.done)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	next := g.queue[0]
	next.lead = true
	close(next.done)
}

// run commits the writes of group in one transaction. A write that fails
// keeps its error and the others run again without it: each outcome is then
// the one of running the writes one after another, the failed one changing
// nothing.
func (g *groupCommit) run(group []*groupCall) {
	for len(group) > 0 {
		failed := -1
		err := g.db.Update(func(tx *bolt.Tx) error {
			for i, c := range group {
				if c.err = c.call(tx); c.err != nil {
					failed = i
					return c.err
				}
			}
			return nil
		})
		if failed < 0 {
			if err == nil {
				g.committed.Add(1)
			}
			for _, c := range group {
				c.err = err
			}
			return
		}
		// A new slice: lead still answers every writer of the original.
		group = slices.Concat(group[:failed], group[failed+1:])
	}
}

// call runs fn, turning a panic into an error for the group; result raises
// it again.
func (c *groupCall) call(tx *bolt.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			c.panicked = v
			err = fmt.Errorf("write panicked: %v", v)
		}
	}()
	return c.fn(tx)
}
