// Command sessions is the Lambda function of the sessions endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Sessions) }
