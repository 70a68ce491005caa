// Command ingest is the Lambda function that ingests files into knowledge bases from the
// ingestion queue (extract, chunk, embed, index).
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
)

func main() { core.MainSQS(kb.Ingest) }
