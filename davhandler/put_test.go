package davhandler

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/requestbody"

	"github.com/davspaces/davspaces/storage"
)

// untouchableBody fails the test when the handler reads it.
type untouchableBody struct{ t testing.TB }

func (b untouchableBody) Read([]byte) (int, error) {
	b.t.Error("the request body was read")
	return 0, io.ErrUnexpectedEOF
}

// TestPutQuotaCheckedBeforeBody: a Content-Length the free quota cannot hold
// is refused with 507 before a byte of the body is read.
func TestPutQuotaCheckedBeforeBody(t *testing.T) {
	e := newEnv(t)
	setQuota(t, e, 10)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/a", "123456"), http.StatusCreated)
	tests := []struct {
		name, path string
		length     int64
		status     int
	}{
		{"new file too large", "/dav/spaces/physics/b", 5, http.StatusInsufficientStorage},
		{"replacement grows too much", "/dav/spaces/physics/a", 11, http.StatusInsufficientStorage},
		{"far beyond", "/dav/spaces/physics/b", 1 << 40, http.StatusInsufficientStorage},
		{"no quota", "/webdav/b", 1 << 40, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("PUT", tt.path, untouchableBody{t})
			req.ContentLength = tt.length
			req.SetBasicAuth("einstein", "x")
			rec := httptest.NewRecorder()
			if tt.status == 0 {
				// Only the store can refuse an unlimited space; the body is read.
				req.Body = io.NopCloser(strings.NewReader("small"))
				req.ContentLength = 5
				e.h.ServeHTTP(rec, req)
				wantStatus(t, rec, http.StatusCreated)
				return
			}
			e.h.ServeHTTP(rec, req)
			wantError(t, rec, tt.status, "InsufficientStorage", "quota")
		})
	}
	// What fits still goes in: a replacement counts only the difference.
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/a", "1234567890"), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "GET", "/dav/spaces/physics/b", ""), http.StatusNotFound)
}

// TestPutNodeCapCheckedBeforeBody: a new file in a space at its node cap
// (storage.NodeCap) is refused with 507 before a byte of the body is
// read, as one its quota cannot hold; replacing a file adds no node and
// still goes in.
func TestPutNodeCapCheckedBeforeBody(t *testing.T) {
	e := newEnv(t)
	setQuota(t, e, 1<<20)
	limit := storage.NodeCap(1<<20, 0)
	for i := range limit + 1 {
		rec := e.do("einstein", "PUT", fmt.Sprintf("/dav/spaces/physics/f%d", i), "")
		if rec.Code == http.StatusInsufficientStorage {
			break
		}
		wantStatus(t, rec, http.StatusCreated)
	}
	req := httptest.NewRequest("PUT", "/dav/spaces/physics/new", untouchableBody{t})
	req.ContentLength = 5
	req.SetBasicAuth("einstein", "x")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusInsufficientStorage)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/f1", "12345"), http.StatusNoContent)
}

// TestPutQuotaBeforeContinue: a client that waits for 100 Continue gets the
// 507 instead, and never has to send the body.
func TestPutQuotaBeforeContinue(t *testing.T) {
	e := newEnv(t)
	setQuota(t, e, 10)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "PUT /dav/spaces/physics/big HTTP/1.1\r\nHost: localhost\r\n"+
		"Authorization: Basic ZWluc3RlaW46eA==\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer without the body: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusInsufficientStorage {
		t.Fatalf("status %d, want 507 before 100 Continue", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `Sabre\DAV\Exception\InsufficientStorage`) {
		t.Fatalf("body %s", body)
	}
}

// TestPutBodyAndStoreFailures tells the client's faults (a body that cannot
// be read, or is larger than the server accepts) from the server's (the
// store cannot write).
func TestPutBodyAndStoreFailures(t *testing.T) {
	tests := []struct {
		name      string
		limit     int64 // of a MaxBytesReader
		caddyMax  int64 // of Caddy's request_body max_size
		body      io.Reader
		writeErr  error
		status    int
		exception string
	}{
		{name: "client breaks off", body: io.MultiReader(strings.NewReader("part"), iotest.ErrReader(io.ErrUnexpectedEOF)), status: http.StatusBadRequest, exception: "BadRequest"},
		{name: "body over the size limit", limit: 3, status: http.StatusRequestEntityTooLarge, exception: "RequestEntityTooLarge"},
		{name: "body over Caddy's max_size", caddyMax: 3, status: http.StatusRequestEntityTooLarge, exception: "RequestEntityTooLarge"},
		{name: "disk full", writeErr: fmt.Errorf("write upload: %w", storage.ErrNoSpace), status: http.StatusInsufficientStorage, exception: "InsufficientStorage"},
		{name: "store full", writeErr: fmt.Errorf("write upload: %w", storage.ErrInsufficientStorage), status: http.StatusInsufficientStorage, exception: "InsufficientStorage"},
		{name: "store failure", writeErr: errDiskOnFire, status: http.StatusInternalServerError, exception: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &failingStore{}
			e := newEnv(t, withFailingStore(fs))
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "original"), http.StatusCreated)
			fs.uploadWriteErr = tt.writeErr
			var h http.Handler = e.h
			switch {
			case tt.limit > 0:
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					r.Body = http.MaxBytesReader(w, r.Body, tt.limit)
					e.h.ServeHTTP(w, r)
				})
			case tt.caddyMax > 0:
				rb := requestbody.RequestBody{MaxSize: tt.caddyMax}
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					rb.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
						e.h.ServeHTTP(w, r)
						return nil
					}))
				})
			}
			body := tt.body
			if body == nil {
				body = strings.NewReader("too long for the limit")
			}
			req := httptest.NewRequest("PUT", "/webdav/f.txt", body)
			req.ContentLength = -1 // chunked: only reading finds the size
			req.SetBasicAuth("einstein", "x")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.exception == "" {
				wantStatus(t, rec, tt.status)
			} else {
				wantError(t, rec, tt.status, tt.exception, "")
			}
			if got := e.do("einstein", "GET", "/webdav/f.txt", ""); got.Body.String() != "original" {
				t.Fatalf("a failed PUT changed the file: %q", got.Body.String())
			}
		})
	}
}

// TestPutByFileIDFollowsTheFile: a PUT addressed by file id replaces that
// file wherever a MOVE racing with the upload put it, and fails once a
// DELETE removed it, creating nothing. (The race is staged at the moment the
// body starts to arrive.)
func TestPutByFileIDFollowsTheFile(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		race   func(e *env, space storage.Space, file storage.Node) error
		status int
		where  string // the path holding the new content, if any
	}{
		{"moved meanwhile", func(e *env, space storage.Space, file storage.Node) error {
			_, _, err := e.store.Move(ctx, space.ID, storage.Transfer{NodeID: file.ID, NewParentID: space.ID, NewName: "moved.txt"})
			return err
		}, http.StatusNoContent, "/webdav/moved.txt"},
		{"deleted meanwhile", func(e *env, space storage.Space, file storage.Node) error {
			return e.store.Remove(ctx, space.ID, file.ID, storage.Conditions{})
		}, http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &failingStore{}
			e := newEnv(t, withFailingStore(fs))
			wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "old"), http.StatusCreated)
			space, err := e.store.PersonalSpace(ctx, storage.User{ID: "einstein"})
			if err != nil {
				t.Fatal(err)
			}
			file, err := e.store.Child(ctx, space.ID, space.ID, "f.txt")
			if err != nil {
				t.Fatal(err)
			}
			fs.beforeUpload = func() {
				fs.beforeUpload = nil
				if err := tt.race(e, space, file); err != nil {
					t.Error(err)
				}
			}
			wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/"+resourceID(testStorageID, file), "new"), tt.status)
			wantStatus(t, e.do("einstein", "GET", "/webdav/f.txt", ""), http.StatusNotFound)
			if tt.where == "" {
				return
			}
			got := e.do("einstein", "GET", tt.where, "")
			if got.Body.String() != "new" || got.Header().Get("OC-FileId") != resourceID(testStorageID, file) {
				t.Fatalf("%s holds %q with id %s", tt.where, got.Body.String(), got.Header().Get("OC-FileId"))
			}
		})
	}
}
