// Command meta is the Lambda function of the meta endpoint group.
package main

import "github.com/agentorch/agentorch/shared/app/core"

func main() { core.MainHTTP(core.Meta) }
