package localstack

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/agentorch/agentorch/infra/eventsource"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/platform"
)

// Processor builds the message processor of a queue function by its directory under functions/
// (app.App.Processor).
type Processor func(dir string) (func(ctx context.Context, body string) error, error)

// RunEventSources runs, until ctx ends, a stand-in of Lambda's event source mapping for every SQS
// event in tmpl: it long-polls the queue (queues: URLs by logical id) and invokes the function's
// handler — the same platform.SQSHandler its Lambda main serves — with real SQS events, as the
// template configures them (batch size, window, partial batch responses, timeout). So queued work
// takes the same path locally as on AWS.
func RunEventSources(ctx context.Context, tmpl *sam.Template, queues map[string]string, client *sqs.Client, build Processor, log *slog.Logger, opts eventsource.Options) error {
	handlers := map[string]eventsource.Handler{}
	for _, f := range tmpl.Functions() {
		if len(f.SQSEvents) == 0 {
			continue
		}
		process, err := build(f.Dir)
		if err != nil {
			return err
		}
		handlers[f.Dir] = platform.SQSHandler(process, log)
	}
	mappings, err := eventsource.FromTemplate(tmpl, queues, handlers)
	if err != nil {
		return err
	}
	if opts.Log == nil {
		opts.Log = log
	}
	if opts.Region == "" {
		opts.Region = Region
	}
	var wg sync.WaitGroup
	errs := make([]error, len(mappings))
	for i, m := range mappings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := eventsource.Run(ctx, client, m, opts); err != nil && ctx.Err() == nil {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RunEventSources runs the template's event source mappings on this env's queues until the test
// ends (see the package function).
func (e *TestEnv) RunEventSources(tb testing.TB, build Processor) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunEventSources(ctx, e.Template, e.Resources.Queues, e.SQS(), build, slog.New(slog.DiscardHandler),
			eventsource.Options{WaitTime: time.Second})
	}()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("event sources: %v", err)
		}
	})
}
