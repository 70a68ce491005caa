// Command webhooks is the Lambda function of the webhooks endpoint group: the company's webhooks
// and their signing secrets.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(hooks.Group, secrets.Manager) }
