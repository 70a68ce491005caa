package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestSessionsStoreSuite holds the adapter to the contract sessionstest's fake is held to.
func TestSessionsStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sessionstest.StoreSuite(t, func(*testing.T) sessions.Store { return st })
}
