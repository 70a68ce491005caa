// Command images is the Lambda function of the images endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(core.Images, secrets.Manager) }
