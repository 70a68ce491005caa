package mcpservers_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
)

// TestStoreSuite holds the fake store to the port's contract, which shared/dynamo's
// TestMCPServersStoreSuite holds the DynamoDB adapter to.
func TestStoreSuite(t *testing.T) {
	mcpserverstest.StoreSuite(t, func(*testing.T) mcpservers.Store { return mcpserverstest.NewStore() })
}
