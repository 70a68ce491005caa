package platform

import (
	"context"
	"log/slog"
	"net/http"
	"os"
)

// HandlerBuilder builds a function's handler from its configuration.
type HandlerBuilder func(ctx context.Context, cfg Config, log *slog.Logger) (http.Handler, error)

// MainHTTP is the whole main of an HTTP function: load config, build the handler once, serve
// Lambda events. A configuration error is logged and exits 1.
func MainHTTP(build HandlerBuilder) { run(build, StartHTTP) }

// run is the whole main of a function: load config, build what serves the events once, start
// serving (start does not return). A configuration or build error is logged and exits 1.
func run[T any](build func(context.Context, Config, *slog.Logger) (T, error), start func(T, *slog.Logger)) {
	cfg, err := LoadConfig()
	log := Logger(cfg)
	if err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	served, err := build(context.Background(), cfg, log)
	if err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	start(served, log)
}
