package webhooks_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// TestDeliveryCarriesTrace: an event published under a W3C trace context (the execute's
// traceparent) is delivered with it, through the fan-out and delivery queue messages; one
// published under none is delivered with none.
func TestDeliveryCarriesTrace(t *testing.T) {
	r := newRig(t)
	if _, err := r.svc.Create(context.Background(), acme, webhooks.CreateInput{URL: ptr(r.url), Events: ptr([]string{domain.EventExecutionCompleted})}); err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := http.Header{}
	h.Set("traceparent", tp)
	h.Set("tracestate", "vendor=x")
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	if err := r.del.Publish(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := r.del.Publish(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	r.drain(t, 3)
	if len(r.ep.got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(r.ep.got))
	}
	if got := r.ep.got[0].Header.Get("traceparent"); got != tp || r.ep.got[0].Header.Get("tracestate") != "vendor=x" {
		t.Errorf("first delivery traceparent %q tracestate %q, want the publisher's", got, r.ep.got[0].Header.Get("tracestate"))
	}
	if got := r.ep.got[1].Header.Get("traceparent"); got != "" {
		t.Errorf("second delivery traceparent %q, want none", got)
	}
}
