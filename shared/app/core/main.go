package core

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/platform"
)

// Builder builds the handler of one function group, or says why it cannot (a configuration its
// features' adapters refuse). Each function's main names its own builder, so its binary links
// only that group's features.
type Builder func(a *App) (*api.Group, error)

// SQSBuilder builds the message processor of a queue function, or says why it cannot.
type SQSBuilder func(a *App) (func(ctx context.Context, body string) error, error)

// MainHTTP is the whole main of an HTTP function: build the application and the group's handler
// once at init (no network calls) and serve it to Lambda.
func MainHTTP(build Builder, opts ...func(*App)) { platform.MainHTTP(handler(build, opts)) }

// MainHTTPStream is MainHTTP for a function behind a streaming function URL.
func MainHTTPStream(build Builder, opts ...func(*App)) {
	platform.MainHTTPStream(handler(build, opts))
}

// MainSQS is the whole main of a queue function: build the application and the processor once
// at init (no network calls) and serve SQS events with partial batch responses.
func MainSQS(build SQSBuilder, opts ...func(*App)) { platform.MainSQS(withApp(build, opts)) }

// withApp builds what a function serves from the application, built with opts.
func withApp[T any](build func(*App) (T, error), opts []func(*App)) func(context.Context, platform.Config, *slog.Logger) (T, error) {
	return func(ctx context.Context, cfg platform.Config, log *slog.Logger) (T, error) {
		a, err := New(ctx, cfg, log)
		if err != nil {
			var zero T
			return zero, err
		}
		for _, o := range opts {
			o(a)
		}
		return build(a)
	}
}

// handler is withApp for an HTTP group.
func handler(build Builder, opts []func(*App)) platform.HandlerBuilder {
	b := withApp(build, opts)
	return func(ctx context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
		g, err := b(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}
