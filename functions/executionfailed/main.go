// Command executionfailed is the Lambda function that records the jobs of the execution
// dead-letter queue (deliveries exhausted) as failed executions, so that no poll waits forever,
// and tells the company's webhooks (execution.failed).
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
)

func main() { core.MainSQS(hooks.ExecutionFailed) }
