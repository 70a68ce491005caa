package domain

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// builtins is a catalog of two built-in tools whose schema check accepts object schemas only.
type builtins []string

func (b builtins) Has(name string) bool { return slices.Contains(b, name) }
func (b builtins) Names() []string      { return b }
func (b builtins) CheckSchema(s map[string]any) error {
	if s["type"] != "object" {
		return errors.New("not an object schema")
	}
	return nil
}

func parseTools(t *testing.T, tools string) (*AgentConfig, []FieldError) {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal([]byte(`{"name":"a","agent_type":"react_agent","tools":`+tools+`}`), &cfg); err != nil {
		t.Fatal(err)
	}
	return ParseConfig(cfg, builtins{"calculator", "http_request"}, "system_config")
}

func TestToolEntriesRefusedWhereParsed(t *testing.T) {
	for _, tt := range []struct{ tools, field, says string }{
		{`[{"type":"plugin"}]`, "system_config.tools.0.type", `"mcp" or "function"`},
		{`[{"server":"x"}]`, "system_config.tools.0.type", "is required"},
		{`[5]`, "system_config.tools.0", "built-in tool's name or an object"},
		{`[{"type":"mcp"}]`, "system_config.tools.0.server", "is required"},
		{`[{"type":"mcp","server":"s","allowed_tools":"echo"}]`, "system_config.tools.0.allowed_tools", "array of strings"},
		{`[{"type":"mcp","server":"s","require_approval":"sometimes"}]`, "system_config.tools.0.require_approval", `"never", "always"`},
		{`[{"type":"mcp","server":"s","require_approval":{"always":[1]}}]`, "system_config.tools.0.require_approval.always.0", "string"},
		{`[{"type":"mcp","server":"s","extra":1}]`, "system_config.tools.0.extra", "not a field"},
		{`[{"type":"function"}]`, "system_config.tools.0.name", "is required"},
		{`[{"type":"function","name":"has space"}]`, "system_config.tools.0.name", "letters, digits"},
		{`[{"type":"function","name":"f","parameters":[]}]`, "system_config.tools.0.parameters", "object"},
		{`[{"type":"function","name":"f","parameters":{"type":"string"}}]`, "system_config.tools.0.parameters.type", `"object"`},
		{`[{"type":"function","name":"calculator"}]`, "system_config.tools.0.name", "built-in"},
		{`["nope"]`, "system_config.tools.0", "unknown tool"},
	} {
		_, errs := parseTools(t, tt.tools)
		found := false
		for _, e := range errs {
			if e.Field == tt.field && strings.Contains(e.Message, tt.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: errors %v, want %s saying %q", tt.tools, errs, tt.field, tt.says)
		}
	}
}

func TestToolEntriesParsed(t *testing.T) {
	g, errs := parseTools(t, `["calculator",{"type":"mcp","server":"docs","allowed_tools":["echo"],"require_approval":{"always":["echo"]}},
		{"type":"function","name":"lookup","description":"d","parameters":{"type":"object"}}]`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	n := g.Nodes["a"]
	if !slices.Equal(n.Tools, []string{"calculator"}) || len(n.MCP) != 1 || len(n.Functions) != 1 {
		t.Fatalf("node = %+v", n)
	}
	b := n.MCP[0]
	if b.Server != "docs" || !b.Allows("echo") || b.Allows("add") || !b.Approval.Needs("echo") || b.Path != "system_config.tools.1" {
		t.Fatalf("binding = %+v", b)
	}
	if f := n.Functions[0]; f.Name != "lookup" || f.Parameters["type"] != "object" {
		t.Fatalf("function = %+v", f)
	}
	if !slices.Contains(g.ScopesNeeded(), ScopeAgentsRead) {
		t.Fatalf("binding an MCP server needs agents:read: %v", g.ScopesNeeded())
	}
}

func TestCheckTools(t *testing.T) {
	docs := &MCPServer{ID: "11111111-1111-1111-1111-111111111111", Name: "docs", Tools: []MCPTool{{Name: "echo"}, {Name: "calculator"}, {Name: "bad.name"}}}
	servers := func(ref string) (*MCPServer, bool) {
		if ref == docs.Name || ref == docs.ID {
			return docs, true
		}
		return nil, false
	}
	for _, tt := range []struct{ tools, field string }{
		{`[{"type":"mcp","server":"other"}]`, "system_config.tools.0.server"},
		{`[{"type":"mcp","server":"docs","allowed_tools":["nope"]}]`, "system_config.tools.0.allowed_tools.0"},
		{`[{"type":"mcp","server":"docs","allowed_tools":["bad.name"]}]`, "system_config.tools.0.allowed_tools.0"},
		{`[{"type":"mcp","server":"docs","allowed_tools":["echo"],"require_approval":{"always":["calculator"]}}]`, "system_config.tools.0.require_approval.always.0"},
		// The server's calculator collides with the built-in one.
		{`["calculator",{"type":"mcp","server":"docs"}]`, "system_config.tools.1"},
		{`[{"type":"function","name":"echo"},{"type":"mcp","server":"11111111-1111-1111-1111-111111111111","allowed_tools":["echo"]}]`, "system_config.tools.1"},
		{`[{"type":"function","name":"f"},{"type":"function","name":"f"}]`, "system_config.tools.1"},
	} {
		g, errs := parseTools(t, tt.tools)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tt.tools, errs)
		}
		got := g.CheckTools(servers)
		if len(got) != 1 || got[0].Field != tt.field {
			t.Errorf("%s: %v, want one error at %s", tt.tools, got, tt.field)
		}
	}
	g, _ := parseTools(t, `["calculator",{"type":"mcp","server":"docs","allowed_tools":["echo"]},{"type":"function","name":"lookup"}]`)
	if errs := g.CheckTools(servers); len(errs) != 0 {
		t.Fatalf("a valid binding: %v", errs)
	}
	if errs := g.CheckTools(nil); len(errs) != 1 {
		t.Fatalf("no servers known: %v", errs)
	}
}
