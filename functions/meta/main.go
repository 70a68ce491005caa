// Command meta is the Lambda function of the meta endpoint group (health, the OpenAPI document,
// the studio). It builds no core.App: its routes are public and read nothing stored.
package main

import (
	"github.com/agentorch/agentorch/shared/app/meta"
	"github.com/agentorch/agentorch/shared/platform"
)

func main() { platform.MainHTTP(meta.Handler) }
