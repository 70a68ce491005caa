// Command webhookdelivery consumes WebhookQueue: it fans each event out to the company's
// subscribed webhooks and makes their signed, guarded attempts, a failed one retried later. It
// reads the credentials key to open the webhooks' sealed signing secrets.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainSQS(hooks.Delivery, secrets.Manager) }
