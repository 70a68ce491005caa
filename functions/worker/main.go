// Command worker is the Lambda function that runs asynchronous executions from the execution queue.
package main

import (
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { app.MainSQS(app.Worker, app.WithMCP(mcp.ForPolicy)) }
