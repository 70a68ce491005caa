// Command worker is the Lambda function that runs asynchronous executions from the execution queue.
package main

import (
	"context"
	"log/slog"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
)

func main() {
	platform.MainSQS(func(ctx context.Context, cfg platform.Config, log *slog.Logger) (func(context.Context, string) error, error) {
		a, err := app.New(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return a.ProcessJob, nil
	})
}
