package boltstore

import (
	"strings"
	"testing"
	"time"
)

func TestCountOpenUploads(t *testing.T) {
	f := newFixture(t)
	f.newSession(t, "a", 4, time.Hour)
	for _, id := range []string{"einstein/ng/1", "einstein/ng/2", "einstein/v1/3"} {
		f.newChunkedUpload(t, id, time.Hour)
	}
	kindOf := func(id string) string { return strings.Split(id, "/")[1] }
	open, err := f.s.CountOpenUploads(ctx, kindOf)
	if err != nil {
		t.Fatal(err)
	}
	if open.Sessions != 1 || open.Chunked["ng"] != 2 || open.Chunked["v1"] != 1 {
		t.Fatalf("open uploads = %+v, want 1 session, 2 ng and 1 v1", open)
	}
}
