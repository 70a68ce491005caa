package telemetrytest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// memory is a user's memory with one block and one record.
type memory struct{}

func (memory) Blocks(context.Context, domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	return []*domain.MemoryBlock{{ID: "b1", Label: "human", Value: "secret-block: Name: Sam", Limit: 2000}}, nil
}
func (memory) Search(context.Context, domain.MemoryScope, string, int) ([]domain.MemoryHit, int, error) {
	return []domain.MemoryHit{{Record: domain.MemoryRecord{ID: "rec-1", Text: "secret-record: allergic to peanuts"}, Score: 0.91}}, 3, nil
}
func (memory) Save(context.Context, domain.MemoryScope, string, domain.MemorySource) (*domain.MemoryRecord, error) {
	return nil, nil
}
func (memory) EditBlock(context.Context, domain.MemoryScope, domain.MemoryBlockSpec, domain.MemorySource, func(string) (string, error)) (*domain.MemoryBlock, error) {
	return nil, nil
}

// answer is an llm_agent's model.
type answer struct{}

func (answer) Converse(context.Context, domain.ModelRequest) (*domain.ModelResponse, error) {
	return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "Noted."}}, StopReason: domain.StopEndTurn}, nil
}

// TestMemoryRecallSpan: an execution's memory recall is a "retrieval memory" span under the
// node's, at a real OTLP receiver, listing the records it found by id and score; their text and
// the query only under the content opt-in, and the end user's id never.
func TestMemoryRecallSpan(t *testing.T) {
	for _, capture := range []bool{false, true} {
		rcv, tr := exporting(t)
		var cfg map[string]any
		_ = json.Unmarshal([]byte(`{"name":"concierge","system_prompt":"You help.","memory":{"recall":{"top_k":3}}}`), &cfg)
		g, errs := domain.ParseConfig(cfg, catalog{}, "")
		if len(errs) > 0 {
			t.Fatalf("ParseConfig: %v", errs)
		}
		eng := engine.NewEngine(engine.ModelSet{Default: "bedrock", ByName: map[string]domain.Model{"bedrock": answer{}}}, nil, engine.Limits{}).
			WithMemory(memory{}).WithTracing(engine.Tracing{Provider: tr.Provider(), CaptureContent: capture, Flush: tr.Flush})
		_, err := eng.Run(callerContext(), engine.Run{Graph: g, Principal: domain.Principal{Company: "acme"},
			Input:  []domain.Part{{Type: domain.PartText, Text: "secret-query: what can I eat?"}},
			Memory: &engine.MemoryRun{Scope: domain.MemoryScope{Company: "acme", UserID: "user-secret-id", AgentID: "a1"}, Config: g.Memory}})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]Span{}
		for _, s := range rcv.Spans() {
			byName[s.Name] = s
		}
		// The node's span is the chat span's parent (the run's has the same name).
		rec, chat := byName["retrieval memory"], byName["chat"]
		if rec.SpanID == "" || chat.ParentID == "" || rec.ParentID != chat.ParentID {
			t.Fatalf("capture %v: no retrieval memory span under the node's: %v", capture, byName)
		}
		docs, _ := rec.Attrs["gen_ai.retrieval.documents"].(string)
		if rec.Attrs["gen_ai.data_source.id"] != "memory" || rec.Attrs["gen_ai.retrieval.top_k"] != int64(3) ||
			!strings.Contains(docs, `"id":"rec-1","score":0.91`) {
			t.Errorf("capture %v: retrieval memory attributes %v", capture, rec.Attrs)
		}
		if got := strings.Contains(docs, "secret-record"); got != capture {
			t.Errorf("capture %v: the record's text in the span: %v (%s)", capture, got, docs)
		}
		for n, s := range byName {
			b, _ := json.Marshal(s.Attrs)
			if strings.Contains(string(b), "user-secret-id") {
				t.Errorf("span %q names the end user: %s", n, b)
			}
		}
	}
}
