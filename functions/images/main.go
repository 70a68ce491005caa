// Command images is the Lambda function of the images endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app"

func main() { app.MainHTTP(app.Images) }
