// Command auth is the Lambda function of the auth endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Auth) }
