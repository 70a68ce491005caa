package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// TestWebhooksStoreSuite holds the adapter to webhooks.Store's contract on DynamoDB Local: the
// suite the fake (webhookstest.Store) passes too. Its subtests share one table.
func TestWebhooksStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	webhookstest.StoreSuite(t, func(*testing.T) webhooks.Store { return st })
}
