package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// TestLibraryStoreSuite holds the adapter to library.Store's contract on DynamoDB Local: the
// suite the fake (librarytest.MemStore) passes too. Its subtests share one table (each makes up
// its own companies and ids).
func TestLibraryStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	librarytest.StoreSuite(t, func(*testing.T) library.Store { return st })
}
