// Command webhookdelivery consumes WebhookQueue: it fans each event out to the company's
// subscribed webhooks and makes their signed, guarded attempts, a failed one retried later.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
)

func main() { core.MainSQS(hooks.Delivery) }
