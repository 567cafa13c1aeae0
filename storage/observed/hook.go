// Package observed wraps a storage.Backend so that every store operation
// is seen by a Hook as it begins and ends: the one decorator of the
// store. Caddy's module composes the hooks it wants (Tracing, its
// latency histogram); the wrapper knows none of them. The operations'
// names are one table (ops), and the optional interfaces a store may
// have beyond storage.Backend are carried through in one place
// (features.go), so that adding a method to the store contract touches
// this package in one file.
package observed

import (
	"context"
	"time"
)

// Call is one store operation under way, as a Hook sees it.
type Call struct {
	Op Op
	// SpaceID is the space the call names; "" when it names none. At
	// End, a call that finds its space (OpPersonalSpace) has it here.
	SpaceID string
	// Start is when the call began.
	Start time.Time
}

// Hook observes store calls. Begin returns the context the store's call
// runs in (ctx itself, or one carrying what the hook started, such as a
// span); End gets that context back when the call has returned. The
// Call is passed as a value, so that observing a call allocates nothing.
type Hook interface {
	Begin(ctx context.Context, c Call) context.Context
	End(ctx context.Context, c Call, err error)
}

// Hooks is a Hook that runs each of its hooks: Begin in order, End in the
// reverse order, so that the first hook's End sees the others' done.
type Hooks []Hook

func (hs Hooks) Begin(ctx context.Context, c Call) context.Context {
	for _, h := range hs {
		ctx = h.Begin(ctx, c)
	}
	return ctx
}

func (hs Hooks) End(ctx context.Context, c Call, err error) {
	for i := len(hs) - 1; i >= 0; i-- {
		hs[i].End(ctx, c, err)
	}
}

// observation is a call begun; end ends it. A value, not a closure, so
// that observing a call allocates nothing of its own.
type observation struct {
	hook Hook
	ctx  context.Context
	call Call
}

// observe begins the call of op on spaceID ("" when the call names no
// space) and returns the context to run it in.
func (b *Backend) observe(ctx context.Context, op Op, spaceID string) (context.Context, observation) {
	c := Call{Op: op, SpaceID: spaceID, Start: time.Now()}
	ctx = b.hook.Begin(ctx, c)
	return ctx, observation{hook: b.hook, ctx: ctx, call: c}
}

// end ends the call with its error, and returns the error.
func (o observation) end(err error) error {
	o.hook.End(o.ctx, o.call, err)
	return err
}
