package platform

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// ScheduleBuilder builds a scheduled function's task from its configuration.
type ScheduleBuilder func(ctx context.Context, cfg Config, log *slog.Logger) (func(ctx context.Context) error, error)

// ScheduleHandler adapts a task to EventBridge Scheduler's (or a schedule rule's) events: each
// invocation runs the task once, within the invocation's deadline less deadlineReserve. Its error
// (a panic is one) is logged and returned, so that the invocation counts as failed; the next
// scheduled one runs the task again, so a task must be one that may run again at any time.
func ScheduleHandler(task func(ctx context.Context) error, log *slog.Logger) func(context.Context, events.EventBridgeEvent) error {
	return func(ctx context.Context, ev events.EventBridgeEvent) (err error) {
		work, cancel := withReserve(ctx)
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			}
			if err != nil {
				log.ErrorContext(ctx, "scheduled task failed", "event_id", ev.ID, "err", err)
			}
		}()
		return task(work)
	}
}

// StartSchedule runs task as a Lambda function invoked on a schedule. It does not return.
func StartSchedule(task func(ctx context.Context) error, log *slog.Logger) {
	lambda.Start(ScheduleHandler(task, log))
}

// MainSchedule is the whole main of a scheduled function: load config, build the task once,
// run it at each invocation. A configuration error is logged and exits 1.
func MainSchedule(build ScheduleBuilder) { run(build, StartSchedule) }
