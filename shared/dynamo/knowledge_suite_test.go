package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/knowledge/knowledgetest"
)

// TestKnowledgeStoreSuite holds the adapter's knowledge bases to knowledge.Store's contract on
// DynamoDB Local (run conditions, datasource writes, the item-size account): the suite the fake
// (knowledgetest.Store) passes too. Its subtests share one table.
func TestKnowledgeStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	knowledgetest.StoreSuite(t, func(*testing.T) knowledge.Store { return st })
}
