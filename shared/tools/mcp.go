package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// MCPDirectory finds a company's MCP servers and opens their headers (the mcpservers feature).
type MCPDirectory interface {
	// Resolve reads the company's servers that refs name (and no others); the result finds one
	// by name or id.
	Resolve(ctx context.Context, company string, refs []string) (domain.MCPServers, error)
	// Endpoint is how to reach a server, its headers in clear.
	Endpoint(ctx context.Context, srv *domain.MCPServer) (domain.MCPEndpoint, error)
	// RecordUse keeps the server's status and last_error true to what a connection met (it
	// writes only when the status changes).
	RecordUse(ctx context.Context, srv *domain.MCPServer, connectErr error) error
}

// mcpConnectTimeout bounds opening a connection to a server (initialize).
const mcpConnectTimeout = 15 * time.Second

// MCPRun binds the MCP tools of one run's nodes (engine.ToolBinder): it reads the company's
// servers once, on the first node that binds one, and keeps one connection per server for all
// the run's calls. Close ends the connections; a run that binds none costs nothing.
type MCPRun struct {
	dir  MCPDirectory
	conn domain.MCPConnector

	mu      sync.Mutex
	servers map[string]*domain.MCPServer // by the refs read so far (nil: named nothing)
	open    map[string]*mcpConn          // by server id
	resumed bool                         // Resume was called
}

type mcpConn struct {
	once sync.Once
	sess domain.MCPSession
	err  error
}

// NewMCPRun returns the binder of one run.
func NewMCPRun(dir MCPDirectory, conn domain.MCPConnector) *MCPRun {
	return &MCPRun{dir: dir, conn: conn, open: map[string]*mcpConn{}}
}

// Resume marks the run as the continuation of a paused one, before it binds anything.
func (r *MCPRun) Resume() { r.resumed = true }

// Bind returns the tools of the node's MCP bindings: each server's tools (the allowed ones),
// as the server describes them in its record's last tools/list. A server deleted since the
// configuration was checked is an invalid-request error, except in a resumed run (Resume): part
// of that run is done and its session waits on it, so the server binds no tools and the engine
// settles the calls that waited on it.
func (r *MCPRun) Bind(ctx context.Context, p domain.Principal, node *domain.NodeConfig) ([]domain.Tool, error) {
	if len(node.MCP) == 0 {
		return nil, nil
	}
	find, err := r.resolve(ctx, p.Company, node.MCPRefs())
	if err != nil {
		return nil, err
	}
	var out []domain.Tool
	for i := range node.MCP {
		b := &node.MCP[i]
		srv, ok := find(b.Server)
		if !ok && r.resumed {
			continue
		}
		if !ok {
			return nil, domain.Errorf(domain.KindInvalid, "The MCP server %q of %s no longer exists", domain.Clip(b.Server, 64), b.Path)
		}
		for _, t := range srv.Tools {
			if !b.Allows(t.Name) || !domain.ValidToolName(t.Name) {
				continue
			}
			schema := t.InputSchema
			if schema == nil {
				schema = map[string]any{"type": "object"}
			}
			out = append(out, &mcpTool{run: r, srv: srv, name: t.Name, approval: b.Approval.Needs(t.Name),
				spec: domain.ToolSpec{Name: t.Name, Description: t.Description, Schema: schema}, schema: &lazySchema{schema: schema}})
		}
	}
	return out, nil
}

// resolve reads the servers of refs the run has not read yet (one read for a node's new
// refs; none when an earlier node read them all) and finds the run's servers by ref.
func (r *MCPRun) resolve(ctx context.Context, company string, refs []string) (func(string) (*domain.MCPServer, bool), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.servers == nil {
		r.servers = map[string]*domain.MCPServer{}
	}
	var missing []string
	for _, ref := range refs {
		if _, ok := r.servers[ref]; !ok {
			missing = append(missing, ref)
		}
	}
	if len(missing) > 0 {
		find, err := r.dir.Resolve(ctx, company, missing)
		if err != nil {
			return nil, err
		}
		for _, ref := range missing {
			srv, _ := find(ref)
			r.servers[ref] = srv // nil: no such server, remembered as such for the run
		}
	}
	servers := r.servers
	return func(ref string) (*domain.MCPServer, bool) {
		srv := servers[ref]
		return srv, srv != nil
	}, nil
}

// session is the run's connection to srv, opened on its first call.
func (r *MCPRun) session(ctx context.Context, srv *domain.MCPServer) (domain.MCPSession, error) {
	r.mu.Lock()
	c := r.open[srv.ID]
	if c == nil {
		c = &mcpConn{}
		r.open[srv.ID] = c
	}
	r.mu.Unlock()
	c.once.Do(func() {
		ep, err := r.dir.Endpoint(ctx, srv)
		if err != nil {
			c.err = &domain.MCPError{Reason: "its credentials could not be opened", Err: err}
			return
		}
		// The connection serves the whole run, not only the call that opened it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpConnectTimeout)
		defer cancel()
		c.sess, c.err = r.conn.Connect(cctx, ep)
		// Best effort: the run goes on whether the record could be written or not.
		_ = r.dir.RecordUse(cctx, srv, c.err)
	})
	return c.sess, c.err
}

// Close ends the run's connections.
func (r *MCPRun) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, c := range r.open {
		if c.sess != nil {
			errs = append(errs, c.sess.Close())
		}
	}
	r.open = map[string]*mcpConn{}
	return errors.Join(errs...)
}

// mcpTool is one tool of a server, bound for one run.
type mcpTool struct {
	run      *MCPRun
	srv      *domain.MCPServer
	name     string
	spec     domain.ToolSpec
	schema   *lazySchema
	approval bool
}

func (t *mcpTool) Spec() domain.ToolSpec { return t.spec }

func (t *mcpTool) Meta() domain.ToolMeta {
	return domain.ToolMeta{Kind: domain.ToolKindMCP, Server: t.srv.Name, ServerID: t.srv.ID, NeedsApproval: t.approval, Check: t.schema.Check}
}

// Call checks the arguments against the tool's schema, then calls the server. A result the
// server marks isError is an error result for the model, with the server's text.
func (t *mcpTool) Call(ctx context.Context, input map[string]any) (string, error) {
	if err := t.schema.Check(input); err != nil {
		return "", err
	}
	sess, err := t.run.session(ctx, t.srv)
	if err != nil {
		return "", fmt.Errorf("MCP server %q: %w", t.srv.Name, err)
	}
	res, err := sess.CallTool(ctx, t.name, input)
	if err != nil {
		return "", fmt.Errorf("MCP server %q: %w", t.srv.Name, err)
	}
	if res.IsError {
		return "", &toolError{text: res.Text}
	}
	return res.Text, nil
}

// toolError is a tool's own error text, given to the model as it is.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }
