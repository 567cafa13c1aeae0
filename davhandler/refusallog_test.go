package davhandler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// withObservedLog sends the handler's log, from DEBUG up, to logs.
func withObservedLog(logs **observer.ObservedLogs) func(*Config) {
	return func(c *Config) {
		core, observed := observer.New(zapcore.DebugLevel)
		c.Logger = zap.New(core)
		*logs = observed
	}
}

// refusals returns the refusal entries logged, and fails the test when
// any entry of the log holds something it must never hold.
func refusals(t *testing.T, logs *observer.ObservedLogs, secrets ...string) []observer.LoggedEntry {
	t.Helper()
	for _, entry := range logs.All() {
		line := entry.Message
		for k, v := range entry.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("the log holds %q: %s", s, line)
			}
		}
	}
	return logs.FilterMessage("webdav request refused").All()
}

// A refused upload logs one DEBUG entry naming the user, the space and
// the reason, and neither the content nor the credentials.
func TestRefusedUploadLogsUserSpaceReason(t *testing.T) {
	var logs *observer.ObservedLogs
	e := newEnv(t, withObservedLog(&logs))
	e.store.SetPersonalQuota(100)
	const content = "confidential-file-content-"
	req := e.do("einstein", http.MethodPut, "/webdav/big.txt", strings.Repeat(content, 10))
	wantStatus(t, req, http.StatusInsufficientStorage)
	// The env's Basic credentials are einstein:x.
	entries := refusals(t, logs, content, "Basic ", "ZWluc3RlaW46eA==")
	if len(entries) != 1 {
		t.Fatalf("%d refusal entries, want 1: %v", len(entries), entries)
	}
	got := entries[0]
	personal := strings.TrimPrefix(e.personalSpacePath("einstein"), "/dav/spaces/"+testStorageID+"$")
	want := map[string]any{"user": "einstein", "space": personal, "reason": reasonQuota, "status": int64(507)}
	fields := got.ContextMap()
	if got.Level != zapcore.DebugLevel {
		t.Errorf("level %v, want DEBUG", got.Level)
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("%s = %v, want %v (entry %v)", k, fields[k], v, fields)
		}
	}
}

// Each limit a user may ask about is named as the reason of its refusal.
func TestRefusalReasons(t *testing.T) {
	nested := strings.Repeat("<d:x>", 200) + strings.Repeat("</d:x>", 200)
	for _, c := range []struct {
		name   string
		cfg    func(*Config)
		setup  func(e *env)
		method string
		path   string
		body   string
		hdr    []string
		status int
		reason string
		space  string
	}{
		{
			name: "max_open_uploads", cfg: func(c *Config) { withUploads(c); c.MaxOpenUploads = 1 },
			setup:  func(e *env) { e.tusStart("einstein", "/dav/spaces/physics/", "a", 10) },
			method: http.MethodPost, path: "/dav/spaces/physics/", hdr: []string{"Tus-Resumable", "1.0.0", "Upload-Length", "10", "Upload-Metadata", "filename Yg=="},
			status: http.StatusInsufficientStorage, reason: reasonMaxOpenUploads, space: "physics",
		},
		{
			name: "locked", cfg: withLocks,
			setup: func(e *env) {
				wantStatus(e.t, e.do("einstein", http.MethodPut, "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
				e.lock("einstein", "/dav/spaces/physics/f.txt", lockExclusive)
			},
			method: http.MethodPut, path: "/dav/spaces/physics/f.txt", body: "g",
			status: http.StatusLocked, reason: reasonLocked, space: "physics",
		},
		{
			name: "locks_per_user", cfg: func(c *Config) { withLocks(c); c.LockLimits.MaxPerUser = 1 },
			setup: func(e *env) {
				wantStatus(e.t, e.do("einstein", http.MethodPut, "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
				e.lock("einstein", "/dav/spaces/physics/f.txt", lockExclusive)
			},
			method: "LOCK", path: "/dav/spaces/physics/g.txt", body: lockExclusive,
			status: http.StatusLocked, reason: reasonLocksPerUser, space: "physics",
		},
		{
			name: "lock_bytes_per_user", cfg: func(c *Config) { withLocks(c); c.LockLimits.MaxBytesPerUser = 1 },
			setup: func(e *env) {
				wantStatus(e.t, e.do("einstein", http.MethodPut, "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
			},
			method: "LOCK", path: "/dav/spaces/physics/f.txt", body: lockExclusive,
			status: http.StatusLocked, reason: reasonLockBytesPerUser, space: "physics",
		},
		{
			name: "locks_per_resource", cfg: func(c *Config) { withLocks(c); c.LockLimits.MaxCovering = 1 },
			setup: func(e *env) {
				wantStatus(e.t, e.do("einstein", http.MethodPut, "/dav/spaces/physics/f.txt", "f"), http.StatusCreated)
				e.lock("marie", "/dav/spaces/physics/f.txt", lockBody("shared", "m"))
			},
			method: "LOCK", path: "/dav/spaces/physics/f.txt", body: lockBody("shared", "e"),
			status: http.StatusLocked, reason: reasonLocksPerResource, space: "physics",
		},
		{
			name: "lock_owner_max", cfg: func(c *Config) { withLocks(c); c.LockLimits.MaxOwnerBytes = 8 },
			method: "LOCK", path: "/dav/spaces/physics/f.txt", body: lockBody("exclusive", strings.Repeat("o", 20)),
			status: http.StatusBadRequest, reason: reasonLockOwnerMax,
		},
		{
			name: "max_xml_body", cfg: func(c *Config) { c.MaxXMLBytes = 16 },
			method: "PROPFIND", path: "/dav/spaces/physics/", body: `<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`, hdr: []string{"Depth", "0"},
			status: http.StatusRequestEntityTooLarge, reason: reasonMaxXMLBody,
		},
		{
			name: "xml_depth", cfg: func(*Config) {},
			method: "PROPFIND", path: "/dav/spaces/physics/", body: `<d:propfind xmlns:d="DAV:">` + nested + `</d:propfind>`, hdr: []string{"Depth", "0"},
			status: http.StatusBadRequest, reason: reasonXMLDepth,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs *observer.ObservedLogs
			e := newEnv(t, c.cfg, withObservedLog(&logs))
			if c.setup != nil {
				c.setup(e)
			}
			before := len(refusals(t, logs))
			wantStatus(t, e.do("einstein", c.method, c.path, c.body, c.hdr...), c.status)
			entries := refusals(t, logs)[before:]
			if len(entries) != 1 {
				t.Fatalf("%d refusal entries, want 1: %v", len(entries), entries)
			}
			fields := entries[0].ContextMap()
			if fields["user"] != "einstein" || fields["reason"] != c.reason {
				t.Errorf("entry %v, want user einstein, reason %s", fields, c.reason)
			}
			if c.space != "" && fields["space"] != c.space {
				t.Errorf("space %v, want %s", fields["space"], c.space)
			}
		})
	}
}
