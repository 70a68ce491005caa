package tools

import (
	"net"
	"net/netip"
	"testing"

	"github.com/agentorch/agentorch/shared/netguard/netguardtest"
)

// fakeResolver makes the given names resolve to the given addresses (the guard's own tests are
// in shared/netguard).
func fakeResolver(t *testing.T, hosts map[string]netip.Addr) *net.Resolver {
	t.Helper()
	return netguardtest.Resolver(hosts)
}
