package mcpservers

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// What the engine's tool binding and the configuration checks call: a configuration names a
// server by its name or its id, within the caller's company only.

// Resolve reads the servers of company that refs name (by name or id; ids first: names are
// never UUIDs) and no others, and finds them by name or id: a configuration check or a run reads
// only the servers it binds, however many the company has (two BatchGetItem at most).
func (s *Service) Resolve(ctx context.Context, company string, refs []string) (domain.MCPServers, error) {
	found := []*domain.MCPServer{}
	if len(refs) > 0 {
		var err error
		if found, err = s.store.FindMCPServers(ctx, company, refs); err != nil {
			return nil, fmt.Errorf("read MCP servers of %s: %w", company, err)
		}
	}
	byID := make(map[string]*domain.MCPServer, len(found))
	byName := make(map[string]*domain.MCPServer, len(found))
	for _, srv := range found {
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
	find, err := s.Resolve(ctx, company, []string{ref})
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

// RecordUse keeps a server's status true to what a run met: a connection that failed as an MCP
// server sets status error with the reason in last_error, a working one after a failure sets it
// active again. It writes only when the status changes (one conditional write), and a record
// changed meanwhile is left as it is: the next use or a refresh tells again. srv itself is not
// changed (a run's tools read it concurrently).
func (s *Service) RecordUse(ctx context.Context, srv *domain.MCPServer, connectErr error) error {
	next := *srv
	var me *domain.MCPError
	switch {
	case connectErr == nil && srv.Status != domain.MCPStatusActive:
		next.Status, next.LastError = domain.MCPStatusActive, ""
	case errors.As(connectErr, &me) && (srv.Status != domain.MCPStatusError || srv.LastError != "the MCP server could not be used: "+me.Reason):
		next.Status, next.LastError = domain.MCPStatusError, "the MCP server could not be used: "+me.Reason
	default:
		return nil
	}
	next.UpdatedAt = s.later(srv.UpdatedAt)
	if err := s.store.UpdateMCPServer(ctx, &next, srv); err != nil && domain.KindOf(err) != domain.KindConflict {
		return fmt.Errorf("record the use of MCP server %s: %w", srv.ID, err)
	}
	return nil
}
