// Command runtime is the Lambda function of the runtime endpoint group.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
)

func main() {
	platform.MainHTTP(func(ctx context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
		a, err := app.New(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return a.Handler("runtime")
	})
}
