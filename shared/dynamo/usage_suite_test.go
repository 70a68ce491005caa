package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

// TestUsageStoreSuite holds the usage counters (one UpdateItem ADD per count, one Query per
// report) to the contract the fake (usagetest.Store) passes too, on DynamoDB Local.
func TestUsageStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	usagetest.StoreSuite(t, func(*testing.T) usagetest.Counters { return st })
}
