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
func MainHTTP(build HandlerBuilder) {
	cfg, err := LoadConfig()
	log := Logger(cfg)
	if err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	h, err := build(context.Background(), cfg, log)
	if err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	StartHTTP(h, log)
}
