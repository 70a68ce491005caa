package library_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// TestStoreSuite holds the fake store to the port's contract, which shared/dynamo's
// TestLibraryStoreSuite holds the DynamoDB adapter to.
func TestStoreSuite(t *testing.T) {
	librarytest.StoreSuite(t, func(*testing.T) library.Store { return librarytest.NewMemStore() })
}
