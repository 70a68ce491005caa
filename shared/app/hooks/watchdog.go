package hooks

import (
	"context"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Watchdog builds the watchdog function's task, run once a minute: one sweep of the
// executions due on its list (sessions.Service.Sweep), failing those whose worker or job was
// lost and telling the company's webhooks (execution.failed: one SQS send to WebhookQueue when
// WEBHOOK_QUEUE_URL is set). It needs only the store and the publisher: it runs nothing.
func Watchdog(a *core.App) (func(ctx context.Context) error, error) {
	d := sessions.Deps{Store: a.Store}
	if a.Config.WebhookQueueURL != "" {
		d.Events = Deliverer(a)
	}
	svc := sessions.New(d, sessions.Limits{})
	return func(ctx context.Context) error {
		rep, err := svc.Sweep(ctx)
		if rep.Failed > 0 || rep.Postponed > 0 {
			a.Log.InfoContext(ctx, "watchdog sweep", "due", rep.Due, "failed", rep.Failed, "postponed", rep.Postponed)
		}
		return err
	}, nil
}
