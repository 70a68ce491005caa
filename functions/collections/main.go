// Command collections is the Lambda function of the collections endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Collections) }
