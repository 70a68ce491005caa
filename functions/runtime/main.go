// Command runtime is the Lambda function of the runtime endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { core.MainHTTP(run.Runtime, secrets.Manager, core.WithMCP(mcp.ForPolicy)) }
