package mcp

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// isolate is ctx with its deadline and cancellation but none of its values except the trace's
// span. A run may have been started from an MCP request the service serves (api/mcpserve, on the
// same SDK): its context then carries the SDK's own keys (that request's protocol version among
// them), which the SDK's client would read as its own and send to the server it calls (a
// protocol version the session did not negotiate, which the server refuses with 400).
func isolate(ctx context.Context) context.Context {
	return valuesOf{Context: ctx, vals: trace.ContextWithSpan(context.Background(), trace.SpanFromContext(ctx))}
}

// valuesOf is a context whose deadline and cancellation are its Context's and whose values are
// vals's.
type valuesOf struct {
	context.Context
	vals context.Context
}

func (c valuesOf) Value(key any) any { return c.vals.Value(key) }
