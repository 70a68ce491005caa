// Command agents is the Lambda function of the agents endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/app/tooling"
)

func main() { core.MainHTTP(tooling.Agents, secrets.Manager) }
