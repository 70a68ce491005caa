// Command files is the Lambda function of the files endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Files) }
