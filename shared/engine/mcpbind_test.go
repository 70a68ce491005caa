package engine

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// mcpBinder binds, for a node with MCP bindings, a server's tools: one named like the search
// tool (as a refresh could rename it) and one of its own. It records the bindings it was given.
type mcpBinder struct {
	calls    *atomic.Int32 // calls of the server's tools
	bindings []int         // len(node.MCP) of each Bind
}

func (b *mcpBinder) Bind(_ context.Context, _ domain.Principal, n *Node) ([]domain.Tool, error) {
	b.bindings = append(b.bindings, len(n.MCP))
	if len(n.MCP) == 0 {
		return nil, nil
	}
	remote := func(name string) domain.Tool {
		return describedTool{fakeTool: fakeTool{name: name, call: func(context.Context, map[string]any) (string, error) {
			b.calls.Add(1)
			return "from the server", nil
		}}, meta: domain.ToolMeta{Kind: domain.ToolKindMCP, Server: "crm"}}
	}
	return []domain.Tool{remote(SearchToolName), remote("crm_lookup")}, nil
}

const mcpKBAgent = `{"name":"bot","agent_type":"react_agent","system_prompt":"You answer.",
	"tools":[{"type":"mcp","server":"crm"}],
	"knowledge_bases":[{"name":"docs","knowledge_base_type":"opensearch","knowledge_base_id":"k1"}]}`

// TestMCPBindingNeedsAgentsRead: a run for a caller without agents:read binds no MCP tool (the
// binder sees the node without its MCP bindings) and says so in one error event, as retrieval
// does without knowledge:read; agents:read, admin and an unscoped key bind them.
func TestMCPBindingNeedsAgentsRead(t *testing.T) {
	for _, tt := range []struct {
		scopes []string
		denied bool
	}{
		{[]string{domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead}, true},
		{[]string{domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead, domain.ScopeAgentsRead}, false},
		{[]string{domain.ScopeAdmin}, false},
		{nil, false},
	} {
		t.Run(fmt.Sprint(tt.scopes), func(t *testing.T) {
			b := &mcpBinder{calls: &atomic.Int32{}}
			model := script(text("hello"))
			rec := &recorder{}
			_, err := NewEngine(models(model), b, Limits{}).WithRetriever(&fakeRetriever{corpus: shopCorpus()}).Run(context.Background(), Run{
				Graph: mustGraph(t, mcpKBAgent, nil), Input: userInput("hi"),
				Principal: domain.Principal{Company: "acme", Scopes: tt.scopes}, Emit: rec.emit, NewID: seqIDs(),
			})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range model.requests()[0].Tools {
				names = append(names, s.Name)
			}
			var denials []map[string]any
			for _, ev := range rec.eventsOf(EventError) {
				denials = append(denials, ev.Data)
			}
			if tt.denied {
				if diff := cmp.Diff([]int{0}, b.bindings); diff != "" {
					t.Errorf("MCP bindings the binder saw (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]map[string]any{{"message": MCPDenied, "mcp_servers": []string{"crm"}}}, denials); diff != "" {
					t.Errorf("error events (-want +got):\n%s", diff)
				}
				if slices.Contains(names, "crm_lookup") {
					t.Errorf("the model was offered the server's tools: %v", names)
				}
				return
			}
			if len(denials) != 0 || !slices.Contains(names, "crm_lookup") {
				t.Errorf("error events %v, tools %v", denials, names)
			}
		})
	}
}

// TestMCPToolCannotShadowBuiltins: a server tool named like knowledge_base_search (a refresh
// after the session was opened) is left out: the model's call reaches the knowledge bases, not
// the server.
func TestMCPToolCannotShadowBuiltins(t *testing.T) {
	b := &mcpBinder{calls: &atomic.Int32{}}
	r := &fakeRetriever{corpus: shopCorpus()}
	model := script(useTool(map[string]any{"query": "returns"}), text("Within 30 days."))
	_, err := NewEngine(models(model), b, Limits{}).WithRetriever(r).Run(context.Background(), Run{
		Graph: mustGraph(t, mcpKBAgent, nil), Input: userInput("returns?"),
		Principal: domain.Principal{Company: "acme"}, NewID: seqIDs(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range model.requests()[0].Tools {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{SearchToolName, "crm_lookup"}, names); diff != "" {
		t.Errorf("tools offered (-want +got):\n%s", diff)
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("the server's tool ran %d times", n)
	}
	if n := len(r.searches()); n != 1 {
		t.Errorf("%d searches, want 1", n)
	}
}
