package integration

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/davspaces/davspaces/internal/testidp"
)

// otlpReceiver is an OTLP/HTTP trace receiver on 127.0.0.1: it keeps the
// spans of every export request (protobuf, as Caddy's exporter sends by
// default) and acknowledges it.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracev1.Span
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	body, err := readOTLPBody(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var export collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range export.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	r.mu.Unlock()
	answer, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(answer)
}

// readOTLPBody reads an export request's body, gzipped or not.
func readOTLPBody(req *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil || req.Header.Get("Content-Encoding") != "gzip" {
		return body, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// received returns the spans received so far.
func (r *otlpReceiver) received() []*tracev1.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracev1.Span(nil), r.spans...)
}

// startTracedServer runs Caddy on Caddyfile.example with the tracing
// directive around the site, exporting to receiver, and issuer as its
// OpenID Connect provider.
func startTracedServer(t *testing.T, receiver *otlpReceiver, issuer string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	site := fmt.Sprintf("http://127.0.0.1:%d {\n", port)
	cfg := exampleCaddyfile(t, port, dir+"/data", serverOptions{})
	cfg = strings.Replace(cfg, site, site+"\ttracing {\n\t\tspan davspaces\n\t}\n", 1)
	run := caddyRun{dir: dir, config: cfg, url: fmt.Sprintf("http://127.0.0.1:%d", port), env: []string{
		// What Caddy's tracing module reads (autoexport and the SDK):
		// OTLP over HTTP with protobuf to the receiver, batches sent
		// within 100 ms.
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.URL,
		"OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_TRACES_SAMPLER=always_on",
		"OIDC_ISSUER=" + issuer,
	}}
	return run.start(t)
}

// TestTracesReachOTLPReceiver drives a few WebDAV requests through Caddy
// with tracing on and wants, at the test's own OTLP receiver, the store's
// operations and the calls to the identity provider as spans that are
// children of Caddy's request spans, naming the space and the operation
// and no file name or token.
func TestTracesReachOTLPReceiver(t *testing.T) {
	t.Parallel()
	receiver := newOTLPReceiver(t)
	idp := testidp.Start(t, testidp.Options{})
	s := startTracedServer(t, receiver, idp.Issuer)
	c := newClient(t, s.URL, "einstein")
	personal := spaceIDOf(c.prop("/webdav/", ocNS, "spaceid"))
	project := projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics")

	c.expect(http.StatusCreated, "PUT", "/remote.php/webdav/secret-report.txt", "the first draft")
	c.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "1")
	c.expect(http.StatusOK, "GET", "/remote.php/webdav/secret-report.txt", "")
	c.expect(http.StatusCreated, "MKCOL", "/remote.php/webdav/secret-folder", "")
	c.expect(http.StatusCreated, "MOVE", "/remote.php/webdav/secret-report.txt", "", "Destination", s.URL+"/remote.php/webdav/secret-folder/secret-report.txt")
	c.expect(http.StatusNoContent, "DELETE", "/remote.php/webdav/secret-folder", "")
	c.expect(http.StatusCreated, "PUT", "/dav/spaces/"+project+"/secret-physics.txt", "E=mc²")
	// A JWT makes Caddy fetch the provider's keys; an opaque token, ask
	// its userinfo endpoint.
	jwt, opaque := idp.Token(t, "alice"), idp.OpaqueToken(t, "alice")
	for _, token := range []string{jwt, opaque} {
		bearer := &client{t: t, base: s.URL, token: token, http: http.DefaultClient}
		bearer.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	}
	identityCalls := []string{"davspaces.identity.jwks", "davspaces.identity.userinfo"}

	want := map[string]string{ // operation: the space its span names
		"Commit":       personal,
		"ReadDirProps": personal,
		"Open":         personal,
		"Mkdir":        personal,
		"Move":         personal,
		"Remove":       personal,
	}
	var spans []*tracev1.Span
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans = receiver.received()
		if hasStoreSpans(spans, want) && hasStoreSpans(spans, map[string]string{"Commit": spaceIDOf(project)}) &&
			hasSpans(spans, identityCalls) {
			break
		}
		if time.Now().After(deadline) {
			// Stopping Caddy flushes what its exporter still holds.
			s.stop()
			spans = receiver.received()
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	requests := map[string]*tracev1.Span{} // by span id
	for _, sp := range spans {
		if sp.GetKind() == tracev1.Span_SPAN_KIND_SERVER {
			requests[string(sp.GetSpanId())] = sp
		}
	}
	if len(requests) == 0 {
		t.Fatalf("no request spans among %d received", len(spans))
	}
	stored := 0
	for _, sp := range spans {
		if !strings.HasPrefix(sp.GetName(), "davspaces.") {
			continue
		}
		for _, kv := range sp.GetAttributes() {
			if v := kv.GetValue().String(); strings.Contains(v, "secret") || strings.Contains(v, jwt) || strings.Contains(v, opaque) {
				t.Errorf("span %s: attribute %s names a file or a token: %v", sp.GetName(), kv.GetKey(), kv.GetValue())
			}
		}
		if strings.HasPrefix(sp.GetName(), "davspaces.store.") {
			stored++
		}
		parent, ok := requests[string(sp.GetParentSpanId())]
		if !ok {
			t.Errorf("span %s is not a child of a request span", sp.GetName())
			continue
		}
		if !bytes.Equal(parent.GetTraceId(), sp.GetTraceId()) {
			t.Errorf("span %s is in another trace than its request", sp.GetName())
		}
	}
	for op, space := range want {
		if !hasStoreSpans(spans, map[string]string{op: space}) {
			t.Errorf("no span davspaces.store.%s with davspaces.space.id %s", op, space)
		}
	}
	if !hasStoreSpans(spans, map[string]string{"Commit": spaceIDOf(project)}) {
		t.Errorf("no span of the commit into the project space %s", spaceIDOf(project))
	}
	if !hasSpans(spans, identityCalls) {
		t.Errorf("no spans %v of the calls to the identity provider", identityCalls)
	}
	t.Logf("%d spans received, %d of store operations, %d requests", len(spans), stored, len(requests))
}

// hasStoreSpans reports whether spans hold, for every operation of want,
// a store span of it naming the space want gives.
func hasStoreSpans(spans []*tracev1.Span, want map[string]string) bool {
	for op, space := range want {
		found := false
		for _, sp := range spans {
			if sp.GetName() == "davspaces.store."+op && stringAttribute(sp, "davspaces.space.id") == space &&
				stringAttribute(sp, "davspaces.store.operation") == op {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// hasSpans reports whether spans hold one of each name.
func hasSpans(spans []*tracev1.Span, names []string) bool {
	for _, name := range names {
		if !slices.ContainsFunc(spans, func(sp *tracev1.Span) bool { return sp.GetName() == name }) {
			return false
		}
	}
	return true
}

func stringAttribute(sp *tracev1.Span, key string) string {
	for _, kv := range sp.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// spaceIDOf is the store's id of a space from its resource id
// (<storage>$<space>).
func spaceIDOf(ref string) string {
	_, id, _ := strings.Cut(ref, "$")
	return id
}
