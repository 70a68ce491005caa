// Command files is the Lambda function of the files endpoint group.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/secrets"
)

func main() { core.MainHTTP(kb.Files, secrets.Manager) }
