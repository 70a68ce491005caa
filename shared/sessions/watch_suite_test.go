package sessions_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestWatchSuite holds the fake to the contract of sessions.Watcher (shared/dynamo runs the
// same suite against DynamoDB Local).
func TestWatchSuite(t *testing.T) {
	sessionstest.WatchSuite(t, func(*testing.T) sessionstest.WatchStore { return sessionstest.NewStore() })
}

// TestKeysSuite holds the fake to the contract of sessions.Keys (shared/dynamo runs the same
// suite against DynamoDB Local).
func TestKeysSuite(t *testing.T) {
	sessionstest.KeysSuite(t, func(*testing.T) sessions.Keys { return sessionstest.NewStore() })
}
