package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// fakeMemory keeps blocks and records by scope, as the memory feature does, and records every
// call; a search returns the scope's records in the order stored, scored 0.9, 0.8, … (the
// query's meaning is not the engine's concern). fail, when set, fails every call.
type fakeMemory struct {
	mu      sync.Mutex
	blocks  map[domain.MemoryScope][]*domain.MemoryBlock
	records map[domain.MemoryScope][]domain.MemoryRecord
	calls   []string // "Blocks <user>/<agent>", "Search <user>/<agent> <query> <topK>", …
	fail    error
	n       int
}

func newFakeMemory() *fakeMemory {
	return &fakeMemory{blocks: map[domain.MemoryScope][]*domain.MemoryBlock{}, records: map[domain.MemoryScope][]domain.MemoryRecord{}}
}

func scopeName(sc domain.MemoryScope) string { return sc.Company + "/" + sc.UserID + "/" + sc.AgentID }

func (m *fakeMemory) record(call string) error {
	m.calls = append(m.calls, call)
	return m.fail
}

func (m *fakeMemory) Blocks(_ context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("Blocks " + scopeName(sc)); err != nil {
		return nil, err
	}
	var out []*domain.MemoryBlock
	for _, b := range m.blocks[sc] {
		c := *b
		out = append(out, &c)
	}
	return out, nil
}

func (m *fakeMemory) Search(_ context.Context, sc domain.MemoryScope, query string, topK int) ([]domain.MemoryHit, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record(fmt.Sprintf("Search %s %q %d", scopeName(sc), query, topK)); err != nil {
		return nil, 0, err
	}
	var out []domain.MemoryHit
	for i, r := range m.records[sc] {
		out = append(out, domain.MemoryHit{Record: r, Score: 0.9 - float64(i)/10})
	}
	return out[:min(topK, len(out))], 7, nil
}

func (m *fakeMemory) Save(_ context.Context, sc domain.MemoryScope, text string, src domain.MemorySource) (*domain.MemoryRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("Save " + scopeName(sc)); err != nil {
		return nil, err
	}
	m.n++
	r := domain.MemoryRecord{ID: fmt.Sprintf("r%d", m.n), Company: sc.Company, UserID: sc.UserID, AgentID: sc.AgentID, Text: text, Source: src}
	m.records[sc] = append(m.records[sc], r)
	return &r, nil
}

func (m *fakeMemory) EditBlock(_ context.Context, sc domain.MemoryScope, spec domain.MemoryBlockSpec, src domain.MemorySource,
	edit func(old string) (string, error)) (*domain.MemoryBlock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("EditBlock " + scopeName(sc) + " " + spec.Label); err != nil {
		return nil, err
	}
	var b *domain.MemoryBlock
	for _, x := range m.blocks[sc] {
		if x.Label == spec.Label {
			b = x
		}
	}
	old := ""
	if b != nil {
		old = b.Value
	}
	v, err := edit(old)
	if err != nil {
		return nil, err
	}
	limit := cmp.Or(spec.Limit, domain.DefaultBlockLimit)
	if b != nil {
		limit = b.Limit
	}
	if n := utf8.RuneCountInString(v); n > limit {
		return nil, &domain.Error{Kind: domain.KindInvalid, Message: fmt.Sprintf("memory block %s would hold %d characters, over its limit of %d: condense it", spec.Label, n, limit)}
	}
	if b == nil {
		m.n++
		b = &domain.MemoryBlock{ID: fmt.Sprintf("b%d", m.n), Company: sc.Company, UserID: sc.UserID, AgentID: sc.AgentID,
			Label: spec.Label, Description: spec.Description, Limit: limit}
		m.blocks[sc] = append(m.blocks[sc], b)
	}
	b.Value, b.Source = v, src
	c := *b
	return &c, nil
}

func (m *fakeMemory) callList() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

var (
	alicesScope = domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "agent-1"}
	memoryAll   = domain.Principal{Company: "acme", Scopes: []string{domain.ScopeSessionsWrite, domain.ScopeMemoryWrite}}
)

// memRun runs g for scope with memory cfg (the graph's own when nil) and records the events.
func memRun(t *testing.T, g *Graph, model domain.Model, m Memory, p domain.Principal, scope domain.MemoryScope, input string) (*Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	res, err := NewEngine(models(model), nil, Limits{MaxIterations: 20}).WithMemory(m).Run(context.Background(), Run{
		Graph: g, Principal: p, Input: userInput(input), Emit: rec.emit, NewID: seqIDs(),
		Memory: &MemoryRun{Scope: scope, Config: g.Memory, SessionID: "s1", ExecutionID: "x1"},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, rec
}

func replyText(s string) *fakeModel {
	return &fakeModel{reply: func(context.Context, domain.ModelRequest, int) (*domain.ModelResponse, error) { return text(s), nil }}
}

const memoryAgent = `{"name":"bot","system_prompt":"You help.","memory":{"blocks":[
	{"label":"human","description":"What you know of the user","limit":100},{"label":"prefs","limit":50}],"recall":{"top_k":2}}}`

// TestMemoryPrompt: an llm_agent's prompt ends with its memory: the declared blocks in order
// (empty ones too), then the other stored ones, then the recalled facts, top_k of them; one
// Blocks and one Search of the run's scope, told of in one memory_recall event.
func TestMemoryPrompt(t *testing.T) {
	m := newFakeMemory()
	m.blocks[alicesScope] = []*domain.MemoryBlock{
		{ID: "b1", Label: "zeta", Value: "Stored, not declared.", Limit: 300},
		{ID: "b2", Label: "human", Description: "What you know of the user", Value: "Alice, a baker in Lyon.", Limit: 100}}
	m.records[alicesScope] = []domain.MemoryRecord{{ID: "r1", Text: "Alice is allergic\nto nuts."}, {ID: "r2", Text: "Alice likes rye."}, {ID: "r3", Text: "Third."}}
	model := replyText("Hello Alice.")
	g := mustGraph(t, memoryAgent, nil)
	_, rec := memRun(t, g, model, m, memoryAll, alicesScope, " What should I bake? ")

	want := "You help.\n\n# Memory\n" + memoryIntro + "\n\n## Blocks" +
		"\n\n### human (23/100 characters)\nWhat you know of the user\nAlice, a baker in Lyon." +
		"\n\n### prefs (0/50 characters)\n(empty)" +
		"\n\n### zeta (21/300 characters)\nStored, not declared." +
		"\n\n## Recalled facts\n- Alice is allergic to nuts.\n- Alice likes rye."
	reqs := model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if diff := gocmp.Diff(want, reqs[0].System); diff != "" {
		t.Errorf("system prompt (-want +got):\n%s", diff)
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("an llm_agent got tools %v", reqs[0].Tools)
	}
	if diff := gocmp.Diff([]string{"Blocks acme/alice/agent-1", `Search acme/alice/agent-1 "What should I bake?" 2`}, m.callList()); diff != "" {
		t.Errorf("memory calls (-want +got):\n%s", diff)
	}
	ev := rec.eventsOf(EventMemoryRecall)
	if len(ev) != 1 {
		t.Fatalf("%d memory_recall events", len(ev))
	}
	delete(ev[0].Data, "duration_ms")
	wantData := map[string]any{"agent_id": "agent-1", "blocks": []string{"zeta", "human"}, "query": "What should I bake?", "source": "prompt",
		"embedding_tokens": 7, "records": []any{map[string]any{"id": "r1", "score": 0.9, "text": "Alice is allergic\nto nuts."},
			map[string]any{"id": "r2", "score": 0.8, "text": "Alice likes rye."}}}
	if diff := gocmp.Diff(wantData, ev[0].Data); diff != "" {
		t.Errorf("memory_recall (-want +got):\n%s", diff)
	}
	if types := rec.types(); !slices.Equal(types, []string{EventNodeStarted, EventMemoryRecall, EventModelCall, EventNodeFinished}) {
		t.Errorf("events %v", types)
	}
}

// TestMemoryRecallOncePerExecution: the nodes of a graph, two of them in one step, share one
// recall: one Blocks and one Search, one event, the same memory in every prompt. A shared
// memory's event names no agent.
func TestMemoryRecallOncePerExecution(t *testing.T) {
	m := newFakeMemory()
	shared := domain.MemoryScope{Company: "acme", UserID: "alice"}
	m.blocks[shared] = []*domain.MemoryBlock{{ID: "b1", Label: "human", Value: "Alice.", Limit: 100}}
	m.records[shared] = []domain.MemoryRecord{{ID: "r1", Text: "Likes rye."}}
	model := replyText("ok")
	g := mustGraph(t, `{"name":"g","memory":{"shared":true},"agents":[{"name":"a","system_prompt":"A"},{"name":"b","system_prompt":"B"},{"name":"c","system_prompt":"C"}],
		"edges":[{"from":"__start__","to":"a"},{"from":"__start__","to":"b"},{"from":"a","to":"c"},{"from":"b","to":"c"},{"from":"c","to":"__end__"}]}`, nil)
	_, rec := memRun(t, g, model, m, memoryAll, shared, "hi")
	if got := m.callList(); len(got) != 2 {
		t.Errorf("memory calls %v, want one Blocks and one Search", got)
	}
	reqs := model.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for _, r := range reqs {
		if !strings.Contains(r.System, "### human (6/100 characters)\nAlice.") || !strings.HasSuffix(r.System, "## Recalled facts\n- Likes rye.") {
			t.Errorf("prompt without the memory: %q", r.System)
		}
	}
	ev := rec.eventsOf(EventMemoryRecall)
	if len(ev) != 1 || ev[0].Data["agent_id"] != nil {
		t.Errorf("memory_recall events %+v, want one naming no agent", ev)
	}
}

// reactScript is a react model that makes the given calls (name, JSON-ish input) one turn
// each, then answers "done"; it keeps each turn's tool results.
func reactScript(calls ...domain.ToolUse) *fakeModel {
	return &fakeModel{reply: func(_ context.Context, _ domain.ModelRequest, n int) (*domain.ModelResponse, error) {
		if n > len(calls) {
			return text("done"), nil
		}
		u := calls[n-1]
		u.ID = fmt.Sprintf("t%d", n)
		return &domain.ModelResponse{StopReason: domain.StopToolUse, Parts: []domain.Part{{Type: domain.PartToolUse, ToolUse: &u}}}, nil
	}}
}

func use(name string, input map[string]any) domain.ToolUse {
	return domain.ToolUse{Name: name, Input: input}
}

// memToolResults are the results the model was given, by tool use id, "ERR " before errors.
func memToolResults(reqs []domain.ModelRequest) []string {
	var out []string
	last := reqs[len(reqs)-1]
	for _, turn := range last.Turns {
		for _, p := range turn.Parts {
			if p.Type == domain.PartToolResult {
				s := p.ToolResult.Content
				if p.ToolResult.IsError {
					s = "ERR " + s
				}
				out = append(out, p.ToolResult.ToolUseID+": "+s)
			}
		}
	}
	return out
}

const memoryReact = `{"name":"bot","agent_type":"react_agent","system_prompt":"You help.","memory":{"blocks":[{"label":"human","limit":40}]}}`

// TestMemoryTools: a react agent gets the four memory tools; they write the run's scope only,
// with the execution as their source, each write told of in a memory_write event; bad labels,
// old_text that does not occur and values over a block's limit are error results.
func TestMemoryTools(t *testing.T) {
	m := newFakeMemory()
	m.blocks[alicesScope] = []*domain.MemoryBlock{{ID: "b0", Label: "notes", Value: "old notes", Limit: 500}}
	model := reactScript(
		use("memory_append", map[string]any{"label": "human", "text": "Name: Alice."}),
		use("memory_append", map[string]any{"label": "human", "text": "Lives in Lyon."}),
		use("memory_replace", map[string]any{"label": "human", "old_text": "Lyon", "new_text": "Paris"}),
		use("memory_replace", map[string]any{"label": "notes", "old_text": "old", "new_text": "new"}),
		use("memory_replace", map[string]any{"label": "human", "old_text": "Berlin", "new_text": "x"}),
		use("memory_append", map[string]any{"label": "human", "text": strings.Repeat("x", 30)}),
		use("memory_append", map[string]any{"label": "nope", "text": "x"}),
		use("memory_save", map[string]any{"text": " Alice bakes rye. "}),
		use("memory_save", map[string]any{"text": "  "}),
		use("memory_search", map[string]any{"query": "bread", "top_k": 3}),
		use("memory_search", map[string]any{"query": "bread", "top_k": 99}),
	)
	g := mustGraph(t, memoryReact, nil)
	_, rec := memRun(t, g, model, m, memoryAll, alicesScope, "hi")
	reqs := model.requests()
	var names []string
	for _, s := range reqs[0].Tools {
		names = append(names, s.Name)
	}
	if diff := gocmp.Diff(domain.MemoryTools, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(reqs[0].System, memoryToolsIntro) {
		t.Errorf("a react agent's prompt does not tell of its tools: %q", reqs[0].System)
	}
	want := []string{
		"t1: The block \"human\" now holds 12 of its 40 characters:\nName: Alice.",
		"t2: The block \"human\" now holds 27 of its 40 characters:\nName: Alice.\nLives in Lyon.",
		"t3: The block \"human\" now holds 28 of its 40 characters:\nName: Alice.\nLives in Paris.",
		"t4: The block \"notes\" now holds 9 of its 500 characters:\nnew notes",
		`t5: ERR memory_replace: old_text does not occur in the block "human"; quote the block's text exactly`,
		"t6: ERR memory block human would hold 59 characters, over its limit of 40: condense it",
		`t7: ERR memory_append: there is no memory block "nope"; the blocks are "human", "notes"`,
		"t8: Saved.",
		"t9: ERR memory_save: text is required: a non-empty string",
		"t10: 1 saved facts for \"bread\", best first:\n- (score 0.900) Alice bakes rye.",
		"t11: ERR memory_search: top_k must be an integer from 1 to 20",
	}
	if diff := gocmp.Diff(want, memToolResults(reqs)); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	var writes []map[string]any
	for _, ev := range rec.eventsOf(EventMemoryWrite) {
		writes = append(writes, ev.Data)
	}
	wantWrites := []map[string]any{
		{"op": "append", "block_id": "b1", "label": "human", "tool_use_id": "t1"},
		{"op": "append", "block_id": "b1", "label": "human", "tool_use_id": "t2"},
		{"op": "replace", "block_id": "b1", "label": "human", "tool_use_id": "t3"},
		{"op": "replace", "block_id": "b0", "label": "notes", "tool_use_id": "t4"},
		{"op": "save", "record_id": "r2", "tool_use_id": "t8"},
	}
	if diff := gocmp.Diff(wantWrites, writes); diff != "" {
		t.Errorf("memory_write events (-want +got):\n%s", diff)
	}
	if got := m.records[alicesScope]; len(got) != 1 || got[0].Text != "Alice bakes rye." ||
		got[0].Source != (domain.MemorySource{Type: domain.MemorySourceTool, ExecutionID: "x1", SessionID: "s1"}) {
		t.Errorf("records %+v", got)
	}
	if len(m.blocks) != 1 || len(m.records) != 1 {
		t.Errorf("memory written outside the run's scope: %v %v", m.blocks, m.records)
	}
	if ev := rec.eventsOf(EventMemoryRecall); len(ev) != 2 || ev[1].Data["source"] != "tool" || ev[1].Data["tool_use_id"] != "t10" {
		t.Errorf("memory_recall events %+v, want the prompt's and memory_search's", ev)
	}
}

// TestMemoryDenied: a caller without memory:write gets error results from the write tools and
// writes nothing; one without memory:read recalls nothing (one error event) and cannot search.
func TestMemoryDenied(t *testing.T) {
	m := newFakeMemory()
	m.records[alicesScope] = []domain.MemoryRecord{{ID: "r1", Text: "secret"}}
	calls := []domain.ToolUse{use("memory_append", map[string]any{"label": "human", "text": "x"}),
		use("memory_save", map[string]any{"text": "x"}), use("memory_search", map[string]any{"query": "x"})}
	g := mustGraph(t, memoryReact, nil)

	model := reactScript(calls...)
	reader := domain.Principal{Company: "acme", Scopes: []string{domain.ScopeSessionsWrite, domain.ScopeMemoryRead}}
	memRun(t, g, model, m, reader, alicesScope, "hi")
	got := memToolResults(model.requests())
	if len(got) != 3 || got[0] != "t1: ERR "+MemoryWriteDenied || got[1] != "t2: ERR "+MemoryWriteDenied || !strings.Contains(got[2], "secret") {
		t.Errorf("results without memory:write: %v", got)
	}
	if strings.Contains(model.requests()[0].System, memoryToolsIntro) {
		t.Error("the prompt invites writes the caller may not make")
	}

	m2 := newFakeMemory()
	m2.records[alicesScope] = m.records[alicesScope]
	model = reactScript(calls...)
	_, rec := memRun(t, g, model, m2, domain.Principal{Company: "acme", Scopes: []string{domain.ScopeSessionsWrite}}, alicesScope, "hi")
	got = memToolResults(model.requests())
	if len(got) != 3 || got[2] != "t3: ERR "+MemoryReadDenied {
		t.Errorf("results without memory:read: %v", got)
	}
	if calls := m2.callList(); len(calls) != 0 {
		t.Errorf("memory read without memory:read: %v", calls)
	}
	if errs := rec.eventsOf(EventError); len(errs) == 0 || errs[0].Data["message"] != MemoryReadDenied || errs[0].Data["tool"] != nil {
		t.Errorf("error events %+v, want the denial first", errs)
	}
	if s := model.requests()[0].System; !strings.Contains(s, memoryUnread) || strings.Contains(s, "secret") {
		t.Errorf("prompt without memory:read: %q", s)
	}
}

// TestMemoryFailureNeverFailsTheRun: a failing memory is an error event and a prompt that says
// so; a failing write is an error result that names no internals.
func TestMemoryFailureNeverFailsTheRun(t *testing.T) {
	m := newFakeMemory()
	m.fail = errors.New("dial tcp 10.0.0.7:9200: connection refused")
	model := reactScript(use("memory_save", map[string]any{"text": "x"}), use("memory_append", map[string]any{"label": "human", "text": "x"}))
	res, rec := memRun(t, mustGraph(t, memoryReact, nil), model, m, memoryAll, alicesScope, "hi")
	if len(res.Messages) != 1 || res.Messages[0].Content != "done" {
		t.Errorf("messages %+v", res.Messages)
	}
	if errs := rec.eventsOf(EventError); len(errs) < 1 || errs[0].Data["message"] != MemoryRecallFailed {
		t.Errorf("error events %+v", errs)
	}
	if len(rec.eventsOf(EventMemoryRecall)) != 0 {
		t.Error("a failed recall told as a recall")
	}
	if s := model.requests()[0].System; !strings.HasSuffix(s, memoryUnread) {
		t.Errorf("prompt %q", s)
	}
	want := []string{"t1: ERR " + memoryWriteFailed, "t2: ERR " + memoryWriteFailed}
	if diff := gocmp.Diff(want, memToolResults(model.requests())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// TestMemoryLimits: recall.top_k bounds the facts (0: no search at all), a message without
// text searches nothing, and the memory section stays within MemoryBudget however full the
// blocks are.
func TestMemoryLimits(t *testing.T) {
	m := newFakeMemory()
	for i := range domain.MaxMemoryBlocks {
		m.blocks[alicesScope] = append(m.blocks[alicesScope], &domain.MemoryBlock{ID: fmt.Sprint(i), Label: fmt.Sprintf("b%02d", i),
			Value: strings.Repeat("v", domain.MaxBlockLimit), Limit: domain.MaxBlockLimit})
	}
	for i := range 30 {
		m.records[alicesScope] = append(m.records[alicesScope], domain.MemoryRecord{ID: fmt.Sprint(i), Text: strings.Repeat("r", 100)})
	}
	model := replyText("ok")
	memRun(t, mustGraph(t, `{"name":"bot","memory":{"recall":{"top_k":0}}}`, nil), model, m, memoryAll, alicesScope, "hi")
	if calls := m.callList(); len(calls) != 1 || !strings.HasPrefix(calls[0], "Blocks") {
		t.Errorf("top_k 0: calls %v", calls)
	}
	sys := model.requests()[0].System
	if budget := MemoryBudget("", ""); EstimateTokens(sys) > budget || EstimateTokens(sys) < budget*9/10 {
		t.Errorf("section of %d tokens, budget %d", EstimateTokens(sys), budget)
	}

	m.blocks = map[domain.MemoryScope][]*domain.MemoryBlock{}
	m.calls = nil
	model = replyText("ok")
	memRun(t, mustGraph(t, `{"name":"bot","memory":{"recall":{"top_k":20}}}`, nil), model, m, memoryAll, alicesScope, "hi")
	if n := strings.Count(model.requests()[0].System, "\n- "); n != 20 {
		t.Errorf("%d facts recalled, want top_k 20", n)
	}

	m.calls = nil
	rec := &recorder{}
	g := mustGraph(t, `{"name":"bot","memory":{}}`, nil)
	img := []domain.Part{{Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: []byte{1}}}}
	if _, err := NewEngine(models(replyText("ok")), nil, Limits{}).WithMemory(m).Run(context.Background(), Run{Graph: g, Principal: memoryAll,
		Input: img, Emit: rec.emit, Memory: &MemoryRun{Scope: alicesScope, Config: g.Memory}}); err != nil {
		t.Fatal(err)
	}
	if calls := m.callList(); len(calls) != 1 {
		t.Errorf("a message without text: calls %v, want Blocks only", calls)
	}
}

// TestNoMemory: without a MemoryRun, with memory off or without a user, nothing is read, no tool
// is given and the prompt is the configuration's.
func TestNoMemory(t *testing.T) {
	m := newFakeMemory()
	on := mustGraph(t, memoryReact, nil)
	off := mustGraph(t, `{"name":"bot","agent_type":"react_agent","system_prompt":"You help.","memory":{"enabled":false}}`, nil)
	for name, run := range map[string]*MemoryRun{
		"no run":  nil,
		"off":     {Scope: alicesScope, Config: off.Memory},
		"no user": {Scope: domain.MemoryScope{Company: "acme", AgentID: "agent-1"}, Config: on.Memory},
	} {
		model := replyText("ok")
		if _, err := NewEngine(models(model), nil, Limits{}).WithMemory(m).Run(context.Background(), Run{Graph: on, Principal: memoryAll,
			Input: userInput("hi"), Memory: run}); err != nil {
			t.Fatal(err)
		}
		if r := model.requests()[0]; r.System != "You help." || len(r.Tools) != 0 {
			t.Errorf("%s: system %q, tools %v", name, r.System, r.Tools)
		}
	}
	if calls := m.callList(); len(calls) != 0 {
		t.Errorf("memory read: %v", calls)
	}
}

// TestMemoryNeverCrossesUsers: a run for bob reads and writes bob's scope only, however alice's
// memory is filled: nothing of hers reaches his prompt, his tools' results or his events.
func TestMemoryNeverCrossesUsers(t *testing.T) {
	m := newFakeMemory()
	m.blocks[alicesScope] = []*domain.MemoryBlock{{ID: "b1", Label: "human", Value: "ALICE-SECRET", Limit: 40}}
	m.records[alicesScope] = []domain.MemoryRecord{{ID: "r1", Text: "ALICE-FACT"}}
	shared := domain.MemoryScope{Company: "acme", UserID: "alice"}
	m.records[shared] = []domain.MemoryRecord{{ID: "r2", Text: "ALICE-SHARED"}}
	bob := domain.MemoryScope{Company: "acme", UserID: "bob", AgentID: "agent-1"}
	model := reactScript(use("memory_search", map[string]any{"query": "anything"}),
		use("memory_replace", map[string]any{"label": "human", "old_text": "ALICE", "new_text": "x"}),
		use("memory_append", map[string]any{"label": "human", "text": "Bob."}))
	_, rec := memRun(t, mustGraph(t, memoryReact, nil), model, m, memoryAll, bob, "hi")
	seen := fmt.Sprint(model.requests(), rec.events)
	if strings.Contains(seen, "ALICE-") {
		t.Errorf("alice's memory reached bob's run: %s", seen)
	}
	if m.blocks[alicesScope][0].Value != "ALICE-SECRET" || len(m.blocks[bob]) != 1 || m.blocks[bob][0].Value != "Bob." {
		t.Errorf("blocks after bob's run: alice %+v, bob %+v", m.blocks[alicesScope], m.blocks[bob])
	}
	for _, c := range m.callList() {
		if !strings.Contains(c, " acme/bob/agent-1") {
			t.Errorf("a call outside bob's scope: %s", c)
		}
	}
}
