package pgstore

import (
	"strings"
	"testing"
)

func TestCountOpenUploads(t *testing.T) {
	s := openTestStore(t, Options{})
	insertTree(t, s, "sp")
	newTestSession(t, s, "sp", 10)
	for _, id := range []string{"u/ng/1", "u/ng/2", "u/v1/3"} {
		newTestChunkedUpload(t, s, id)
	}
	kindOf := func(id string) string { return strings.Split(id, "/")[1] }
	open, err := s.CountOpenUploads(t.Context(), kindOf)
	if err != nil {
		t.Fatal(err)
	}
	if open.Sessions != 1 || open.Chunked["ng"] != 2 || open.Chunked["v1"] != 1 {
		t.Fatalf("open uploads = %+v, want 1 session, 2 ng and 1 v1", open)
	}
}
