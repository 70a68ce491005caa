package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/google/go-cmp/cmp"
)

// kbAgent is an agent of the given type with system prompt "You answer." and knowledge_bases
// docs (k1) and faq (k2); extra is appended to the faq entry.
func kbAgent(agentType, faqExtra string) string {
	return `{"name":"bot","agent_type":"` + agentType + `","system_prompt":"You answer.","knowledge_bases":[
		{"name":"docs","knowledge_base_type":"opensearch","knowledge_base_id":"k1","description":"Product manuals"},
		{"name":"faq","knowledge_base_type":"opensearch","knowledge_base_id":"k2"` + faqExtra + `}]}`
}

// shopCorpus is two knowledge bases of a shop.
func shopCorpus() map[string][]domain.Hit {
	return map[string][]domain.Hit{
		"k1": {hit("k1", "manual.pdf", 3, 0.91, "Returns are accepted within 30 days."),
			hit("k1", "manual.pdf", 4, 0.52, "Refunds go to the original card.")},
		"k2": {hit("k2", "faq.md", 0, 0.77, "Shipping takes 2 days.")},
	}
}

// runKB runs g once with the retriever for company acme and records the events.
func runKB(t *testing.T, g *Graph, model domain.Model, r Retriever, input []domain.Part) (*Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	res, err := NewEngine(models(model), nil, Limits{}).WithRetriever(r).Run(context.Background(), Run{
		Graph: g, Principal: domain.Principal{Company: "acme"}, Input: input, Emit: rec.emit, NewID: seqIDs(),
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, rec
}

func citationIndexes(cs []domain.Citation) []int {
	out := []int{}
	for _, c := range cs {
		out = append(out, c.Index)
	}
	return out
}

func TestLLMRetrievalPrompt(t *testing.T) {
	r := &fakeRetriever{corpus: shopCorpus()}
	model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
		return text("Within 30 days."), nil
	}}
	g := mustGraph(t, kbAgent("llm_agent", ""), nil)
	res, rec := runKB(t, g, model, r, userInput("  Can I return\nthings? "))

	wantSystem := "You answer.\n\n# Knowledge base context\n" +
		"The passages below were retrieved from the knowledge bases for the user's latest message. " +
		"Answer from them where they are relevant and cite each passage you use by its number in square brackets, like [1]. " +
		"If they do not contain the answer, say so instead of guessing.\n\n" +
		"[1] manual.pdf (knowledge base \"docs\", chunk 3)\nReturns are accepted within 30 days.\n\n" +
		"[2] faq.md (knowledge base \"faq\", chunk 0)\nShipping takes 2 days.\n\n" +
		"[3] manual.pdf (knowledge base \"docs\", chunk 4)\nRefunds go to the original card."
	reqs := model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	if diff := cmp.Diff(wantSystem, reqs[0].System); diff != "" {
		t.Errorf("system prompt (-want +got):\n%s", diff)
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("an llm_agent was offered tools %+v", reqs[0].Tools)
	}
	wantCalls := []searchCall{{Company: "acme", Query: "Can I return\nthings?", KBs: []string{"k1", "k2"}}}
	if diff := cmp.Diff(wantCalls, r.searches()); diff != "" {
		t.Errorf("searches (-want +got):\n%s", diff)
	}
	wantTypes := []string{EventNodeStarted, EventRetrieval, EventModelCall, EventNodeFinished}
	if diff := cmp.Diff(wantTypes, rec.types()); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	ev := rec.eventsOf(EventRetrieval)[0]
	if _, ok := ev.Data["duration_ms"].(int64); !ok || ev.Node != "bot" {
		t.Errorf("retrieval event %+v: want node bot and a duration_ms", ev)
	}
	delete(ev.Data, "duration_ms")
	wantData := map[string]any{"query": "Can I return\nthings?", "knowledge_bases": []string{"k1", "k2"}, "hits": 3, "source": "prompt",
		"chunks": []map[string]any{
			{"index": 1, "id": "k1/manual/3", "knowledge_base_id": "k1", "file_id": "manual", "chunk_index": 3, "score": 0.91},
			{"index": 2, "id": "k2/faq/0", "knowledge_base_id": "k2", "file_id": "faq", "chunk_index": 0, "score": 0.77},
			{"index": 3, "id": "k1/manual/4", "knowledge_base_id": "k1", "file_id": "manual", "chunk_index": 4, "score": 0.52},
		}}
	if diff := cmp.Diff(wantData, ev.Data); diff != "" {
		t.Errorf("retrieval event data (-want +got):\n%s", diff)
	}
	wantCites := []domain.Citation{
		{Index: 1, KnowledgeBaseID: "k1", FileID: "manual", FileName: "manual.pdf", ChunkIndex: 3, Score: 0.91, Text: "Returns are accepted within 30 days."},
		{Index: 2, KnowledgeBaseID: "k2", FileID: "faq", FileName: "faq.md", ChunkIndex: 0, Score: 0.77, Text: "Shipping takes 2 days."},
		{Index: 3, KnowledgeBaseID: "k1", FileID: "manual", FileName: "manual.pdf", ChunkIndex: 4, Score: 0.52, Text: "Refunds go to the original card."},
	}
	if diff := cmp.Diff(wantCites, res.Messages[0].Citations); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
}

func TestLLMCitationsReferenced(t *testing.T) {
	tests := []struct {
		answer string
		want   []int
	}{
		{"No numbers here.", []int{1, 2, 3}},
		{"Within 30 days [1].", []int{1}},
		{"See [2].", []int{2}},
		{"Both [1][3].", []int{1, 3}},
		{"Both [3, 1].", []int{1, 3}},
		{"Only a year [2024] and a missing passage [9].", []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
				return text(tt.answer), nil
			}}
			res, _ := runKB(t, mustGraph(t, kbAgent("llm_agent", ""), nil), model, &fakeRetriever{corpus: shopCorpus()}, userInput("returns?"))
			if diff := cmp.Diff(tt.want, citationIndexes(res.Messages[0].Citations)); diff != "" {
				t.Errorf("cited passages (-want +got):\n%s", diff)
			}
		})
	}
}

// longHits are n hits of k1 of size bytes each, best first.
func longHits(n, size int) []domain.Hit {
	var hs []domain.Hit
	for i := range n {
		hs = append(hs, hit("k1", "book.txt", i, 0.99-float64(i)/100, fmt.Sprintf("%03d", i)+strings.Repeat("x", size-3)))
	}
	return hs
}

func TestLLMPassageLimits(t *testing.T) {
	tests := []struct {
		name      string
		model     string // llm_config.model: sets the budget
		hits      []domain.Hit
		want      int // passages given
		wantFirst int // bytes of the first passage's text in the prompt
	}{
		// Budget min(6000, 128000/8) tokens: six passages of 1000 tokens fit, the seventh does not.
		{"budget", "", longHits(30, 4000), 6, 4000},
		// The sixth (2000 tokens) does not fit after five of 1000: it ends the selection although
		// a short seventh would fit.
		{"first misfit ends", "", append(longHits(5, 4000), hit("k1", "book.txt", 5, 0.3, strings.Repeat("y", 8000)),
			hit("k1", "book.txt", 6, 0.2, "short")), 5, 4000},
		// 30 short passages: MaxPassages of them.
		{"max passages", "", longHits(30, 40), MaxPassages, 40},
		// gpt-4's 8000-token window gives 1000 tokens: the first passage alone is cut to them
		// (4000 bytes with the "…"), the second is left out.
		{"first passage cut", "gpt-4", longHits(2, 10000), 1, 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRetriever{corpus: map[string][]domain.Hit{"k1": tt.hits}}
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text("ok"), nil }}
			llm := ""
			if tt.model != "" {
				llm = `"llm_config":{"model":"` + tt.model + `"},`
			}
			g := mustGraph(t, `{"name":"bot",`+llm+`"knowledge_bases":[
				{"name":"books","knowledge_base_id":"k1","retrieval_config":{"top_k":50}}]}`, nil)
			res, rec := runKB(t, g, model, r, userInput("x"))
			sys := model.requests()[0].System
			if !strings.Contains(sys, fmt.Sprintf("[%d] book.txt", tt.want)) || strings.Contains(sys, fmt.Sprintf("[%d] book.txt", tt.want+1)) {
				t.Errorf("system prompt does not end the passages at [%d]", tt.want)
			}
			if got := rec.eventsOf(EventRetrieval)[0].Data["hits"]; got != tt.want {
				t.Errorf("retrieval event hits = %v, want %d", got, tt.want)
			}
			if got := len(res.Messages[0].Citations); got != tt.want {
				t.Errorf("%d citations, want %d", got, tt.want)
			}
			first := strings.SplitN(strings.SplitN(sys, "[1] book.txt (knowledge base \"books\", chunk 0)\n", 2)[1], "\n\n", 2)[0]
			if len(first) != tt.wantFirst {
				t.Errorf("first passage has %d bytes, want %d", len(first), tt.wantFirst)
			}
			if budget := RetrievalBudget("", tt.model); EstimateTokens(first) > budget {
				t.Errorf("first passage estimated at %d tokens, over the budget of %d", EstimateTokens(first), budget)
			}
			// The passages are ASCII but for a cut mark at the end, so bytes are characters here.
			wantCite := first
			if len(first) > domain.CitationTextLength {
				wantCite = first[:domain.CitationTextLength] + "…"
			}
			if got := res.Messages[0].Citations[0].Text; got != wantCite {
				t.Errorf("citation text %q…, want %q…", domain.Clip(got, 40), domain.Clip(wantCite, 40))
			}
		})
	}
}

func TestLLMRetrievalProblemsAndFailures(t *testing.T) {
	tests := []struct {
		name        string
		retriever   *fakeRetriever
		wantErrors  []map[string]any
		wantCites   []int
		wantContext string // what the system prompt's context says after its heading
	}{
		{
			name:       "deleted knowledge base",
			retriever:  &fakeRetriever{corpus: map[string][]domain.Hit{"k1": shopCorpus()["k1"]}},
			wantErrors: []map[string]any{{"message": "knowledge base k2 not found", "knowledge_base_id": "k2"}},
			wantCites:  []int{1, 2},
		},
		{
			name:        "nothing found",
			retriever:   &fakeRetriever{corpus: map[string][]domain.Hit{"k1": nil, "k2": nil}},
			wantCites:   []int{},
			wantContext: contextNone,
		},
		{
			name:      "index unavailable",
			retriever: &fakeRetriever{fail: fmt.Errorf("search: %w", errors.New("dial tcp opensearch.internal:9200: connection refused"))},
			wantErrors: []map[string]any{{"message": "knowledge base search failed; the agent answered without it",
				"knowledge_bases": []string{"k1", "k2"}}},
			wantCites:   []int{},
			wantContext: contextFailed,
		},
		{
			name: "internal domain error",
			retriever: &fakeRetriever{fail: domain.Wrap(domain.KindInternal, errors.New("refused"),
				"index opensearch.internal unreachable")},
			wantErrors: []map[string]any{{"message": "knowledge base search failed; the agent answered without it",
				"knowledge_bases": []string{"k1", "k2"}}},
			wantCites:   []int{},
			wantContext: contextFailed,
		},
		{
			name:        "client error",
			retriever:   &fakeRetriever{fail: fmt.Errorf("retrieve: %w", domain.Errorf(domain.KindInvalid, "query: must be at most 8000 characters"))},
			wantErrors:  []map[string]any{{"message": "query: must be at most 8000 characters", "knowledge_bases": []string{"k1", "k2"}}},
			wantCites:   []int{},
			wantContext: contextFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text("ok"), nil }}
			res, rec := runKB(t, mustGraph(t, kbAgent("llm_agent", ""), nil), model, tt.retriever, userInput("returns?"))
			if res.StopReason != domain.StopEndTurn || len(res.Messages) != 1 {
				t.Fatalf("run = %+v, want one message and end_turn", res)
			}
			var gotErrors []map[string]any
			for _, ev := range rec.eventsOf(EventError) {
				gotErrors = append(gotErrors, ev.Data)
			}
			if diff := cmp.Diff(tt.wantErrors, gotErrors); diff != "" {
				t.Errorf("error events (-want +got):\n%s", diff)
			}
			if got := rec.eventsOf(EventRetrieval); len(got) != 1 {
				t.Errorf("%d retrieval events, want 1", len(got))
			}
			cites := res.Messages[0].Citations
			if cites == nil {
				t.Error("citations are nil after a search, want a slice")
			}
			if diff := cmp.Diff(tt.wantCites, citationIndexes(cites)); diff != "" {
				t.Errorf("cited passages (-want +got):\n%s", diff)
			}
			if sys := model.requests()[0].System; tt.wantContext != "" && !strings.HasSuffix(sys, "\n\n# Knowledge base context\n"+tt.wantContext) {
				t.Errorf("system prompt = %q, want it to end with the context %q", sys, tt.wantContext)
			}
		})
	}
}

func TestLLMWithoutRetrieval(t *testing.T) {
	image := []domain.Part{{Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: []byte{1}}}}
	tests := []struct {
		name      string
		cfg       string
		input     []domain.Part
		retriever Retriever // nil: the engine has none
		wantCalls int
	}{
		{"no knowledge bases", `{"name":"bot","system_prompt":"You answer."}`, userInput("returns?"), &fakeRetriever{}, 0},
		{"image only", kbAgent("llm_agent", ""), image, &fakeRetriever{corpus: shopCorpus()}, 0},
		{"blank text", kbAgent("llm_agent", ""), userInput("  \n "), &fakeRetriever{corpus: shopCorpus()}, 0},
		{"all disabled", `{"name":"bot","system_prompt":"You answer.","knowledge_bases":[
			{"name":"docs","knowledge_base_id":"k1","enabled":false}]}`, userInput("returns?"), &fakeRetriever{corpus: shopCorpus()}, 0},
		{"no retriever", kbAgent("llm_agent", ""), userInput("returns?"), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
				return text("ok [1]"), nil
			}}
			e := NewEngine(models(model), nil, Limits{})
			if tt.retriever != nil {
				e = e.WithRetriever(tt.retriever)
			}
			rec := &recorder{}
			res, err := e.Run(context.Background(), Run{Graph: mustGraph(t, tt.cfg, nil), Input: tt.input, Emit: rec.emit})
			if err != nil {
				t.Fatal(err)
			}
			if fr, ok := tt.retriever.(*fakeRetriever); ok && len(fr.searches()) != tt.wantCalls {
				t.Errorf("%d searches, want %d", len(fr.searches()), tt.wantCalls)
			}
			if res.Messages[0].Citations != nil {
				t.Errorf("citations = %#v, want nil", res.Messages[0].Citations)
			}
			if got := rec.eventsOf(EventRetrieval); len(got) != 0 {
				t.Errorf("retrieval events %+v, want none", got)
			}
			if sys := model.requests()[0].System; sys != "You answer." {
				t.Errorf("system prompt = %q, want it unchanged", sys)
			}
		})
	}
}

func TestLLMDisabledEntriesNotSearched(t *testing.T) {
	r := &fakeRetriever{corpus: shopCorpus()}
	model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text("ok"), nil }}
	res, _ := runKB(t, mustGraph(t, kbAgent("llm_agent", `,"enabled":false`), nil), model, r, userInput("returns?"))
	if diff := cmp.Diff([]searchCall{{Company: "acme", Query: "returns?", KBs: []string{"k1"}}}, r.searches()); diff != "" {
		t.Errorf("searches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2}, citationIndexes(res.Messages[0].Citations)); diff != "" {
		t.Errorf("cited passages (-want +got):\n%s", diff)
	}
}

// TestLLMRetrievalLocalModel checks the local model's contract: the system prompt it echoes
// shows the retrieved passages.
func TestLLMRetrievalLocalModel(t *testing.T) {
	res, _ := runKB(t, mustGraph(t, kbAgent("llm_agent", ""), nil), localmodel.Model{}, &fakeRetriever{corpus: shopCorpus()}, userInput("returns?"))
	got := res.Messages[0].Content
	for _, want := range []string{"System prompt: You answer.\n\n# Knowledge base context\n",
		"[1] manual.pdf (knowledge base \"docs\", chunk 3)\nReturns are accepted within 30 days."} {
		if !strings.Contains(got, want) {
			t.Errorf("reply %q does not contain %q", got, want)
		}
	}
}

// useTool is a response asking for knowledge_base_search with each input, ids u1, u2 …
func useTool(inputs ...map[string]any) *domain.ModelResponse {
	r := &domain.ModelResponse{StopReason: domain.StopToolUse}
	for i, in := range inputs {
		r.Parts = append(r.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
			ID: fmt.Sprintf("u%d", i+1), Name: SearchToolName, Input: in}})
	}
	return r
}

// toolResults returns the tool results of the last turn of a request.
func toolResults(req domain.ModelRequest) []domain.ToolResult {
	var out []domain.ToolResult
	for _, p := range req.Turns[len(req.Turns)-1].Parts {
		if p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

func TestReactSearchToolOffered(t *testing.T) {
	tests := []struct {
		name      string
		cfg       string
		retriever Retriever
		want      []string // tools offered
	}{
		{"enabled", kbAgent("react_agent", ""), &fakeRetriever{}, []string{"calc", SearchToolName}},
		{"one disabled", kbAgent("react_agent", `,"enabled":false`), &fakeRetriever{}, []string{"calc", SearchToolName}},
		{"all disabled", `{"name":"bot","agent_type":"react_agent","tools":["calc"],"knowledge_bases":[
			{"name":"docs","knowledge_base_id":"k1","enabled":false}]}`, &fakeRetriever{}, []string{"calc"}},
		{"no retriever", kbAgent("react_agent", ""), nil, []string{"calc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := strings.Replace(tt.cfg, `"knowledge_bases"`, `"tools":["calc"],"knowledge_bases"`, 1)
			if strings.Contains(tt.cfg, `"tools"`) {
				cfg = tt.cfg
			}
			model := script()
			e := NewEngine(models(model), testTools(), Limits{})
			if tt.retriever != nil {
				e = e.WithRetriever(tt.retriever)
			}
			if _, err := e.Run(context.Background(), Run{Graph: mustGraph(t, cfg, testTools()), Input: userInput("hi")}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range model.requests()[0].Tools {
				got = append(got, s.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools offered (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReactSearchToolSpec(t *testing.T) {
	model := script()
	res, _ := runKB(t, mustGraph(t, kbAgent("react_agent", `,"enabled":false`), nil), model, &fakeRetriever{}, userInput("hi"))
	if res.Messages[0].Citations != nil {
		t.Errorf("citations = %#v without a search, want nil", res.Messages[0].Citations)
	}
	spec := model.requests()[0].Tools[0]
	if !strings.Contains(spec.Description, `"docs": Product manuals`) || strings.Contains(spec.Description, "faq") {
		t.Errorf("description %q should name the enabled knowledge base docs and its description only", spec.Description)
	}
	props := spec.Schema["properties"].(map[string]any)
	if diff := cmp.Diff([]any{"docs"}, props["knowledge_base"].(map[string]any)["enum"]); diff != "" {
		t.Errorf("knowledge_base enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"query"}, spec.Schema["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if tk := props["top_k"].(map[string]any); tk["type"] != "integer" || tk["minimum"] != 1 || tk["maximum"] != domain.MaxRetrievalTopK {
		t.Errorf("top_k schema = %v", tk)
	}
}

func TestReactSearchLocalModel(t *testing.T) {
	r := &fakeRetriever{corpus: shopCorpus()}
	res, rec := runKB(t, mustGraph(t, kbAgent("react_agent", ""), nil), localmodel.Model{}, r, userInput(`knowledge_base_search {"query":"returns"}`))
	want := "Tool result: 3 passages from the knowledge bases for \"returns\". Cite a passage you use by its number in square brackets, like [1].\n\n" +
		"[1] manual.pdf (knowledge base \"docs\", chunk 3, score 0.910)\nReturns are accepted within 30 days.\n\n" +
		"[2] faq.md (knowledge base \"faq\", chunk 0, score 0.770)\nShipping takes 2 days.\n\n" +
		"[3] manual.pdf (knowledge base \"docs\", chunk 4, score 0.520)\nRefunds go to the original card.\n"
	if got := res.Messages[0].Content; !strings.Contains(got, want) {
		t.Errorf("reply %q does not contain the numbered result %q", got, want)
	}
	if diff := cmp.Diff([]searchCall{{Company: "acme", Query: "returns", KBs: []string{"k1", "k2"}}}, r.searches()); diff != "" {
		t.Errorf("searches (-want +got):\n%s", diff)
	}
	evs := rec.eventsOf(EventRetrieval)
	if len(evs) != 1 || evs[0].Data["source"] != "tool" || evs[0].Data["tool_use_id"] != "local-1" || evs[0].Data["hits"] != 3 {
		t.Errorf("retrieval events = %+v, want one from the tool use local-1 with 3 hits", evs)
	}
	// The local model's reply quotes the tool result with its numbers, so it cites them all.
	if diff := cmp.Diff([]int{1, 2, 3}, citationIndexes(res.Messages[0].Citations)); diff != "" {
		t.Errorf("cited passages (-want +got):\n%s", diff)
	}
}

func TestReactSearchNumbering(t *testing.T) {
	corpus := map[string][]domain.Hit{
		"k1": {hit("k1", "a.txt", 0, 0.9, "alpha"), hit("k1", "b.txt", 0, 0.8, "beta")},
		"k2": {hit("k2", "c.txt", 0, 0.95, "gamma")},
	}
	tests := []struct {
		name   string
		answer string
		want   []int
	}{
		{"all", "Done.", []int{1, 2, 3}},
		{"referenced", "Gamma [3].", []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRetriever{corpus: corpus}
			// The first search finds alpha and beta in docs; the second, of both knowledge
			// bases, finds gamma, alpha and beta: alpha and beta keep their numbers.
			model := script(useTool(map[string]any{"query": "a", "knowledge_base": "docs"}), useTool(map[string]any{"query": "b"}), text(tt.answer))
			res, _ := runKB(t, mustGraph(t, kbAgent("react_agent", ""), nil), model, r, userInput("go"))
			reqs := model.requests()
			first := toolResults(reqs[1])[0].Content
			second := toolResults(reqs[2])[0].Content
			if !strings.Contains(first, "[1] a.txt") || !strings.Contains(first, "[2] b.txt") {
				t.Errorf("first result %q, want alpha as [1] and beta as [2]", first)
			}
			for _, want := range []string{"3 passages", "[3] c.txt (knowledge base \"faq\", chunk 0, score 0.950)\ngamma\n\n[1] a.txt", "[2] b.txt"} {
				if !strings.Contains(second, want) {
					t.Errorf("second result %q does not contain %q", second, want)
				}
			}
			if diff := cmp.Diff(tt.want, citationIndexes(res.Messages[0].Citations)); diff != "" {
				t.Errorf("cited passages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReactSearchConcurrentCalls(t *testing.T) {
	// Four searches in one model turn run concurrently (a barrier holds each until all four
	// arrived) and still give eight distinct numbers.
	b := newBarrier(4)
	var mu sync.Mutex
	n := 0
	r := retrieverFunc(func(ctx context.Context, query string) (*domain.RetrievalResult, error) {
		if err := b.wait(ctx); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		n += 2
		return &domain.RetrievalResult{Hits: []domain.Hit{
			hit("k1", query+".txt", n-1, 0.9, "one"), hit("k1", query+".txt", n, 0.8, "two")}}, nil
	})
	var inputs []map[string]any
	for _, q := range []string{"a", "b", "c", "d"} {
		inputs = append(inputs, map[string]any{"query": q})
	}
	model := script(useTool(inputs...))
	res, _ := runKB(t, mustGraph(t, kbAgent("react_agent", ""), nil), model, r, userInput("go"))
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8}, citationIndexes(res.Messages[0].Citations)); diff != "" {
		t.Errorf("cited passages (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, tr := range toolResults(model.requests()[1]) {
		for i := 1; i <= 8; i++ {
			if strings.Contains(tr.Content, fmt.Sprintf("[%d] ", i)) {
				if seen[fmt.Sprint(i)] {
					t.Errorf("number [%d] given twice", i)
				}
				seen[fmt.Sprint(i)] = true
			}
		}
	}
	if len(seen) != 8 {
		t.Errorf("numbers given: %v, want 1..8", seen)
	}
}

// retrieverFunc is a Retriever from a function of the query.
type retrieverFunc func(ctx context.Context, query string) (*domain.RetrievalResult, error)

func (f retrieverFunc) SearchKnowledge(ctx context.Context, _, query string, _ []domain.KnowledgeBaseRef, _ int) (*domain.RetrievalResult, error) {
	return f(ctx, query)
}

func TestReactSearchArguments(t *testing.T) {
	tests := []struct {
		name      string
		input     map[string]any
		wantCall  *searchCall // nil: an error result and no search
		wantError string      // in the error result
	}{
		{"missing query", map[string]any{"top_k": 3}, nil, `query is required: a non-empty string, the text to search for in the knowledge bases "docs", "faq"`},
		{"blank query", map[string]any{"query": "  "}, nil, "query is required"},
		{"query not a string", map[string]any{"query": 5}, nil, "query is required"},
		{"top_k zero", map[string]any{"query": "x", "top_k": 0}, nil, "top_k must be an integer from 1 to 50"},
		{"top_k too large", map[string]any{"query": "x", "top_k": 51.0}, nil, "top_k must be an integer from 1 to 50"},
		{"top_k fraction", map[string]any{"query": "x", "top_k": 2.5}, nil, "top_k must be an integer"},
		{"top_k string", map[string]any{"query": "x", "top_k": "3"}, nil, "top_k must be an integer"},
		{"unknown knowledge base", map[string]any{"query": "x", "knowledge_base": "nope"}, nil,
			`knowledge_base "nope" is not one of this agent's knowledge bases; use one of "docs", "faq"`},
		{"knowledge base not a string", map[string]any{"query": "x", "knowledge_base": 1.0}, nil, "knowledge_base 1 is not one of"},
		{"all", map[string]any{"query": " x "}, &searchCall{Company: "acme", Query: "x", KBs: []string{"k1", "k2"}}, ""},
		{"top_k and name", map[string]any{"query": "x", "top_k": 3.0, "knowledge_base": "faq"}, &searchCall{Company: "acme", Query: "x", KBs: []string{"k2"}, TopK: 3}, ""},
		{"by id", map[string]any{"query": "x", "knowledge_base": "k1", "top_k": nil}, &searchCall{Company: "acme", Query: "x", KBs: []string{"k1"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRetriever{corpus: shopCorpus()}
			model := script(useTool(tt.input))
			res, rec := runKB(t, mustGraph(t, kbAgent("react_agent", ""), nil), model, r, userInput("go"))
			got := toolResults(model.requests()[1])[0]
			if tt.wantCall == nil {
				if !got.IsError || !strings.Contains(got.Content, tt.wantError) {
					t.Errorf("result %+v, want an error containing %q", got, tt.wantError)
				}
				if len(r.searches()) != 0 {
					t.Errorf("searched %+v despite bad arguments", r.searches())
				}
				if res.Messages[0].Citations != nil {
					t.Errorf("citations = %#v without a search, want nil", res.Messages[0].Citations)
				}
				return
			}
			if got.IsError {
				t.Errorf("result %+v is an error", got)
			}
			if diff := cmp.Diff([]searchCall{*tt.wantCall}, r.searches()); diff != "" {
				t.Errorf("searches (-want +got):\n%s", diff)
			}
			if ev := rec.eventsOf(EventRetrieval); len(ev) != 1 || cmp.Diff(tt.wantCall.KBs, ev[0].Data["knowledge_bases"]) != "" {
				t.Errorf("retrieval events %+v, want one naming %v", ev, tt.wantCall.KBs)
			}
		})
	}
}

func TestReactSearchFailures(t *testing.T) {
	tests := []struct {
		name       string
		retriever  *fakeRetriever
		wantResult string
		wantError  bool
		wantEvents []map[string]any // error events' data
	}{
		{"index unavailable", &fakeRetriever{fail: errors.New("dial tcp opensearch.internal:9200: refused")},
			"knowledge base search failed; the agent answered without it", true,
			[]map[string]any{{"message": "knowledge base search failed; the agent answered without it", "tool": SearchToolName, "tool_use_id": "u1"}}},
		{"nothing found", &fakeRetriever{corpus: map[string][]domain.Hit{"k1": nil, "k2": nil}},
			`No passages found in the knowledge bases for "returns".`, false, nil},
		{"deleted knowledge base", &fakeRetriever{corpus: map[string][]domain.Hit{"k1": nil}},
			`No passages found in the knowledge bases for "returns".`, false,
			[]map[string]any{{"message": "knowledge base k2 not found", "knowledge_base_id": "k2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := script(useTool(map[string]any{"query": "returns"}))
			res, rec := runKB(t, mustGraph(t, kbAgent("react_agent", ""), nil), model, tt.retriever, userInput("go"))
			got := toolResults(model.requests()[1])[0]
			if got.Content != tt.wantResult || got.IsError != tt.wantError {
				t.Errorf("result %+v, want %q (is_error %t)", got, tt.wantResult, tt.wantError)
			}
			var events []map[string]any
			for _, ev := range rec.eventsOf(EventError) {
				events = append(events, ev.Data)
			}
			if diff := cmp.Diff(tt.wantEvents, events); diff != "" {
				t.Errorf("error events (-want +got):\n%s", diff)
			}
			if c := res.Messages[0].Citations; c == nil || len(c) != 0 {
				t.Errorf("citations = %#v, want empty after a search", c)
			}
		})
	}
}

func TestGraphNodesRetrieveTheirOwn(t *testing.T) {
	r := &fakeRetriever{corpus: shopCorpus()}
	model := &fakeModel{reply: func(_ context.Context, req domain.ModelRequest, _ int) (*domain.ModelResponse, error) {
		return text(strings.SplitN(req.System, "\n", 2)[0] + " answered [1]"), nil
	}}
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"A","prompt_config":{"system_prompt":"A"},"knowledge_bases":[{"name":"docs","knowledge_base_id":"k1"}]},
		{"name":"B","prompt_config":{"system_prompt":"B"},"knowledge_bases":[{"name":"faq","knowledge_base_id":"k2"}]},
		{"name":"C","prompt_config":{"system_prompt":"C"}}],
		"edges":[{"from":"__start__","to":"A"},{"from":"__start__","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"C"},{"from":"C","to":"__end__"}]}`, nil)
	res, rec := runKB(t, g, model, r, userInput("returns?"))
	if n := len(r.searches()); n != 2 {
		t.Errorf("%d searches, want one per node with knowledge bases", n)
	}
	cites := map[string][]domain.Citation{}
	for _, m := range res.Messages {
		cites[m.Node] = m.Citations
	}
	want := map[string][]domain.Citation{
		"A": {{Index: 1, KnowledgeBaseID: "k1", FileID: "manual", FileName: "manual.pdf", ChunkIndex: 3, Score: 0.91, Text: "Returns are accepted within 30 days."}},
		"B": {{Index: 1, KnowledgeBaseID: "k2", FileID: "faq", FileName: "faq.md", ChunkIndex: 0, Score: 0.77, Text: "Shipping takes 2 days."}},
		"C": nil,
	}
	if diff := cmp.Diff(want, cites); diff != "" {
		t.Errorf("citations by node (-want +got):\n%s", diff)
	}
	nodes := map[string][]any{}
	for _, ev := range rec.eventsOf(EventRetrieval) {
		nodes[ev.Node] = append(nodes[ev.Node], ev.Data["knowledge_bases"])
	}
	if diff := cmp.Diff(map[string][]any{"A": {[]string{"k1"}}, "B": {[]string{"k2"}}}, nodes); diff != "" {
		t.Errorf("retrieval events by node (-want +got):\n%s", diff)
	}
}

// TestRetrievalNeedsKnowledgeRead: a run for a caller without knowledge:read searches nothing:
// one error event says why, an llm_agent's prompt says the knowledge bases were not searched, a
// react_agent's knowledge_base_search answers with the same reason, and no message has
// citations. knowledge:read, knowledge:write, admin and an unscoped key do search.
func TestRetrievalNeedsKnowledgeRead(t *testing.T) {
	deniedEvent := []map[string]any{{"message": RetrievalDenied, "knowledge_bases": []string{"k1", "k2"}}}
	for _, agentType := range []string{"llm_agent", "react_agent"} {
		for _, tt := range []struct {
			scopes []string
			denied bool
		}{
			{[]string{domain.ScopeSessionsWrite}, true},
			{[]string{domain.ScopeSessionsWrite, domain.ScopeAgentsRead}, true},
			{[]string{domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead}, false},
			{[]string{domain.ScopeSessionsWrite, domain.ScopeKnowledgeWrite}, false},
			{[]string{domain.ScopeAdmin}, false},
			{nil, false},
		} {
			t.Run(fmt.Sprint(agentType, tt.scopes), func(t *testing.T) {
				r := &fakeRetriever{corpus: shopCorpus()}
				model := script(text("Within 30 days."))
				if agentType == "react_agent" {
					model = script(useTool(map[string]any{"query": "returns"}), text("Within 30 days."))
				}
				rec := &recorder{}
				res, err := NewEngine(models(model), nil, Limits{}).WithRetriever(r).Run(context.Background(), Run{
					Graph: mustGraph(t, kbAgent(agentType, ""), nil), Input: userInput("Can I return things?"),
					Principal: domain.Principal{Company: "acme", Scopes: tt.scopes}, Emit: rec.emit, NewID: seqIDs(),
				})
				if err != nil {
					t.Fatal(err)
				}
				var errorEvents []map[string]any
				for _, ev := range rec.eventsOf(EventError) {
					errorEvents = append(errorEvents, ev.Data)
				}
				reqs := model.requests()
				if !tt.denied {
					if len(r.searches()) != 1 || errorEvents != nil || res.Messages[0].Citations == nil {
						t.Errorf("searches %v, error events %v, citations %v: want one search, no error, citations",
							r.searches(), errorEvents, res.Messages[0].Citations)
					}
					return
				}
				if n := len(r.searches()); n != 0 {
					t.Errorf("%d searches for a caller without knowledge:read", n)
				}
				want := deniedEvent
				if agentType == "react_agent" { // and the failed tool call's, as for any tool
					want = append(want, map[string]any{"message": RetrievalDenied, "tool": SearchToolName, "tool_use_id": "u1"})
				}
				if diff := cmp.Diff(want, errorEvents); diff != "" {
					t.Errorf("error events (-want +got):\n%s", diff)
				}
				if len(rec.eventsOf(EventRetrieval)) != 0 {
					t.Errorf("retrieval events %v", rec.eventsOf(EventRetrieval))
				}
				if c := res.Messages[0].Citations; c != nil {
					t.Errorf("citations %#v, want none", c)
				}
				if agentType == "llm_agent" {
					if want := "You answer.\n\n# Knowledge base context\n" + contextDenied; reqs[0].System != want {
						t.Errorf("system prompt %q, want %q", reqs[0].System, want)
					}
					return
				}
				got := toolResults(reqs[1])[0]
				if got.Content != RetrievalDenied || !got.IsError {
					t.Errorf("tool result %+v, want the error %q", got, RetrievalDenied)
				}
			})
		}
	}
}

// TestRetrievalEventCountsEmbeddingTokens: the tokens the retriever reports for embedding the
// query are in the retrieval event (the execute counts them into the company's usage), and a
// search that embedded nothing carries none.
func TestRetrievalEventCountsEmbeddingTokens(t *testing.T) {
	for _, tokens := range []int{7, 0} {
		r := &fakeRetriever{corpus: shopCorpus(), tokens: tokens}
		model := &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) {
			return text("Within 30 days."), nil
		}}
		_, rec := runKB(t, mustGraph(t, kbAgent("llm_agent", ""), nil), model, r, userInput("Can I return things?"))
		got, ok := rec.eventsOf(EventRetrieval)[0].Data["embedding_tokens"]
		if tokens > 0 && got != tokens || tokens == 0 && ok {
			t.Errorf("reported %d: the event's embedding_tokens is %v (present %v)", tokens, got, ok)
		}
	}
}
