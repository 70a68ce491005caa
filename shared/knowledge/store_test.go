package knowledge_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/knowledge/knowledgetest"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// TestStoreSuite holds the fake store to the port's contract (its files and collections to the
// library's), which shared/dynamo's TestKnowledgeStoreSuite holds the DynamoDB adapter to.
func TestStoreSuite(t *testing.T) {
	knowledgetest.StoreSuite(t, func(*testing.T) knowledge.Store { return knowledgetest.NewStore() })
	t.Run("Library", func(t *testing.T) {
		librarytest.StoreSuite(t, func(*testing.T) library.Store { return knowledgetest.NewStore() })
	})
}
