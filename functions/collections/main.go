// Command collections is the Lambda function of the collections endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(kb.Collections, secrets.Manager) }
