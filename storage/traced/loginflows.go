package traced

import (
	"context"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The storage.LoginFlows methods. Their spans name no key: a key leads to
// a flow as its token does not, but it need not be shown either.

func (b *Backend) CreateLoginFlow(ctx context.Context, f storage.LoginFlow) error {
	return call0(ctx, "CreateLoginFlow", "", func(ctx context.Context) error {
		return b.next.CreateLoginFlow(ctx, f)
	})
}

func (b *Backend) LoginFlow(ctx context.Context, loginKey string, now time.Time) (storage.LoginFlow, error) {
	return call(ctx, "LoginFlow", "", func(ctx context.Context) (storage.LoginFlow, error) {
		return b.next.LoginFlow(ctx, loginKey, now)
	})
}

func (b *Backend) GrantLoginFlow(ctx context.Context, loginKey, user string, sealed []byte, now time.Time) error {
	return call0(ctx, "GrantLoginFlow", "", func(ctx context.Context) error {
		return b.next.GrantLoginFlow(ctx, loginKey, user, sealed, now)
	})
}

func (b *Backend) DeleteLoginFlow(ctx context.Context, loginKey string) error {
	return call0(ctx, "DeleteLoginFlow", "", func(ctx context.Context) error {
		return b.next.DeleteLoginFlow(ctx, loginKey)
	})
}

func (b *Backend) TakeLoginFlow(ctx context.Context, pollKey string, now time.Time) (storage.LoginFlow, error) {
	return call(ctx, "TakeLoginFlow", "", func(ctx context.Context) (storage.LoginFlow, error) {
		return b.next.TakeLoginFlow(ctx, pollKey, now)
	})
}
