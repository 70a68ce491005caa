package core

import (
	"context"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/meta"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Meta builds the meta group on the application, for the dev server and the tests: the group
// the meta function's main serves through meta.Handler without an App (its routes are public and
// read nothing stored).
func Meta(a *App) (*api.Group, error) { return meta.Group(a.Config, a.Log), nil }

// ExecutionFailed builds the processor of the execution dead-letter queue: a job the queue gave
// up on marks its execution failed, so that no poll waits for it forever. It needs only the
// store (no engine, models or tools: it runs nothing).
func ExecutionFailed(a *App) (func(ctx context.Context, body string) error, error) {
	return sessions.New(sessions.Deps{Store: a.Store}, sessions.Limits{}).HandleDeadLetter, nil
}
