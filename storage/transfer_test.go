package storage

import (
	"errors"
	"testing"
)

// TestCheckTransfer runs the rules on a tree root > a > b, with a file f
// in root and a file g in a.
func TestCheckTransfer(t *testing.T) {
	nodes := map[string]Node{
		"root": {ID: "root", Kind: KindFolder},
		"a":    {ID: "a", ParentID: "root", Name: "a", Kind: KindFolder},
		"b":    {ID: "b", ParentID: "a", Name: "b", Kind: KindFolder},
		"f":    {ID: "f", ParentID: "root", Name: "f", Kind: KindFile},
		"g":    {ID: "g", ParentID: "a", Name: "g", Kind: KindFile},
	}
	lookupErr := errors.New("lookup failed")
	lookups := func(failing bool) TransferLookups {
		return TransferLookups{
			Target: func() (Node, bool, error) { panic("replaced by each case") },
			IsAncestor: func(ancestorID, id string) (bool, error) {
				if failing {
					return false, lookupErr
				}
				for id != "" {
					if id == ancestorID {
						return true, nil
					}
					id = nodes[id].ParentID
				}
				return false, nil
			},
		}
	}
	tests := []struct {
		name      string
		src, dst  string
		newName   string
		overwrite bool
		failing   bool
		want      TransferOutcome
		wantErr   error
	}{
		{"onto itself", "a", "root", "a", false, false, TransferNoop, nil},
		{"file to a free name", "f", "a", "f2", false, false, TransferCreates, nil},
		{"folder below itself", "a", "b", "x", false, false, 0, ErrDestinationInsideSource},
		{"folder into itself", "a", "a", "x", false, false, 0, ErrDestinationInsideSource},
		{"onto an existing name", "f", "a", "g", false, false, 0, ErrExists},
		{"onto an existing name with overwrite", "f", "a", "g", true, false, TransferReplaces, nil},
		{"onto an ancestor of the source", "g", "root", "a", true, false, 0, ErrDestinationContainsSource},
		{"lookup fails", "a", "b", "x", false, true, 0, lookupErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			look := lookups(tt.failing)
			look.Target = func() (Node, bool, error) {
				for _, n := range nodes {
					if n.ParentID == tt.dst && n.Name == tt.newName {
						return n, true, nil
					}
				}
				return Node{}, false, nil
			}
			tr := Transfer{NodeID: tt.src, NewParentID: tt.dst, NewName: tt.newName, Overwrite: tt.overwrite}
			got, err := CheckTransfer(tr, nodes[tt.src], nodes[tt.dst], look)
			if !errors.Is(err, tt.wantErr) || (err == nil && got != tt.want) {
				t.Fatalf("CheckTransfer = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
