package graph

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// BenchmarkSharedWithMe: marie's sharedWithMe with 200 folders of
// einstein's shared with her, each judged live.
func BenchmarkSharedWithMe(b *testing.B) {
	e := newEnv(b)
	personal := e.personalID("einstein")
	ctx := context.Background()
	for i := range 200 {
		n, err := e.store.Mkdir(ctx, personal, personal, fmt.Sprintf("folder %d", i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.store.CreateShare(ctx, storage.Share{Kind: storage.ShareWithUser, SpaceID: personal, NodeID: n.ID,
			Creator: "einstein", Grantee: "marie", Role: storage.ShareViewer}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if rec := e.doJSON("marie", http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", nil, nil); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
