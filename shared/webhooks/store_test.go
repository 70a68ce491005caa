package webhooks_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// TestStoreSuite holds the fake store to the port's contract, which shared/dynamo's
// TestWebhooksStoreSuite holds the DynamoDB adapter to.
func TestStoreSuite(t *testing.T) {
	webhookstest.StoreSuite(t, func(*testing.T) webhooks.Store { return webhookstest.NewStore() })
}

// TestDeliveryStoreSuite holds the fake delivery store to its port's contract, which
// shared/dynamo's TestWebhookDeliveriesStoreSuite holds the DynamoDB adapter to.
func TestDeliveryStoreSuite(t *testing.T) {
	webhookstest.DeliveryStoreSuite(t, func(*testing.T) webhooks.DeliveryStore { return webhookstest.NewDeliveries() })
}
