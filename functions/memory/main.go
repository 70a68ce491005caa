// Command memory is the Lambda function of the memory endpoint group: end users' records and
// blocks, and forgetting a user.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/mem"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(mem.Group, secrets.Manager) }
