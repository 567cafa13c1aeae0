package storage

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/davspaces/davspaces/checksum"
)

func TestValidCommit(t *testing.T) {
	tests := []struct {
		name     string
		c        Commit
		storable func(string) bool
		ok       bool
	}{
		{"new name", Commit{ParentID: "p", Name: "f.txt"}, nil, true},
		{"invalid name", Commit{ParentID: "p", Name: ".."}, nil, false},
		{"name the store cannot hold", Commit{ParentID: "p", Name: "\xff"}, utf8.ValidString, false},
		{"node id, name ignored", Commit{NodeID: "n", Name: ".."}, nil, true},
		{"longest content type", Commit{ParentID: "p", Name: "f", ContentType: strings.Repeat("t", MaxContentTypeBytes)}, nil, true},
		{"content type too long", Commit{ParentID: "p", Name: "f", ContentType: strings.Repeat("t", MaxContentTypeBytes+1)}, nil, false},
		{"content type too long, by id", Commit{NodeID: "n", ContentType: strings.Repeat("t", 10<<20)}, nil, false},
	}
	for _, tt := range tests {
		err := ValidCommit(tt.c, tt.storable)
		if tt.ok != (err == nil) {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, not an ErrInvalid", tt.name, err)
		}
	}
}

func TestCommitTarget(t *testing.T) {
	tests := []struct {
		c    Commit
		want string
	}{
		{Commit{NodeID: "n1", Name: "ignored"}, "node n1"},
		{Commit{ParentID: "p", Name: "a b"}, `"a b"`},
	}
	for _, tt := range tests {
		if got := tt.c.Target(); got != tt.want {
			t.Errorf("Target(%+v) = %s, want %s", tt.c, got, tt.want)
		}
	}
}

func TestCommitUnchanged(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	sums := checksum.Sums{SHA1: "s1", MD5: "m1", Adler32: "a1"}
	file := Node{Kind: KindFile, Size: 4, ModTime: mtime, Checksums: sums}
	keep := Commit{Name: "f", ModTime: mtime, KeepSame: true}
	tests := []struct {
		name   string
		c      Commit
		old    Node
		exists bool
		size   int64
		sums   checksum.Sums
		want   bool
	}{
		{"the same file", keep, file, true, 4, sums, true},
		{"the same file, the time in another zone", Commit{Name: "f", ModTime: mtime.In(time.FixedZone("x", 3600)), KeepSame: true}, file, true, 4, sums, true},
		{"without KeepSame", Commit{Name: "f", ModTime: mtime}, file, true, 4, sums, false},
		{"no file there", keep, Node{}, false, 4, sums, false},
		{"a folder there", keep, Node{Kind: KindFolder, ModTime: mtime}, true, 0, checksum.Sums{}, false},
		{"another size", keep, file, true, 5, sums, false},
		{"another SHA1", keep, file, true, 4, checksum.Sums{SHA1: "s2", MD5: "m1"}, false},
		{"another MD5", keep, file, true, 4, checksum.Sums{SHA1: "s1", MD5: "m2"}, false},
		{"another time", Commit{Name: "f", ModTime: mtime.Add(time.Second), KeepSame: true}, file, true, 4, sums, false},
		{"no time", Commit{Name: "f", KeepSame: true}, file, true, 4, sums, false},
		{"a chunked upload's end", Commit{Name: "f", ModTime: mtime, KeepSame: true, Assembles: "u1"}, file, true, 4, sums, false},
		{"digests still to come on both", keep, Node{Kind: KindFile, Size: 4, ModTime: mtime, Checksums: checksum.Sums{Adler32: "a1"}}, true, 4, checksum.Sums{Adler32: "a1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Unchanged(tt.old, tt.exists, tt.size, tt.sums); got != tt.want {
				t.Fatalf("Unchanged = %v, want %v", got, tt.want)
			}
		})
	}
}
