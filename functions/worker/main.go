// Command worker is the Lambda function that runs asynchronous executions from the execution queue.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainSQS(app.Worker) }
