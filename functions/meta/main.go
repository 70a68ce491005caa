// Command meta is the Lambda function of the meta endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Meta) }
