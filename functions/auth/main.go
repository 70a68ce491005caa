// Command auth is the Lambda function of the auth endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(core.AuthUsage, secrets.Manager) }
