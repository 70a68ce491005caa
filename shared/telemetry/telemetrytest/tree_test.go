package telemetrytest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/telemetry"
)

// scripted answers the first model call with a call of lookup and a search of the knowledge
// bases, and the second with the final text.
type scripted struct{}

func (scripted) Converse(_ context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	for _, t := range req.Turns {
		for _, p := range t.Parts {
			if p.ToolResult != nil {
				return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "Order A-1 ships today [1]."}},
					StopReason: domain.StopEndTurn, Usage: domain.Usage{InputTokens: 30, OutputTokens: 7}}, nil
			}
		}
	}
	return &domain.ModelResponse{StopReason: domain.StopToolUse, Usage: domain.Usage{InputTokens: 20, OutputTokens: 5}, Parts: []domain.Part{
		{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "call-1", Name: "lookup", Input: map[string]any{"order_id": "A-1"}}},
		{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "call-2", Name: engine.SearchToolName, Input: map[string]any{"query": "shipping secret-query"}}},
	}}, nil
}

type lookup struct{}

func (lookup) Spec() domain.ToolSpec {
	return domain.ToolSpec{Name: "lookup", Description: "Looks up an order.", Schema: map[string]any{"type": "object"}}
}
func (lookup) Call(context.Context, map[string]any) (string, error) {
	return "secret-result: shipped", nil
}

type catalog struct{}

func (catalog) Has(name string) bool             { return name == "lookup" }
func (catalog) Names() []string                  { return []string{"lookup"} }
func (catalog) CheckSchema(map[string]any) error { return nil }
func (catalog) Bind(context.Context, domain.Principal, *engine.Node) ([]domain.Tool, error) {
	return []domain.Tool{lookup{}}, nil
}

type retriever struct{}

func (retriever) SearchKnowledge(_ context.Context, _, _ string, refs []domain.KnowledgeBaseRef, _ int) (*domain.RetrievalResult, error) {
	return &domain.RetrievalResult{Hits: []domain.Hit{{ID: "chunk-7", KBID: refs[0].ID, FileID: "f1", FileName: "faq.md", ChunkIndex: 2,
		Text: "secret-passage: orders ship in a day", Score: 0.83}}}, nil
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// exporting starts a receiver and a tracing exporting to it, shut down as t ends.
func exporting(t *testing.T) (*Receiver, *telemetry.Tracing) {
	t.Helper()
	rcv := Start(t)
	tr, err := telemetry.Start(context.Background(), telemetry.Config{Endpoint: rcv.URL, Timeout: 5 * time.Second, ServiceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return rcv, tr
}

// callerContext carries the caller's span (callerTrace, callerSpan) as the API edge extracts it
// from an execute's traceparent header.
func callerContext() context.Context {
	h := http.Header{}
	h.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	return propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
}

// run runs a react agent with a tool and a knowledge base under a caller's traceparent, its
// spans exported to a real OTLP receiver, and returns the spans received by name.
func run(t *testing.T, capture bool) map[string]Span {
	t.Helper()
	rcv, tr := exporting(t)
	var cfg map[string]any
	_ = json.Unmarshal([]byte(`{"name":"support","agent_type":"react_agent","system_prompt":"secret-system","tools":["lookup"],
		"knowledge_bases":[{"name":"faq","knowledge_base_type":"opensearch","knowledge_base_id":"kb-1"}]}`), &cfg)
	g, errs := domain.ParseConfig(cfg, catalog{}, "")
	if len(errs) > 0 {
		t.Fatalf("ParseConfig: %v", errs)
	}
	eng := engine.NewEngine(engine.ModelSet{Default: "bedrock", ByName: map[string]domain.Model{"bedrock": scripted{}}}, catalog{}, engine.Limits{}).
		WithRetriever(retriever{}).WithTracing(engine.Tracing{Provider: tr.Provider(), CaptureContent: capture, Flush: tr.Flush})
	ctx := callerContext()
	res, err := eng.Run(ctx, engine.Run{Graph: g, Principal: domain.Principal{Company: "acme"}, Input: []domain.Part{{Type: domain.PartText, Text: "secret-prompt: where is A-1?"}},
		Trace: engine.TraceInfo{ConversationID: "sess-1", AgentID: "agent-1", AgentName: "Support", ExecutionID: "exec-1"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Messages[0].Content != "Order A-1 ships today [1]." {
		t.Fatalf("answer %q", res.Messages[0].Content)
	}
	// The engine flushed as the run ended: the spans are at the receiver already.
	spans := rcv.Spans()
	byName := map[string]Span{}
	for _, s := range spans {
		name := s.Name
		if _, dup := byName[name]; dup {
			name += " #2" // the second model call
		}
		byName[name] = s
	}
	return byName
}

func TestRunSpanTreeAtCollector(t *testing.T) {
	spans := run(t, false)
	// The tree, each span by its parent's name; the root's parent is the caller's span.
	wantParent := map[string]string{
		"invoke_agent Support":                  "caller",
		"invoke_agent support":                  "invoke_agent Support",
		"chat":                                  "invoke_agent support",
		"chat #2":                               "invoke_agent support",
		"execute_tool lookup":                   "invoke_agent support",
		"execute_tool " + engine.SearchToolName: "invoke_agent support",
		"retrieval kb-1":                        "execute_tool " + engine.SearchToolName,
	}
	names := map[string]string{callerSpan: "caller"}
	for n, s := range spans {
		names[s.SpanID] = n
	}
	got := map[string]string{}
	for n, s := range spans {
		if s.TraceID != callerTrace {
			t.Errorf("span %q in trace %s, want the caller's %s", n, s.TraceID, callerTrace)
		}
		got[n] = names[s.ParentID]
	}
	if diff := cmp.Diff(wantParent, got); diff != "" {
		t.Fatalf("span tree, name → parent (-want +got):\n%s", diff)
	}

	root := spans["invoke_agent Support"].Attrs
	for k, v := range map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Support", "gen_ai.agent.id": "agent-1",
		"gen_ai.conversation.id": "sess-1", "gen_ai.usage.input_tokens": int64(50), "gen_ai.usage.output_tokens": int64(12)} {
		if root[k] != v {
			t.Errorf("root %s = %v, want %v", k, root[k], v)
		}
	}
	chat := spans["chat"]
	if chat.Kind != "Client" {
		t.Errorf("chat span kind %s, want Client", chat.Kind)
	}
	for k, v := range map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.system": "aws.bedrock",
		"gen_ai.usage.input_tokens": int64(20), "gen_ai.usage.output_tokens": int64(5)} {
		if chat.Attrs[k] != v {
			t.Errorf("chat %s = %v, want %v", k, chat.Attrs[k], v)
		}
	}
	if fr, _ := chat.Attrs["gen_ai.response.finish_reasons"].([]any); len(fr) != 1 || fr[0] != domain.StopToolUse {
		t.Errorf("chat finish reasons %v, want [tool_use]", chat.Attrs["gen_ai.response.finish_reasons"])
	}
	tool := spans["execute_tool lookup"].Attrs
	for k, v := range map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call-1",
		"gen_ai.tool.type": "function"} {
		if tool[k] != v {
			t.Errorf("execute_tool %s = %v, want %v", k, tool[k], v)
		}
	}
	ret := spans["retrieval kb-1"].Attrs
	if ret["gen_ai.operation.name"] != "retrieval" || ret["gen_ai.data_source.id"] != "kb-1" ||
		ret["gen_ai.retrieval.documents"] != `[{"id":"chunk-7","score":0.83}]` {
		t.Errorf("retrieval attributes %v", ret)
	}
	// Without the opt-in no content reaches the collector.
	for n, s := range spans {
		b, _ := json.Marshal(s.Attrs)
		if strings.Contains(string(b), "secret-") {
			t.Errorf("span %q carries content without the opt-in: %s", n, b)
		}
	}
}

func TestRunSpanContentOptIn(t *testing.T) {
	spans := run(t, true)
	for name, keys := range map[string][]string{
		"chat":                {"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages"},
		"execute_tool lookup": {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"},
		"retrieval kb-1":      {"gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"},
	} {
		for _, k := range keys {
			if v, _ := spans[name].Attrs[k].(string); !strings.Contains(v, "secret-") && !strings.Contains(v, "A-1") {
				t.Errorf("%s %s = %q, want the content", name, k, v)
			}
		}
	}
}
