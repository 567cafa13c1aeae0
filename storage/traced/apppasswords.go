package traced

import (
	"context"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The storage.AppPasswords methods. Their spans name no id nor user: an
// id is half of a password's text.

func (b *Backend) CreateAppPassword(ctx context.Context, p storage.AppPassword) error {
	return call0(ctx, "CreateAppPassword", "", func(ctx context.Context) error {
		return b.next.CreateAppPassword(ctx, p)
	})
}

func (b *Backend) AppPasswords(ctx context.Context, user string) ([]storage.AppPassword, error) {
	return call(ctx, "AppPasswords", "", func(ctx context.Context) ([]storage.AppPassword, error) {
		return b.next.AppPasswords(ctx, user)
	})
}

func (b *Backend) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	return call(ctx, "AppPassword", "", func(ctx context.Context) (storage.AppPassword, error) {
		return b.next.AppPassword(ctx, id)
	})
}

func (b *Backend) DeleteAppPassword(ctx context.Context, user, id string) error {
	return call0(ctx, "DeleteAppPassword", "", func(ctx context.Context) error {
		return b.next.DeleteAppPassword(ctx, user, id)
	})
}

func (b *Backend) TouchAppPassword(ctx context.Context, id string, at time.Time) error {
	return call0(ctx, "TouchAppPassword", "", func(ctx context.Context) error {
		return b.next.TouchAppPassword(ctx, id, at)
	})
}
