// Package hooks adds the company's webhooks to the core: the feature on DynamoDB, its URLs held
// to the address guard with the operator's allowed hosts (MCP_ALLOWED_HOSTS: loopback locally,
// none on AWS), and the webhooks group, served by its own function.
package hooks

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/webhooks"
)

type serviceKey struct{}

// Guard is the address policy of webhook URLs, at creation and at every delivery.
func Guard(a *core.App) netguard.Policy { return netguard.Policy{AllowHosts: a.Config.MCPAllowedHosts} }

// Service is the webhooks feature on the application's store. Built on first use, with no
// network call.
func Service(a *core.App) *webhooks.Service {
	s, _ := core.Shared(a, serviceKey{}, func() (*webhooks.Service, error) {
		return webhooks.New(a.Store, Guard(a)), nil
	})
	return s
}

// Group builds the webhooks group: create, read, list, change and delete the company's
// webhooks and rotate their secrets.
func Group(a *core.App) (*api.Group, error) {
	return api.NewWebhooks(Service(a), a.Options()), nil
}
