// Command agents is the Lambda function of the agents endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { app.MainHTTP(app.Agents, app.WithMCP(mcp.ForPolicy)) }
