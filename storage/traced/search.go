package traced

import (
	"context"

	"github.com/davspaces/davspaces/storage"
)

// The storage.Searcher methods.

func (b *Backend) SearchNames(ctx context.Context, scope storage.SearchScope, pattern string) (storage.Found, error) {
	return call(ctx, "SearchNames", scope.SpaceID, func(ctx context.Context) (storage.Found, error) {
		return b.next.SearchNames(ctx, scope, pattern)
	})
}

func (b *Backend) SearchFavorites(ctx context.Context, scope storage.SearchScope, user string) (storage.Found, error) {
	return call(ctx, "SearchFavorites", scope.SpaceID, func(ctx context.Context) (storage.Found, error) {
		return b.next.SearchFavorites(ctx, scope, user)
	})
}
