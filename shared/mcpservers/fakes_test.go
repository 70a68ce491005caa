package mcpservers_test

import (
	"context"
	"errors"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

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
