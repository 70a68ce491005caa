// Command watchdog is the Lambda function that EventBridge runs once a minute: it fails the
// executions whose worker died (their session's lease ended while they ran) or whose job was
// lost, releases their sessions and tells the company's webhooks (execution.failed).
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
)

func main() { core.MainSchedule(hooks.Watchdog) }
