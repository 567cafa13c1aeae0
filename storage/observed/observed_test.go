package observed_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
	"github.com/davspaces/davspaces/storage/observed"
	"github.com/davspaces/davspaces/storage/storetest"
)

// openBolt opens a real embedded store in a fresh directory.
func openBolt(t testing.TB) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatalf("boltstore.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recording returns a context carrying a recorded parent span, and the
// recorder of every span ended under it.
func recording(t *testing.T) (context.Context, trace.Span, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	ctx, parent := tp.Tracer("test").Start(t.Context(), "request")
	return ctx, parent, rec
}

// storeSpan returns the one ended store span of operation op.
func storeSpan(t *testing.T, rec *tracetest.SpanRecorder, op string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == observed.SpanPrefix+op {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %s%s, want 1", len(found), observed.SpanPrefix, op)
	}
	return found[0]
}

func attr(s sdktrace.ReadOnlySpan, key string) (string, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

// TestEveryOperationIsTraced calls every method of storage.Backend that
// takes a context through the wrapper, with zero arguments (the store
// refuses most of them, which is traced as well), and wants a span for
// each, a child of the caller's.
func TestEveryOperationIsTraced(t *testing.T) {
	ctx, parent, rec := recording(t)
	b := observed.Wrap(openBolt(t), observed.Tracing{})
	ctxType := reflect.TypeFor[context.Context]()
	backend := reflect.TypeFor[storage.Backend]()
	var ops []string
	for m := range backend.Methods() {
		if m.Type.NumIn() == 0 || m.Type.In(0) != ctxType {
			continue
		}
		ops = append(ops, m.Name)
		args := []reflect.Value{reflect.ValueOf(ctx)}
		for i := 1; i < m.Type.NumIn(); i++ {
			args = append(args, argument(m.Type.In(i)))
		}
		reflect.ValueOf(b).MethodByName(m.Name).Call(args)
	}
	if len(ops) < 40 {
		t.Fatalf("only %d operations found on storage.Backend", len(ops))
	}
	for _, op := range ops {
		s := storeSpan(t, rec, op)
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s: parent %s, want the caller's span %s", op, s.Parent().SpanID(), parent.SpanContext().SpanID())
		}
		if got, _ := attr(s, string(observed.AttrOperation)); got != op {
			t.Errorf("%s: operation attribute %q", op, got)
		}
	}
}

// argument is a zero value of t, but a readable one for an io.Reader.
func argument(t reflect.Type) reflect.Value {
	if t == reflect.TypeFor[io.Reader]() {
		return reflect.ValueOf(strings.NewReader(""))
	}
	return reflect.Zero(t)
}

// TestSpansNameSpacesNotFiles follows a file's life and wants the space id
// and the operation on its spans, and no file name, path or token
// anywhere in them.
func TestSpansNameSpacesNotFiles(t *testing.T) {
	ctx, _, rec := recording(t)
	b := observed.Wrap(openBolt(t), observed.Tracing{})
	sp, err := b.PutSpace(ctx, storage.Space{ID: "project-1", Name: "Project", Type: storage.SpaceProject, Quota: storage.NoQuota})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	dir, err := b.Mkdir(ctx, sp.ID, sp.ID, "secret-folder")
	if err != nil {
		t.Fatalf("Mkdir: %v", err)
	}
	u, err := b.NewUpload(ctx, sp.ID)
	if err != nil {
		t.Fatalf("NewUpload: %v", err)
	}
	if _, err := io.Copy(u, strings.NewReader("secret content")); err != nil {
		t.Fatalf("writing the upload: %v", err)
	}
	if _, _, err := u.Commit(ctx, storage.Commit{ParentID: dir.ID, Name: "secret-file.txt"}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := b.Child(ctx, sp.ID, dir.ID, "no-such-secret"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Child of a missing name: %v, want ErrNotFound", err)
	}

	for _, op := range []string{"PutSpace", "Mkdir", "NewUpload", "Commit", "Child"} {
		s := storeSpan(t, rec, op)
		if got, _ := attr(s, string(observed.AttrSpace)); got != sp.ID {
			t.Errorf("%s: space attribute %q, want %q", op, got, sp.ID)
		}
	}
	child := storeSpan(t, rec, "Child")
	if got, _ := attr(child, string(observed.AttrRefusal)); got != storage.ErrNotFound.Error() {
		t.Errorf("Child refused: refusal attribute %q, want %q", got, storage.ErrNotFound)
	}
	if child.Status().Code != 0 {
		t.Errorf("a refusal set the span's status to %v", child.Status())
	}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "secret") {
				t.Errorf("span %s: attribute %s = %q names a file", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
		if strings.Contains(s.Status().Description, "secret") {
			t.Errorf("span %s: status %q names a file", s.Name(), s.Status().Description)
		}
	}
}

// TestNoSpanWithoutParent: a call whose context carries no span (tracing
// off, a background sweep) records nothing.
func TestNoSpanWithoutParent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	b := observed.Wrap(openBolt(t), observed.Tracing{})
	if _, err := b.PutSpace(t.Context(), storage.Space{ID: "p", Name: "P", Type: storage.SpaceProject}); err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans without a parent span", n)
	}
}

// TestOptionalInterfacesKept: what davhandler looks for on a store (Walk,
// Health; ReadFrom on an upload) is there exactly when the store has it.
func TestOptionalInterfacesKept(t *testing.T) {
	ctx, _, rec := recording(t)
	bolt := openBolt(t)
	walking := observed.Wrap(bolt, observed.Tracing{})
	w, ok := walking.(observed.Walker)
	if !ok {
		t.Fatal("the wrapper of a store that walks does not walk")
	}
	sp, err := walking.PutSpace(ctx, storage.Space{ID: "p", Name: "P", Type: storage.SpaceProject})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	if nodes, err := w.Walk(ctx, sp.ID, sp.ID, nil); err != nil || len(nodes) != 1 {
		t.Fatalf("Walk: %v, %v", nodes, err)
	}
	storeSpan(t, rec, "Walk")

	plain := observed.Wrap(struct{ storage.Backend }{bolt}, observed.Tracing{})
	if _, ok := plain.(observed.Walker); ok {
		t.Error("the wrapper of a store that does not walk claims to walk")
	}
	if err := plain.(storage.HealthChecker).Health(ctx); err != nil {
		t.Errorf("Health of a store without backends: %v", err)
	}

	u, err := walking.NewUpload(ctx, sp.ID)
	if err != nil {
		t.Fatalf("NewUpload: %v", err)
	}
	defer u.Discard()
	if _, ok := u.(io.ReaderFrom); !ok {
		t.Fatal("the traced upload lost the store's ReadFrom")
	}
	if n, err := io.Copy(u, strings.NewReader("twelve bytes")); err != nil || n != 12 || u.Size() != 12 {
		t.Fatalf("io.Copy into the upload: %d, %v; Size %d", n, err, u.Size())
	}
	if unwrapped := walking.(interface{ Unwrap() storage.Backend }).Unwrap(); unwrapped != storage.Backend(bolt) {
		t.Errorf("Unwrap gives %T, not the store", unwrapped)
	}
}

// TestConformance runs the store contract through the wrapper: tracing
// changes nothing a caller sees.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		clk := &offsetClock{}
		s, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true, Now: clk.Now})
		if err != nil {
			t.Fatalf("boltstore.Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return clockedStore{observed.Wrap(s, observed.Tracing{}), clk, s}
	})
}

// clockedStore lets the conformance tests move the store's clock on
// (storetest.Clock).
type clockedStore struct {
	storage.Backend
	clk  *offsetClock
	bolt *boltstore.Store
}

func (s clockedStore) Advance(d time.Duration) { s.clk.Advance(d) }

// SetMaxChunksPerUpload lowers the wrapped store's cap on an upload's
// parts (storetest.ChunkCapper): the wrapper passes PutChunk through, so
// the cap's test needs no more parts here than in the store's own run.
func (s clockedStore) SetMaxChunksPerUpload(n int) { s.bolt.SetMaxChunksPerUpload(n) }

// offsetClock is the real time plus an offset the tests can grow.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// BenchmarkNode measures what the wrapper adds to a cheap store call:
// nothing to speak of without a span in the context (tracing off), a
// span's cost with one.
func BenchmarkNode(b *testing.B) {
	bolt := openBolt(b)
	sp, err := bolt.PutSpace(b.Context(), storage.Space{ID: "p", Name: "P", Type: storage.SpaceProject})
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer tp.Shutdown(context.Background())
	tracing, span := tp.Tracer("bench").Start(b.Context(), "request")
	defer span.End()
	for _, bc := range []struct {
		name  string
		store storage.Backend
		ctx   context.Context
	}{
		{"store", bolt, b.Context()},
		{"wrapped, tracing off", observed.Wrap(bolt, observed.Tracing{}), b.Context()},
		{"wrapped, tracing on", observed.Wrap(bolt, observed.Tracing{}), tracing},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.store.Node(bc.ctx, sp.ID, sp.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLaterDigestsThroughTheWrapper: a PUT through the wrapper still asks
// the store for its announced digest alone (storage.LaterDigests), and a
// PROPFIND still waits for the others (storage.DigestWaiter).
func TestLaterDigestsThroughTheWrapper(t *testing.T) {
	s, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true, InlineLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w := observed.Wrap(s, observed.Tracing{})
	if _, ok := w.(storage.DigestWaiter); !ok {
		t.Fatal("the wrapper hides the store's AwaitDigests")
	}
	ctx := t.Context()
	sp, err := w.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	up, err := w.NewUpload(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Discard()
	storage.HashInline(up, checksum.MD5)
	io.WriteString(up, "abc")
	if got := up.Checksums(); got.SHA1 != "" || got.MD5 == "" {
		t.Fatalf("the upload computed %+v inline, want MD5 alone", got)
	}
	n, _, err := up.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "f"})
	if err != nil {
		t.Fatal(err)
	}
	storage.AwaitDigests(ctx, w, &n)
	if !n.Checksums.Complete() {
		t.Fatalf("digests after waiting through the wrapper: %+v", n.Checksums)
	}
}
