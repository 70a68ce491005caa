// Command ingestfailed is the Lambda function that records the ingestion jobs of the
// dead-letter queue (deliveries exhausted) as failed datasources with their reason.
package main

import (
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
)

func main() { core.MainSQS(kb.IngestFailed) }
