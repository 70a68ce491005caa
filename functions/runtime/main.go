// Command runtime is the Lambda function of the runtime endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { app.MainHTTP(app.Runtime, app.WithMCP(mcp.ForPolicy)) }
