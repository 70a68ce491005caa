// Command memoryextract is the Lambda function that extracts memories from the memory queue: the
// durable facts about a user that a turn showed, saved unless the user's scope remembers them.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/mem"
)

func main() { core.MainSQS(mem.Extract) }
