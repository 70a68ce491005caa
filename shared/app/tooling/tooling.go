// Package tooling adds the tool registry and the company's MCP servers (servers) to the core, and builds
// the groups that check configurations against them without running anything: agents and
// sessions. It links the registry's JSON Schema compiler but not the engine's providers, the
// queues or the knowledge feature (run adds those).
package tooling

import (
	"context"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/servers"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

type registryKey struct{}
type agentsKey struct{}

// Registry is the application's one tool registry: agent validation and session creation check
// tool names against it, and the engine binds each node's built-in tools from it.
func Registry(a *core.App) *tools.Registry {
	r, _ := core.Shared(a, registryKey{}, func() (*tools.Registry, error) {
		return tools.NewRegistry(tools.Builtins(tools.Options{})...), nil
	})
	return r
}

// MCP is the company's MCP servers as sessions uses them: a read of them to check
// configurations, and each run's binder of their tools. The feature is built on first use.
func MCP(a *core.App) sessions.MCP { return mcpRuns{a} }

type mcpRuns struct{ a *core.App }

func (m mcpRuns) Resolve(ctx context.Context, company string, refs []string) (domain.MCPServers, error) {
	return servers.Service(m.a).Resolve(ctx, company, refs)
}

func (m mcpRuns) NewRun() sessions.RunTools {
	return tools.NewMCPRun(servers.Service(m.a), m.a.MCPConnector())
}

// Catalog is what this deployment offers configurations: the model providers the engine's model
// set is built from (core.ModelProviders) and the built-in tools of the registry the engine binds
// them from, each with the description and input schema the model is shown.
func Catalog(a *core.App) domain.Catalog {
	r := Registry(a)
	c := domain.Catalog{Providers: core.ModelProviders(a.Config)}
	for _, name := range r.Names() {
		if t, ok := r.Tool(name); ok {
			c.Tools = append(c.Tools, t.Spec())
		}
	}
	return c
}

// AgentsService is the agents feature, checking tool names against the registry and MCP bindings
// against the company's servers.
func AgentsService(a *core.App) *agents.Service {
	s, _ := core.Shared(a, agentsKey{}, func() (*agents.Service, error) {
		return agents.NewService(a.Store, Registry(a)).WithMCP(mcpRuns{a}).WithAudit(a.Audit).WithCatalog(Catalog(a)), nil
	})
	return s
}

// Agents builds the agents group. Its configurations' MCP bindings are checked against the
// company's stored servers (servers.Service, no connection); the mcp-servers group, which
// connects to them, is the mcpservers function's.
func Agents(a *core.App) (*api.Group, error) {
	return api.NewAgents(AgentsService(a), a.Options()), nil
}

// Sessions builds the sessions group. Its routes create, read and delete sessions and take
// feedback: they check configurations (tools, knowledge bases, MCP servers) and run nothing, so
// its service has no engine, models, queue or fetcher.
func Sessions(a *core.App) (*api.Group, error) {
	svc := sessions.New(sessions.Deps{Store: a.Store, Agents: AgentsService(a), Tools: Registry(a),
		KnowledgeBases: a.Store, MCP: MCP(a)}, sessions.Limits{})
	return api.NewSessions(svc, a.Options()), nil
}
