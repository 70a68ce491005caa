// Command sessions is the Lambda function of the sessions endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/app/tooling"
)

func main() { core.MainHTTP(tooling.Sessions, secrets.Manager) }
