package core

import (
	"context"

	"github.com/agentorch/agentorch/shared/platform"
)

// ScheduleBuilder builds the task of a scheduled function (one EventBridge schedule), or says
// why it cannot.
type ScheduleBuilder func(a *App) (func(ctx context.Context) error, error)

// MainSchedule is the whole main of a scheduled function: build the application and the task
// once at init (no network calls) and run the task at each scheduled invocation.
func MainSchedule(build ScheduleBuilder, opts ...func(*App)) {
	platform.MainSchedule(withApp(build, opts))
}
