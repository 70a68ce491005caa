package dynamo_test

import (
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestWatchSuite holds the adapter to the watchdog's contract sessionstest's fake is held to:
// the list on gsi1, conditional writes by status, the lease as the watchdog reads it.
func TestWatchSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sessionstest.WatchSuite(t, func(*testing.T) sessionstest.WatchStore { return st })
}

// TestKeysSuite holds the adapter's Idempotency-Key records to the fake's contract.
func TestKeysSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sessionstest.KeysSuite(t, func(*testing.T) sessions.Keys { return st })
}
