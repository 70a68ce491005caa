package hooks

import (
	"context"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/sessions"
)

// ExecutionFailed builds the processor of the execution dead-letter queue: a job the queue gave
// up on marks its execution failed, so that no poll waits for it forever, and tells the
// company's webhooks (execution.failed: one SQS send to WebhookQueue when WEBHOOK_QUEUE_URL is
// set). It needs only the store and the publisher (no engine, models or tools: it runs nothing).
func ExecutionFailed(a *core.App) (func(ctx context.Context, body string) error, error) {
	d := sessions.Deps{Store: a.Store}
	if a.Config.WebhookQueueURL != "" {
		d.Events = Deliverer(a)
	}
	return sessions.New(d, sessions.Limits{}).HandleDeadLetter, nil
}
