// Command mcpservers is the Lambda function of the MCP-servers endpoint group: it registers the
// company's MCP servers and reads their tools (it connects to them).
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/app/servers"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { core.MainHTTP(servers.Group, secrets.Manager, core.WithMCP(mcp.ForPolicy)) }
