package domain

import (
	"slices"
	"strings"
)

// MCPServeConfig is how an agent is served as a tool of the MCP server (/api/v1/mcp/), from its
// configuration's optional "mcp" object (docs/mcp-server.md).
type MCPServeConfig struct {
	// ToolName names the agent's tool instead of its agent_key ("" for the key).
	ToolName string
	// DefaultMessage is the user message of a call that gives none ("": a call must give one).
	DefaultMessage string
}

// Bounds of the "mcp" object.
const (
	// MaxDefaultMessageLength bounds mcp.default_message in bytes.
	MaxDefaultMessageLength = 10_000
)

var mcpServeFields = []string{"tool_name", "default_message"}

// MCPServeOf reads the "mcp" object of a configuration; a missing or malformed one (which
// validation refuses) is the zero value.
func MCPServeOf(cfg map[string]any) MCPServeConfig {
	m, _ := cfg["mcp"].(map[string]any)
	name, _ := m["tool_name"].(string)
	msg, _ := m["default_message"].(string)
	return MCPServeConfig{ToolName: name, DefaultMessage: strings.TrimSpace(msg)}
}

// mcpServe checks the "mcp" object: tool_name a name every provider accepts (ValidToolName),
// default_message a string with something visible, of at most MaxDefaultMessageLength bytes.
func (v *validator) mcpServe(x any, path string) {
	m, ok := v.object(x, path)
	if !ok {
		return
	}
	var extra []string
	for k := range m {
		if !slices.Contains(mcpServeFields, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		v.add(path+"."+Clip(k, 64), "is not a field of mcp (fields: %s)", strings.Join(mcpServeFields, ", "))
	}
	if n, ok := m["tool_name"]; ok && n != nil {
		if s, ok := v.str(n, path+".tool_name", false); ok && !ValidToolName(s) {
			v.add(path+".tool_name", "must be 1-64 letters, digits, _ or -")
		}
	}
	if d, ok := m["default_message"]; ok && d != nil {
		if s, ok := v.str(d, path+".default_message", false); ok {
			switch {
			case !HasVisible(s):
				v.add(path+".default_message", "must not be empty")
			case len(s) > MaxDefaultMessageLength:
				v.add(path+".default_message", "must be at most %d bytes", MaxDefaultMessageLength)
			}
		}
	}
}
