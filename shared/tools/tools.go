// Package tools holds the registry of tools a react agent may bind by name and the built-in
// tools: calculator, current_time and http_request. Each tool validates its input against the
// JSON schema it shows the model and returns errors the engine passes back to the model.
package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

var (
	// ErrInvalidInput marks a tool call whose input does not match the tool's schema or rules.
	ErrInvalidInput = errors.New("invalid input")
	// ErrForbiddenDestination marks an http_request to an address that is not public (the
	// address guard's own sentinel).
	ErrForbiddenDestination = netguard.ErrForbiddenDestination
	// ErrDuplicateTool is returned by Register for a name that is already taken.
	ErrDuplicateTool = errors.New("duplicate tool name")
	// ErrInvalidTool is returned by Register for a nil tool or a name models cannot call.
	ErrInvalidTool = errors.New("invalid tool")
)

// toolName is what Bedrock Converse and OpenAI accept as a tool name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Registry is the set of tools agents may bind, by name. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]domain.Tool
}

// NewRegistry returns a registry of the given tools. It is meant for known-good sets such as
// Builtins: a tool Register would refuse (nil, a bad or taken name) is left out, so callers
// that need to know use Register.
func NewRegistry(tools ...domain.Tool) *Registry {
	r := &Registry{tools: make(map[string]domain.Tool, len(tools))}
	for _, t := range tools {
		_ = r.Register(t)
	}
	return r
}

// Register adds a tool; a nil tool, an invalid name or one already registered is refused.
func (r *Registry) Register(t domain.Tool) error {
	if t == nil {
		return fmt.Errorf("register: %w: nil tool", ErrInvalidTool)
	}
	name := t.Spec().Name
	if !toolName.MatchString(name) {
		return fmt.Errorf("register %q: %w: a name is 1-64 letters, digits, _ or -", name, ErrInvalidTool)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = make(map[string]domain.Tool)
	}
	if _, ok := r.tools[name]; ok {
		return fmt.Errorf("register %q: %w", name, ErrDuplicateTool)
	}
	r.tools[name] = t
	return nil
}

// Tool returns the tool registered under name.
func (r *Registry) Tool(name string) (domain.Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the registered tool names in sorted order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	r.mu.RUnlock()
	sort.Strings(names)
	return names
}

// Has reports whether a tool is registered under name (domain.ToolCatalog).
func (r *Registry) Has(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// Bind returns the registered tools the node names, in the node's order, then its function
// tools (engine.ToolBinder). Neither needs a tenant; a tool that does is bound by its feature's
// own binder.
func (r *Registry) Bind(_ context.Context, _ domain.Principal, node *domain.NodeConfig) ([]domain.Tool, error) {
	out := make([]domain.Tool, 0, len(node.Tools)+len(node.Functions))
	for _, name := range node.Tools {
		if t, ok := r.Tool(name); ok {
			out = append(out, t)
		}
	}
	for _, f := range node.Functions {
		out = append(out, NewFunction(f))
	}
	return out, nil
}
