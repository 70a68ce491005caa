// Command stream is the Lambda function behind the streaming function URL: the runtime group,
// whose POST /api/v1/runtime/{session_id}/execute/?stream=true sends each event as it happens
// (the HTTP API buffers every response; see docs/deploy.md).
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/mcp"
)

func main() { core.MainHTTPStream(run.Stream, secrets.Manager, core.WithMCP(mcp.ForPolicy)) }
