package mcpservers

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// What the engine's tool binding and the configuration checks call: a configuration names a
// server by its name or its id, within the caller's company only.

// Resolve reads every server of company at once (one Query) and finds them by name or id (ids
// first: names are never UUIDs): a run calls it once and resolves all its nodes' references
// from the result (the configuration checks and the runs read servers through it).
func (s *Service) Resolve(ctx context.Context, company string) (domain.MCPServers, error) {
	all, err := s.store.ListMCPServers(ctx, company)
	if err != nil {
		return nil, fmt.Errorf("read MCP servers of %s: %w", company, err)
	}
	byID := make(map[string]*domain.MCPServer, len(all))
	byName := make(map[string]*domain.MCPServer, len(all))
	for _, srv := range all {
		byID[srv.ID], byName[srv.Name] = srv, srv
	}
	return func(ref string) (*domain.MCPServer, bool) {
		if srv, ok := byID[ref]; ok {
			return srv, true
		}
		srv, ok := byName[ref]
		return srv, ok
	}, nil
}

// Lookup finds one of company's servers by name or id, for checking a configuration. Unknown,
// and another company's, is the same not-found error (errors.Is(err, domain.ErrNotFound)).
func (s *Service) Lookup(ctx context.Context, company, ref string) (*domain.MCPServer, error) {
	find, err := s.Resolve(ctx, company)
	if err != nil {
		return nil, err
	}
	srv, ok := find(ref)
	if !ok {
		return nil, notFound(ref)
	}
	return srv, nil
}

// Endpoint is how to reach srv: its URL, its headers opened, its per-call timeout (the default
// when it sets none). The headers are secrets: the caller passes them to the connector only.
func (s *Service) Endpoint(ctx context.Context, srv *domain.MCPServer) (domain.MCPEndpoint, error) {
	h, err := s.headers(ctx, srv)
	if err != nil {
		return domain.MCPEndpoint{}, err
	}
	return endpoint(srv, h), nil
}
