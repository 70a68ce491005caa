package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// TestWebhookDeliveriesStoreSuite holds the adapter to webhooks.DeliveryStore's contract on
// DynamoDB Local: the suite the fake (webhookstest.Deliveries) passes too.
func TestWebhookDeliveriesStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	webhookstest.DeliveryStoreSuite(t, func(*testing.T) webhooks.DeliveryStore { return st })
}
