package audittest_test

import (
	"testing"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
)

func TestFakeStoreSuite(t *testing.T) {
	audittest.StoreSuite(t, func(*testing.T) audit.Store { return audittest.NewStore() })
}
