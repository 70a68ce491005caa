package memorytest_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/memory/memorytest"
)

// TestFakeStoreSuite holds the fake to the contract the DynamoDB adapter passes too.
func TestFakeStoreSuite(t *testing.T) {
	st := memorytest.NewStore()
	memorytest.StoreSuite(t, func(*testing.T) memory.Store { return st })
}
