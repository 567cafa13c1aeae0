package traced

import (
	"context"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The storage.AttemptBudgets methods. Their spans name no key: a key
// names a link or a user and a client's address.

func (b *Backend) AttemptWait(ctx context.Context, key string, budget storage.AttemptBudget, now time.Time) (time.Duration, error) {
	return call(ctx, "AttemptWait", "", func(ctx context.Context) (time.Duration, error) {
		return b.next.AttemptWait(ctx, key, budget, now)
	})
}

func (b *Backend) TakeAttempt(ctx context.Context, key string, budget storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	return call2(ctx, "TakeAttempt", "", func(ctx context.Context) (bool, time.Duration, error) {
		return b.next.TakeAttempt(ctx, key, budget, now)
	})
}

func (b *Backend) ReturnAttempt(ctx context.Context, key string, taken time.Time) error {
	return call0(ctx, "ReturnAttempt", "", func(ctx context.Context) error {
		return b.next.ReturnAttempt(ctx, key, taken)
	})
}
