package domain

import (
	"context"
	"errors"
	"time"
)

// The seams of MCP servers (remote tools a company registers): what the mcp adapter, the
// mcpservers feature and the engine's tool binding agree on.

// MCP server statuses.
const (
	MCPStatusActive = "active" // the last connection worked
	MCPStatusError  = "error"  // the last connection failed; LastError says why
)

// MCPServer is a company's registered remote MCP server. Its header values are secrets: they are
// stored sealed (SealedHeaders) and never shown; HeaderNames says which are set.
type MCPServer struct {
	ID            string
	Company       string
	CreatedBy     string // the key or user that registered it
	Name          string // unique within the company; agent configurations bind it by name or id
	URL           string
	Description   string
	HeaderNames   []string
	SealedHeaders []byte         // the headers as a JSON object, encrypted; nil when none
	Auth          *MCPServerAuth // how it is authorized with OAuth 2.1; nil: the headers only
	SealedAuth    []byte         // its OAuth grant (client secret, tokens, a pending authorization), encrypted
	TimeoutMS     int            // per call; 0 means the default
	Status        string         // MCPStatusActive or MCPStatusError
	LastError     string
	Tools         []MCPTool // as last read with tools/list
	ToolsAt       time.Time // when Tools were read
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// MCPTool is one tool an MCP server offers, as tools/list describes it.
type MCPTool struct {
	Name        string
	Description string
	InputSchema map[string]any
}

// MCPEndpoint is how to reach a server: its URL, its headers in clear and the per-call timeout.
type MCPEndpoint struct {
	URL     string
	Headers map[string]string
	Timeout time.Duration
	Auth    MCPAuth // the server's OAuth tokens; nil for none (the headers only)
}

// MCPResult is one tools/call's result, already made text for the model: text content joined,
// structured content as JSON, images and resources summarised, capped in size.
type MCPResult struct {
	Text      string
	IsError   bool // the server's isError
	Truncated bool // Text was cut at the cap
}

// MCPError is a server failing to act as an MCP server: unreachable, refused by the address
// guard, timing out, answering something that is not MCP, or a JSON-RPC error. Reason is safe
// to show the caller and the model (it never holds header values); Err is the cause, for logs.
type MCPError struct {
	Reason string
	Err    error
}

func (e *MCPError) Error() string { return "mcp: " + e.Reason }
func (e *MCPError) Unwrap() error { return e.Err }

// MCPConnector reaches MCP servers (the mcp adapter implements it).
type MCPConnector interface {
	// ListTools connects, initializes, reads every page of tools/list and disconnects.
	ListTools(ctx context.Context, ep MCPEndpoint) ([]MCPTool, error)
	// Connect opens a session that a run reuses for all its calls to that server.
	Connect(ctx context.Context, ep MCPEndpoint) (MCPSession, error)
}

// MCPSession is one open connection to a server.
type MCPSession interface {
	CallTool(ctx context.Context, name string, args map[string]any) (*MCPResult, error)
	Close() error
}

// ErrMCPNameTaken is what a store reports (wrapped) when a server's name is already used in its
// company; the mcpservers feature answers it with a 409 naming the name.
var ErrMCPNameTaken = errors.New("MCP server name taken")

// ErrMCPLimit is what a store reports (wrapped) when a company has as many servers as it may;
// the mcpservers feature answers it with a 409 naming the limit.
var ErrMCPLimit = errors.New("MCP server limit reached")
