package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/agents/agentstest"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestAgentsStoreSuite holds the adapter to the contract agentstest's fake is held to.
func TestAgentsStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	agentstest.StoreSuite(t, func(*testing.T) agents.Store { return st })
}
