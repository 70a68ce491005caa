package domain

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateMCPServe(t *testing.T) {
	for _, tc := range []struct {
		name, mcp string
		want      []string
	}{
		{"both", `{"tool_name":"ask_support","default_message":"Status?"}`, nil},
		{"nulls", `{"tool_name":null,"default_message":null}`, nil},
		{"empty object", `{}`, nil},
		{"not an object", `"ask"`, []string{"mcp"}},
		{"bad name", `{"tool_name":"has space"}`, []string{"mcp.tool_name"}},
		{"name a number", `{"tool_name":3}`, []string{"mcp.tool_name"}},
		{"name too long", `{"tool_name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`, []string{"mcp.tool_name"}},
		{"blank message", `{"default_message":"  "}`, []string{"mcp.default_message"}},
		{"unknown field", `{"tool_name":"a","title":"x"}`, []string{"mcp.title"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg map[string]any
			if err := json.Unmarshal([]byte(`{"name":"a","mcp":`+tc.mcp+`}`), &cfg); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ValidateAgentConfig(cfg, "") {
				got = append(got, e.Field)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMCPServeOf(t *testing.T) {
	got := MCPServeOf(map[string]any{"mcp": map[string]any{"tool_name": "ask", "default_message": " Go. "}})
	if want := (MCPServeConfig{ToolName: "ask", DefaultMessage: "Go."}); got != want {
		t.Errorf("MCPServeOf = %+v, want %+v", got, want)
	}
	if got := MCPServeOf(map[string]any{"mcp": "x"}); got != (MCPServeConfig{}) {
		t.Errorf("malformed = %+v, want zero", got)
	}
}
