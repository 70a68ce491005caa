// Command knowledge is the Lambda function of the knowledge-bases endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Knowledge) }
