package domain

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The entries of a node's tools: a built-in's name as a string, or an object binding a
// company's MCP server ({type: "mcp"}) or declaring a tool the client runs ({type: "function"}).

// Tool kinds, as events and pending calls name them.
const (
	ToolKindBuiltin  = "builtin"
	ToolKindMCP      = "mcp"
	ToolKindFunction = "function"
)

// Approval settings of an MCP binding.
const (
	ApprovalNever  = "never"
	ApprovalAlways = "always"
)

// KnowledgeSearchTool is the tool a react_agent with knowledge_bases searches them with.
const KnowledgeSearchTool = "knowledge_base_search"

// toolNamePattern is what Bedrock Converse and OpenAI accept as a tool name.
// Compiled on first use, not at every function's init.
var toolNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

// ValidToolName reports whether name is a tool name every provider accepts.
func ValidToolName(name string) bool { return toolNamePattern().MatchString(name) }

// MCPBinding is a {type: "mcp"} entry: the tools of one of the company's MCP servers.
type MCPBinding struct {
	Server       string   // the server's name or id, as written
	AllowedTools []string // nil: every tool of the server
	Approval     Approval
	Path         string // the entry's dotted path, for errors found later
}

// Approval says which calls of a binding wait for a person: all (Always), the named Tools, or none.
type Approval struct {
	Always bool
	Tools  []string
}

// Needs reports whether a call of tool waits for a person's approval.
func (a Approval) Needs(tool string) bool { return a.Always || slices.Contains(a.Tools, tool) }

// Allows reports whether the binding offers the server's tool name.
func (b *MCPBinding) Allows(name string) bool {
	return b.AllowedTools == nil || slices.Contains(b.AllowedTools, name)
}

// FunctionTool is a {type: "function"} entry: a tool the client runs. When the model calls it
// the execution pauses with the call for the client to answer.
type FunctionTool struct {
	Name        string
	Description string
	Parameters  map[string]any // a JSON Schema of the arguments (an object)
	Path        string
}

// toolEntry validates one entry of a node's tools array.
func (v *validator) toolEntry(x any, path string) {
	if s, ok := x.(string); ok {
		v.str(x, path, true)
		v.memoryTool(s, path)
		return
	}
	m, ok := x.(map[string]any)
	if !ok {
		v.add(path, "must be a built-in tool's name or an object with type \"mcp\" or \"function\"")
		return
	}
	typ, _ := m["type"].(string)
	switch typ {
	case ToolKindMCP:
		v.allowedKeys(m, path, "type", "server", "allowed_tools", "require_approval")
		if s, ok := m["server"]; !ok {
			v.add(path+".server", "is required: the name or id of one of your MCP servers")
		} else {
			v.str(s, path+".server", true)
		}
		if a, ok := m["allowed_tools"]; ok && a != nil {
			v.stringList(a, path+".allowed_tools", 256)
		}
		if r, ok := m["require_approval"]; ok && r != nil {
			v.approval(r, path+".require_approval")
		}
	case ToolKindFunction:
		v.allowedKeys(m, path, "type", "name", "description", "parameters")
		name, ok := m["name"].(string)
		switch {
		case !ok:
			v.add(path+".name", "is required: a string")
		case !ValidToolName(name):
			v.add(path+".name", "must be 1-64 letters, digits, _ or -")
		default:
			v.memoryTool(name, path+".name")
		}
		if d, ok := m["description"]; ok && d != nil {
			if s, ok := d.(string); !ok {
				v.add(path+".description", "must be a string")
			} else if len(s) > 4096 {
				v.add(path+".description", "must be at most 4096 characters")
			}
		}
		if p, ok := m["parameters"]; ok && p != nil {
			if obj, ok := v.object(p, path+".parameters"); ok {
				if t, ok := obj["type"]; ok && t != "object" {
					v.add(path+".parameters.type", `must be "object": a function's arguments are an object`)
				}
			}
		}
	case "":
		v.add(path+".type", `is required: "mcp" or "function"`)
	default:
		v.add(path+".type", `must be "mcp" or "function", not %q`, Clip(typ, 64))
	}
}

// allowedKeys reports the keys of m that are not among keys.
func (v *validator) allowedKeys(m map[string]any, path string, keys ...string) {
	var extra []string
	for k := range m {
		if !slices.Contains(keys, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		v.add(path+"."+k, "is not a field of this tool entry (fields: %s)", strings.Join(keys, ", "))
	}
}

func (v *validator) approval(x any, path string) {
	switch a := x.(type) {
	case string:
		if a != ApprovalNever && a != ApprovalAlways {
			v.add(path, `must be "never", "always" or {"always": [tool names]}`)
		}
	case map[string]any:
		v.allowedKeys(a, path, "always")
		if l, ok := a["always"]; !ok {
			v.add(path+".always", "is required: the tool names that need approval")
		} else {
			v.stringList(l, path+".always", 256)
		}
	default:
		v.add(path, `must be "never", "always" or {"always": [tool names]}`)
	}
}

// parseToolEntry reads one entry ValidateAgentConfig accepted into n.
func parseToolEntry(n *NodeConfig, x any, path string, tools ToolCatalog, errs *[]FieldError) {
	if name, ok := x.(string); ok {
		if tools == nil || !tools.Has(name) {
			*errs = append(*errs, FieldError{Field: path, Message: fmt.Sprintf("unknown tool %q; available: %s", name, available(tools))})
			return
		}
		n.Tools = append(n.Tools, name)
		return
	}
	m := x.(map[string]any)
	switch m["type"] {
	case ToolKindMCP:
		b := MCPBinding{Path: path}
		b.Server, _ = m["server"].(string)
		if l, ok := m["allowed_tools"].([]any); ok {
			b.AllowedTools = []string{}
			for _, s := range l {
				b.AllowedTools = append(b.AllowedTools, s.(string))
			}
		}
		switch r := m["require_approval"].(type) {
		case string:
			b.Approval.Always = r == ApprovalAlways
		case map[string]any:
			for _, s := range r["always"].([]any) {
				b.Approval.Tools = append(b.Approval.Tools, s.(string))
			}
		}
		n.MCP = append(n.MCP, b)
	case ToolKindFunction:
		f := FunctionTool{Path: path, Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}
		f.Name, _ = m["name"].(string)
		f.Description, _ = m["description"].(string)
		if p, ok := m["parameters"].(map[string]any); ok {
			f.Parameters = p
		}
		if tools != nil && tools.Has(f.Name) {
			*errs = append(*errs, FieldError{Field: path + ".name", Message: fmt.Sprintf("%q is a built-in tool's name; choose another", f.Name)})
			return
		}
		if tools != nil {
			if err := tools.CheckSchema(f.Parameters); err != nil {
				*errs = append(*errs, FieldError{Field: path + ".parameters", Message: "is not a valid JSON Schema: " + err.Error()})
				return
			}
		}
		n.Functions = append(n.Functions, f)
	}
}

// MCPServers finds a company's MCP servers by name or id, for the checks of a configuration's
// bindings (the mcpservers feature implements it from one read of the company's servers).
type MCPServers func(ref string) (*MCPServer, bool)

// MCPResolver reads the MCP servers of a company that refs name, by name or id, at once (the
// mcpservers feature); it reads no others.
type MCPResolver interface {
	Resolve(ctx context.Context, company string, refs []string) (MCPServers, error)
}

// MCPRefs lists the server references (names or ids, as written) of the node's bindings, each
// once.
func (n *NodeConfig) MCPRefs() []string {
	var out []string
	for _, b := range n.MCP {
		if !slices.Contains(out, b.Server) {
			out = append(out, b.Server)
		}
	}
	return out
}

// MCPRefs lists the server references of every node of c, each once.
func (c *AgentConfig) MCPRefs() []string {
	var out []string
	for _, name := range c.Order {
		if n := c.Nodes[name]; n != nil {
			for _, ref := range n.MCPRefs() {
				if !slices.Contains(out, ref) {
					out = append(out, ref)
				}
			}
		}
	}
	return out
}

// CheckToolsFor is CheckTools with the servers c binds, read (once) only when a node binds one;
// r nil knows no server.
func (c *AgentConfig) CheckToolsFor(ctx context.Context, r MCPResolver, company string) ([]FieldError, error) {
	var find MCPServers
	if c.HasMCP() && r != nil {
		var err error
		if find, err = r.Resolve(ctx, company, c.MCPRefs()); err != nil {
			return nil, fmt.Errorf("check MCP servers: %w", err)
		}
	}
	return c.CheckTools(find), nil
}

// HasMCP reports whether a node of c binds an MCP server.
func (c *AgentConfig) HasMCP() bool {
	for _, n := range c.Nodes {
		if len(n.MCP) > 0 {
			return true
		}
	}
	return false
}

// ForeignMCP refuses every MCP binding of a configuration written in another company (a public
// agent of another company): a binding spends the credentials of the opener's servers, and a
// configuration may only spend what its author's company owns. One error per binding, on its
// server field.
func (c *AgentConfig) ForeignMCP() []FieldError {
	var errs []FieldError
	for _, name := range c.Order {
		n := c.Nodes[name]
		if n == nil {
			continue
		}
		for _, b := range n.MCP {
			errs = append(errs, FieldError{Field: b.Path + ".server", Message: fmt.Sprintf(
				"binds the MCP server %q: an agent of another company cannot use your company's MCP servers; copy the agent into your company to bind them", Clip(b.Server, 64))})
		}
	}
	return errs
}

// CheckTools checks what ParseConfig cannot alone: that every MCP binding names a server of the
// company (another company's is unknown all the same) and tools it offers, and that no two
// entries of one node bring the same tool name (built-ins and knowledge_base_search included).
// Errors name the dotted field of the offending entry.
func (c *AgentConfig) CheckTools(servers MCPServers) []FieldError {
	var errs []FieldError
	for _, name := range c.Order {
		n := c.Nodes[name]
		if n == nil {
			continue
		}
		seen := map[string]string{} // tool name → the entry that brought it
		claim := func(tool, path string) {
			if first, dup := seen[tool]; dup {
				errs = append(errs, FieldError{Field: path, Message: fmt.Sprintf("brings the tool %q, which %s already brings; a node's tool names must be unique", tool, first)})
				return
			}
			seen[tool] = path
		}
		for _, t := range n.Tools {
			seen[t] = "the built-in " + t // a built-in named twice is bound once, as before
		}
		if len(n.KnowledgeBases) > 0 {
			seen[KnowledgeSearchTool] = "knowledge_bases"
		}
		if c.Memory.Enabled && n.AgentType == AgentTypeReact {
			for _, t := range MemoryTools {
				seen[t] = "memory"
			}
		}
		for _, f := range n.Functions {
			claim(f.Name, f.Path)
		}
		for i := range n.MCP {
			b := &n.MCP[i]
			srv, ok := (*MCPServer)(nil), false
			if servers != nil {
				srv, ok = servers(b.Server)
			}
			if !ok {
				errs = append(errs, FieldError{Field: b.Path + ".server", Message: fmt.Sprintf("no MCP server %q; register it with POST /api/v1/mcp-servers/", Clip(b.Server, 64))})
				continue
			}
			offered := map[string]bool{}
			for _, t := range srv.Tools {
				offered[t.Name] = true
			}
			for j, t := range b.AllowedTools {
				if !offered[t] {
					errs = append(errs, FieldError{Field: fmt.Sprintf("%s.allowed_tools.%d", b.Path, j), Message: fmt.Sprintf("the MCP server %q has no tool %q (refresh its tools if it changed)", srv.Name, Clip(t, 64))})
				} else if !ValidToolName(t) {
					errs = append(errs, FieldError{Field: fmt.Sprintf("%s.allowed_tools.%d", b.Path, j), Message: fmt.Sprintf("the tool name %q cannot be given to models (1-64 letters, digits, _ or -)", Clip(t, 64))})
				}
			}
			for j, t := range b.Approval.Tools {
				if !offered[t] || !b.Allows(t) {
					errs = append(errs, FieldError{Field: fmt.Sprintf("%s.require_approval.always.%d", b.Path, j), Message: fmt.Sprintf("%q is not a tool this entry binds", Clip(t, 64))})
				}
			}
			for _, t := range srv.Tools {
				if b.Allows(t.Name) && ValidToolName(t.Name) {
					claim(t.Name, b.Path)
				}
			}
		}
	}
	return errs
}
