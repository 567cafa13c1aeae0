package storetest

import (
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// Move and Copy apply Transfer.Conditions to the source: If-Match must
// name its current etag, and If-None-Match always fails (the source
// exists). A failed condition changes nothing.
func testTransferConditions(t *testing.T, f *fixture) {
	type transferFunc func(storage.Transfer) (storage.Node, bool, error)
	ops := []struct {
		name string
		do   transferFunc
	}{
		{"Move", func(tr storage.Transfer) (storage.Node, bool, error) { return f.s.Move(f.ctx, f.space.ID, tr) }},
		{"Copy", func(tr storage.Transfer) (storage.Node, bool, error) { return f.s.Copy(f.ctx, f.space.ID, tr) }},
	}
	tests := []struct {
		name       string
		conditions func(src storage.Node) storage.Conditions
		overwrite  bool
		want       error
	}{
		{"If-Match other etag", func(storage.Node) storage.Conditions {
			return storage.Conditions{IfMatch: "does-not-match"}
		}, false, storage.ErrPrecondition},
		{"If-Match other etag onto an existing target", func(storage.Node) storage.Conditions {
			return storage.Conditions{IfMatch: "does-not-match"}
		}, true, storage.ErrPrecondition},
		{"If-None-Match", func(storage.Node) storage.Conditions {
			return storage.Conditions{IfNoneMatch: true}
		}, false, storage.ErrPrecondition},
		{"If-Match current etag", func(src storage.Node) storage.Conditions {
			return storage.Conditions{IfMatch: src.ETag}
		}, false, nil},
	}
	for _, op := range ops {
		for _, tt := range tests {
			t.Run(op.name+"/"+tt.name, func(t *testing.T) {
				dir := f.mkdir(t, f.root(), op.name+" "+tt.name)
				src := f.put(t, dir.ID, "src", "content")
				f.put(t, dir.ID, "existing", "old")
				before := f.names(t, dir.ID)
				target := "new"
				if tt.overwrite {
					target = "existing"
				}
				_, _, err := op.do(storage.Transfer{NodeID: src.ID, NewParentID: dir.ID, NewName: target,
					Overwrite: tt.overwrite, Conditions: tt.conditions(src)})
				wantErr(t, op.name, err, tt.want)
				if tt.want == nil {
					return
				}
				if names := f.names(t, dir.ID); !slices.Equal(names, before) {
					t.Fatalf("failed %s changed the folder: %v, want %v", op.name, names, before)
				}
				if got := f.node(t, src.ID); got != src {
					t.Fatalf("failed %s changed the source: %+v", op.name, got)
				}
			})
		}
	}
}
