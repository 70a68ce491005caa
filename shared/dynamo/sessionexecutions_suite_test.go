package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestSessionExecutionsSuite holds the adapter's pages of a session's executions to the
// contract sessionstest's fake is held to.
func TestSessionExecutionsSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sessionstest.SessionExecutionsSuite(t, func(*testing.T) sessions.Store { return st })
}
