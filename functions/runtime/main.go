// Command runtime is the Lambda function of the runtime endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Runtime) }
