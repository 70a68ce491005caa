package mcpservers_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// fakeStore keeps servers in memory by company and id, with the real store's rules: names
// unique in a company, updates conditional on UpdatedAt.
type fakeStore struct {
	mu      sync.Mutex
	servers map[string]*domain.MCPServer // by company + "/" + id
	fail    error                        // returned by every call when set
	reads   int                          // ListMCPServers calls
}

func newFakeStore() *fakeStore { return &fakeStore{servers: map[string]*domain.MCPServer{}} }

func (f *fakeStore) nameTaken(s *domain.MCPServer) bool {
	for _, o := range f.servers {
		if o.Company == s.Company && o.Name == s.Name && o.ID != s.ID {
			return true
		}
	}
	return false
}

func clone(s *domain.MCPServer) *domain.MCPServer {
	c := *s
	return &c
}

func (f *fakeStore) CreateMCPServer(_ context.Context, s *domain.MCPServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if f.nameTaken(s) {
		return fmt.Errorf("name %q: %w", s.Name, domain.ErrMCPNameTaken)
	}
	f.servers[s.Company+"/"+s.ID] = clone(s)
	return nil
}

func (f *fakeStore) GetMCPServer(_ context.Context, company, id string) (*domain.MCPServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	s, ok := f.servers[company+"/"+id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(s), nil
}

func (f *fakeStore) ListMCPServers(_ context.Context, company string) ([]*domain.MCPServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.fail != nil {
		return nil, f.fail
	}
	var out []*domain.MCPServer
	for _, s := range f.servers {
		if s.Company == company {
			out = append(out, clone(s))
		}
	}
	return out, nil
}

func (f *fakeStore) UpdateMCPServer(_ context.Context, s, prev *domain.MCPServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	cur, ok := f.servers[prev.Company+"/"+prev.ID]
	switch {
	case !ok:
		return domain.ErrNotFound
	case !cur.UpdatedAt.Equal(prev.UpdatedAt):
		return domain.ErrConflict
	case f.nameTaken(s):
		return fmt.Errorf("name %q: %w", s.Name, domain.ErrMCPNameTaken)
	}
	f.servers[s.Company+"/"+s.ID] = clone(s)
	return nil
}

func (f *fakeStore) DeleteMCPServer(_ context.Context, s *domain.MCPServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if _, ok := f.servers[s.Company+"/"+s.ID]; !ok {
		return domain.ErrNotFound
	}
	delete(f.servers, s.Company+"/"+s.ID)
	return nil
}

// fakeConnector answers ListTools by URL: the tools of a server it knows, an MCPError for
// any other URL. It records each endpoint it was given.
type fakeConnector struct {
	mu     sync.Mutex
	tools  map[string][]domain.MCPTool // by URL
	broken error                       // when set, every call fails with it
	calls  []domain.MCPEndpoint
}

func (c *fakeConnector) ListTools(_ context.Context, ep domain.MCPEndpoint) ([]domain.MCPTool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, ep)
	if c.broken != nil {
		return nil, c.broken
	}
	tools, ok := c.tools[ep.URL]
	if !ok {
		return nil, &domain.MCPError{Reason: "connection refused", Err: errors.New("dial tcp: refused")}
	}
	return tools, nil
}

func (c *fakeConnector) Connect(context.Context, domain.MCPEndpoint) (domain.MCPSession, error) {
	return nil, errors.New("fakeConnector does not connect")
}

func (c *fakeConnector) last() domain.MCPEndpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[len(c.calls)-1]
}
