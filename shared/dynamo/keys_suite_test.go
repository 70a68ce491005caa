package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/auth/authtest"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestKeysStoreSuite holds the adapter to the contract authtest's fake is held to.
func TestKeysStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	var st auth.KeyStore = dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	authtest.StoreSuite(t, func(*testing.T) authtest.KeyStore { return st })
}
