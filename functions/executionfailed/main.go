// Command executionfailed is the Lambda function that records the jobs of the execution
// dead-letter queue (deliveries exhausted) as failed executions, so that no poll waits forever.
package main

import "github.com/agentorch/agentorch/shared/app/core"

func main() { core.MainSQS(core.ExecutionFailed) }
