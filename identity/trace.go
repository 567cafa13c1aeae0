package identity

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the provider calls' spans.
const tracerName = "github.com/davspaces/davspaces/identity"

// Operations of the provider that get a span: each is one request to it.
const (
	opDiscovery     = "discovery"
	opKeys          = "jwks"
	opUserinfo      = "userinfo"
	opIntrospection = "introspection"
)

// The attributes of a provider call's span. A span carries nothing else
// of the call: no token, no claim, no credential.
const (
	// attrOperation names the provider call.
	attrOperation = attribute.Key("davspaces.identity.operation")
	// attrRefused is set when the provider refused the token: an answer,
	// not a failure, so the span's status stays unset.
	attrRefused = attribute.Key("davspaces.identity.token_refused")
)

// noSpan is what startSpan returns without a parent span: ending it does
// nothing.
var noSpan = trace.SpanFromContext(context.Background())

// startSpan begins the span of provider call op as a child of ctx's span,
// with the parent's tracer provider, so that a request Caddy traces shows
// its calls to the provider and a context without a span costs none.
func startSpan(ctx context.Context, op string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, noSpan
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, "davspaces.identity."+op,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrOperation.String(op)))
}

// endSpan records how the call went and ends its span: the kind of
// failure only, since an error's text may quote the provider's answer.
func endSpan(span trace.Span, err error) {
	switch {
	case err == nil:
	case errors.Is(err, ErrInvalidToken):
		span.SetAttributes(attrRefused.Bool(true))
	default:
		span.SetStatus(codes.Error, ErrUnavailable.Error())
	}
	span.End()
}

// detachedSpan returns a context with no deadline or values but ctx's
// span, for work that outlives the request that started it (a key refresh
// other requests wait for) yet belongs in its trace.
func detachedSpan(ctx context.Context) context.Context {
	return trace.ContextWithSpan(context.Background(), trace.SpanFromContext(ctx))
}
