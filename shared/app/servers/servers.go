// Package servers adds the company's MCP servers to the core: the feature (registered servers on
// DynamoDB, their headers sealed under the credentials key) and the mcp-servers group, served by
// its own function. It imports no tool registry, JSON Schema compiler or engine; the MCP SDK
// comes with the connector its main passes (core.WithMCP), so the agents function, which only
// resolves the servers its configurations bind, links none of it.
package servers

import (
	"strings"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/seal"
)

type serviceKey struct{}

// Service is the MCP-servers feature: the company's registered servers on DynamoDB, their
// headers sealed under the credentials key (read on first use: CREDENTIALS_KEY locally, the
// CREDENTIALS_KEY_ARN secret on AWS), reached through the MCP connector. Built on first use, with
// no network call.
func Service(a *core.App) *mcpservers.Service {
	s, _ := core.Shared(a, serviceKey{}, func() (*mcpservers.Service, error) {
		s := mcpservers.New(a.Store, a.MCPConnector(), seal.New(a.CredentialsKey())).WithAudit(a.Audit)
		if o, ok := a.MCPConnector().(mcpservers.OAuth); ok { // the mcp connector speaks OAuth too
			redirect := ""
			if a.Config.PublicBaseURL != "" {
				redirect = strings.TrimSuffix(a.Config.PublicBaseURL, "/") + "/studio/oauth/callback"
			}
			s = s.WithOAuth(o, redirect)
		}
		return s, nil
	})
	return s
}

// Group builds the mcp-servers group: register, read, update and delete the company's servers,
// list and refresh their tools (which connects to them).
func Group(a *core.App) (*api.Group, error) {
	return api.NewMCPServers(Service(a), a.Options()), nil
}
