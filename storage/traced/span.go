// Package traced wraps a storage.Backend so that every store operation
// becomes an OpenTelemetry span, a child of the span its context carries
// (Caddy's request span under the tracing directive). The tracer comes
// from that parent span's provider, so there is no global state, and a
// context without a span (tracing off, a background sweep) costs no span
// at all. A span names the operation and the space, never a file name, a
// path, a lock token or a user.
package traced

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/davspaces/davspaces/storage"
)

// TracerName is the instrumentation scope of the store's spans.
const TracerName = "github.com/davspaces/davspaces/storage/traced"

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

// noSpan is what start returns when the context carries no span: ending
// it does nothing.
var noSpan = trace.SpanFromContext(context.Background())

// start begins the span of operation op on space spaceID ("" when the
// call names no space), as a child of ctx's span.
func start(ctx context.Context, op, spaceID string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, noSpan
	}
	attrs := []attribute.KeyValue{AttrOperation.String(op)}
	if spaceID != "" {
		attrs = append(attrs, AttrSpace.String(spaceID))
	}
	return parent.TracerProvider().Tracer(TracerName).Start(ctx, SpanPrefix+op,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// end records how the call went and ends its span. The error's text is
// left out: it may quote a file name.
func end(span trace.Span, err error) {
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

// call runs f in the span of op on spaceID.
func call[T any](ctx context.Context, op, spaceID string, f func(context.Context) (T, error)) (T, error) {
	ctx, span := start(ctx, op, spaceID)
	v, err := f(ctx)
	end(span, err)
	return v, err
}

// call2 is call for the methods with two results and an error.
func call2[A, B any](ctx context.Context, op, spaceID string, f func(context.Context) (A, B, error)) (A, B, error) {
	ctx, span := start(ctx, op, spaceID)
	a, b, err := f(ctx)
	end(span, err)
	return a, b, err
}

// call0 is call for the methods that return only an error.
func call0(ctx context.Context, op, spaceID string, f func(context.Context) error) error {
	ctx, span := start(ctx, op, spaceID)
	err := f(ctx)
	end(span, err)
	return err
}
