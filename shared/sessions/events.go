package sessions

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// Events tells a company's webhooks that an execution ended (webhooks.Deliverer.Publish: one
// queue message, no store call, the fan-out to the subscribed webhooks done by the delivery
// function).
type Events interface {
	Publish(ctx context.Context, ev domain.WebhookEvent) error
}

// execEvents are the webhook events of an execution's final (or paused) statuses.
var execEvents = map[string]string{
	domain.ExecCompleted:      domain.EventExecutionCompleted,
	domain.ExecFailed:         domain.EventExecutionFailed,
	domain.ExecRequiresAction: domain.EventExecutionRequiresAction,
	domain.ExecCancelled:      domain.EventExecutionCancelled,
}

// publish tells the company's webhooks of e's status: ids and the status, never content. Its
// failure is not the execute's (the run is committed; an error would have the client run it
// again): the event is lost, which the delivery's at-least-once does not cover.
func (s *Service) publish(ctx context.Context, company string, e *domain.Execution) {
	typ, ok := execEvents[e.Status]
	if s.events == nil || !ok || company == "" {
		return
	}
	_ = s.events.Publish(context.WithoutCancel(ctx), domain.WebhookEvent{Type: typ, Company: company,
		Data: map[string]string{"session_id": e.SessionID, "execution_id": e.ID, "status": e.Status}})
}

// runContext is ctx with the run's invoke_agent span as its span, so that what is published of
// the run (a webhook delivery's traceparent) joins the run's trace, even when the caller sent no
// traceparent; ctx as it is when the engine does not trace.
func runContext(ctx context.Context, out *engine.Result) context.Context {
	if out == nil || !out.Span.IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, out.Span)
}
