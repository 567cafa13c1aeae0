package davhandler

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// Finding 4 of issue 17, its second gap: a claimed chunked upload keeps
// its reservation until the commit of the assembled file turns it into
// use. The assembly's own check before it copies the parts counts that
// reservation as room for the file, so an upload that fills the quota
// exactly still assembles, by chunking NG and by v1 chunks, and ends
// with its reservation gone.
func TestAssemblyFillingTheQuota(t *testing.T) {
	e := newEnv(t, withChunks)
	e.store.SetPersonalQuota(1000)
	spaceID := personalSpaceID(t, e, "einstein")
	wantUsage := func(want storage.Usage) {
		t.Helper()
		if u, err := e.store.Usage(context.Background(), spaceID); err != nil || u != want {
			t.Fatalf("usage = %+v, %v; want %+v", u, err, want)
		}
	}

	wantStatus(t, e.do("einstein", "MKCOL", ngPath("einstein", "full"), "", "OC-Total-Length", "1000"), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", "full", "1"), strings.Repeat("a", 600)), http.StatusCreated)
	wantStatus(t, e.do("einstein", http.MethodPut, ngPath("einstein", "full", "2"), strings.Repeat("b", 400)), http.StatusCreated)
	wantUsage(storage.Usage{Reserved: 1000})
	wantStatus(t, e.do("einstein", "MOVE", ngPath("einstein", "full", ".file"), "",
		"Destination", "/webdav/ng.bin", "OC-Total-Length", "1000"), http.StatusCreated)
	wantUsage(storage.Usage{Files: 1000, Nodes: 1})
	wantStatus(t, e.do("einstein", http.MethodDelete, "/webdav/ng.bin", ""), http.StatusNoContent)
	wantUsage(storage.Usage{Trash: 1000, Nodes: 1})
	// Emptied, the trash gives the space back for the next upload.
	wantStatus(t, e.do("einstein", http.MethodDelete, trashPath(spaceID), ""), http.StatusNoContent)
	wantUsage(storage.Usage{})

	wantStatus(t, e.v1Put("einstein", "/webdav", "v1.bin", 2, 0, strings.Repeat("c", 500), "OC-Total-Length", "1000"), http.StatusCreated)
	wantUsage(storage.Usage{Reserved: 1000})
	rec := e.v1Put("einstein", "/webdav", "v1.bin", 2, 1, strings.Repeat("d", 500), "OC-Total-Length", "1000")
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("ETag") == "" {
		t.Fatalf("the last v1 chunk answered without an ETag: the file was not assembled")
	}
	wantUsage(storage.Usage{Files: 1000, Nodes: 1})
}
