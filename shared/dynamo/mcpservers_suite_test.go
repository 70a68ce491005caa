package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
)

// TestMCPServersStoreSuite holds the adapter to mcpservers.Store's contract on DynamoDB Local:
// the suite the fake (mcpserverstest.Store) passes too. Its subtests share one table.
func TestMCPServersStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	mcpserverstest.StoreSuite(t, func(*testing.T) mcpservers.Store { return st })
}
