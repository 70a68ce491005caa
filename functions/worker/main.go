// Command worker is the Lambda function that runs asynchronous executions from the execution queue.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { core.MainSQS(run.Worker, secrets.Manager, core.WithMCP(mcp.ForPolicy)) }
