package mcpservers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// What the engine's tool binding and the configuration checks call: a configuration names a
// server by its name or its id, within the caller's company only.

// Resolve reads the servers of company that refs name (by name or id; ids first: names are
// never UUIDs) and no others, and finds them by name or id: a configuration check or a run reads
// only the servers it binds, however many the company has. A name this process has resolved
// before is read by its id at once (one BatchGetItem), the record confirming the name; other
// names cost two (the name's claim, then the server).
func (s *Service) Resolve(ctx context.Context, company string, refs []string) (domain.MCPServers, error) {
	byID := map[string]*domain.MCPServer{}
	byName := map[string]*domain.MCPServer{}
	read := func(refs []string) error {
		if len(refs) == 0 {
			return nil
		}
		found, err := s.store.FindMCPServers(ctx, company, refs)
		if err != nil {
			return fmt.Errorf("read MCP servers of %s: %w", company, err)
		}
		for _, srv := range found {
			byID[srv.ID], byName[srv.Name] = srv, srv
			s.names.put(company, srv.Name, srv.ID)
		}
		return nil
	}
	first := make([]string, 0, len(refs))
	var guessed []string // names read by the id they had
	for _, ref := range refs {
		if id, ok := s.names.get(company, ref); ok && !domain.IsID(ref) {
			first, guessed = append(first, id), append(guessed, ref)
			continue
		}
		first = append(first, ref)
	}
	if err := read(first); err != nil {
		return nil, err
	}
	var again []string // renamed or deleted since: read by name
	for _, ref := range guessed {
		if _, ok := byName[ref]; !ok {
			s.names.drop(company, ref)
			again = append(again, ref)
		}
	}
	if err := read(again); err != nil {
		return nil, err
	}
	return func(ref string) (*domain.MCPServer, bool) {
		if srv, ok := byID[ref]; ok {
			return srv, true
		}
		srv, ok := byName[ref]
		return srv, ok
	}, nil
}

// maxNames bounds the names a process remembers; past it the memory starts again.
const maxNames = 4096

// nameIDs remembers the id of each server name resolved (by company), so that a name is read by
// its id next time. A remembered id is a guess the record confirms: a server renamed or deleted
// since reads by name again.
type nameIDs struct {
	mu sync.Mutex
	m  map[string]string
}

func (n *nameIDs) get(company, name string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id, ok := n.m[company+"\x00"+name]
	return id, ok
}

func (n *nameIDs) put(company, name, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil || len(n.m) >= maxNames {
		n.m = map[string]string{}
	}
	n.m[company+"\x00"+name] = id
}

func (n *nameIDs) drop(company, name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, company+"\x00"+name)
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
	return s.endpoint(ctx, srv, h, true)
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
	case errors.Is(connectErr, errAuthRequired) && errors.As(connectErr, &me):
		if srv.Status == domain.MCPStatusAuthRequired && srv.LastError == "the MCP server could not be used: "+me.Reason {
			return nil
		}
		next.Status, next.LastError = domain.MCPStatusAuthRequired, "the MCP server could not be used: "+me.Reason
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
