package sessions_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestSessionExecutionsSuite holds the fake to the contract of a session's executions
// (shared/dynamo runs the same suite against DynamoDB Local).
func TestSessionExecutionsSuite(t *testing.T) {
	sessionstest.SessionExecutionsSuite(t, func(*testing.T) sessions.Store { return sessionstest.NewStore() })
}
