package observed

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/davspaces/davspaces/storage"
)

// TracerName is the instrumentation scope of the store's spans.
const TracerName = "github.com/davspaces/davspaces/storage/observed"

// SpanPrefix starts the name of every store span: "davspaces.store.Move".
const SpanPrefix = "davspaces.store."

// The attributes of a store span.
const (
	// AttrOperation is the storage.Backend method called.
	AttrOperation = attribute.Key("davspaces.store.operation")
	// AttrSpace is the id of the space the call is about, when the
	// call names one.
	AttrSpace = attribute.Key("davspaces.space.id")
	// AttrRefusal is the store's refusal (storage.ErrNotFound, …) of a
	// call that did not fail: a refusal is an answer, not an error of the
	// server, so it leaves the span's status unset.
	AttrRefusal = attribute.Key("davspaces.store.refusal")
)

// Tracing is the Hook that makes every store call an OpenTelemetry
// span, a child of the span its context carries (Caddy's request span
// under the tracing directive). The tracer comes from that parent span's
// provider, so there is no global state, and a context without a span
// (tracing off, a background sweep) costs no span at all. A span names
// the operation and the space, never a file name, a path, a lock token or
// a user.
type Tracing struct{}

// Begin starts the call's span when ctx carries one to be its parent.
func (Tracing) Begin(ctx context.Context, c Call) context.Context {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx
	}
	attrs := []attribute.KeyValue{AttrOperation.String(c.Op.String())}
	if c.SpaceID != "" {
		attrs = append(attrs, AttrSpace.String(c.SpaceID))
	}
	ctx, _ = parent.TracerProvider().Tracer(TracerName).Start(ctx, SpanPrefix+c.Op.String(),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

// End records how the call went and ends its span. ctx carries a valid
// span exactly when Begin started one: Begin starts a child of every
// valid parent. The error's text is left out: it may quote a file name.
func (Tracing) End(ctx context.Context, _ Call, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return
	}
	if err != nil && span.IsRecording() {
		if refusal, ok := refusalOf(err); ok {
			span.SetAttributes(AttrRefusal.String(refusal))
		} else {
			span.SetStatus(codes.Error, failureOf(err))
		}
	}
	span.End()
}

// refusals are the store's answers to a request it will not carry out,
// most specific first.
var refusals = []error{
	storage.ErrNotFound,
	storage.ErrExists,
	storage.ErrLocked,
	storage.ErrChecksum,
	storage.ErrPrecondition,
	storage.ErrConflict,
	storage.ErrCrossSpace,
	storage.ErrTooManyUploads,
	storage.ErrNoSpace,
	storage.ErrInsufficientStorage,
	storage.ErrInvalid,
}

// refusalOf names err's refusal, if it is one.
func refusalOf(err error) (string, bool) {
	for _, r := range refusals {
		if errors.Is(err, r) {
			return r.Error(), true
		}
	}
	return "", false
}

// failureOf names what kind of failure err is, in words that quote
// nothing of the request.
func failureOf(err error) string {
	switch {
	case errors.Is(err, storage.ErrUnavailable):
		return storage.ErrUnavailable.Error()
	case errors.Is(err, context.Canceled):
		return context.Canceled.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded.Error()
	}
	return "store failure"
}
