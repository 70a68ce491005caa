package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// waitLimit bounds every wait in the tests so that a broken engine fails instead of hanging.
const waitLimit = 5 * time.Second

// replyFunc answers one model request; call counts the calls made to the same fake model.
type replyFunc func(ctx context.Context, req domain.ModelRequest, call int) (*domain.ModelResponse, error)

// fakeModel answers with a script and records every request it receives.
type fakeModel struct {
	mu    sync.Mutex
	reply replyFunc
	reqs  []domain.ModelRequest
}

func (m *fakeModel) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	resp, err := m.reply(ctx, req, n)
	if err == nil && req.OnText != nil {
		if t := resp.Text(); t != "" {
			req.OnText(t)
		}
	}
	return resp, err
}

func (m *fakeModel) requests() []domain.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// models offers one fake model as the default provider.
func models(m domain.Model) ModelSet {
	return ModelSet{Default: "fake", ByName: map[string]domain.Model{"fake": m}}
}

// text is a final model response.
func text(s string) *domain.ModelResponse {
	return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: s}}, StopReason: domain.StopEndTurn,
		Usage: domain.Usage{InputTokens: 10, OutputTokens: 2}}
}

// toolCalls is a response asking for tools, given as id, name pairs, after some text.
func toolCalls(say string, idNames ...string) *domain.ModelResponse {
	r := &domain.ModelResponse{StopReason: domain.StopToolUse, Usage: domain.Usage{InputTokens: 5, OutputTokens: 1}}
	if say != "" {
		r.Parts = append(r.Parts, domain.Part{Type: domain.PartText, Text: say})
	}
	for i := 0; i < len(idNames); i += 2 {
		r.Parts = append(r.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
			ID: idNames[i], Name: idNames[i+1], Input: map[string]any{"q": idNames[i]}}})
	}
	return r
}

// fakeTool runs a function as a tool.
type fakeTool struct {
	name string
	call func(ctx context.Context, input map[string]any) (string, error)
}

func (t fakeTool) Spec() domain.ToolSpec {
	return domain.ToolSpec{Name: t.name, Description: "fake " + t.name, Schema: map[string]any{"type": "object"}}
}

func (t fakeTool) Call(ctx context.Context, input map[string]any) (string, error) {
	return t.call(ctx, input)
}

// toolSet is an in-memory tool registry.
type toolSet map[string]domain.Tool

func (s toolSet) Has(name string) bool { _, ok := s[name]; return ok }

// Bind binds the node's tools in its order; a nil set binds none. It records the tenant.
func (s toolSet) Bind(_ context.Context, p domain.Principal, n *Node) ([]domain.Tool, error) {
	var out []domain.Tool
	for _, name := range n.Tools {
		if t, ok := s[name]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckSchema accepts the schemas a fake needs: objects.
func (s toolSet) CheckSchema(schema map[string]any) error {
	if t, ok := schema["type"]; ok && t != "object" {
		return errors.New("not an object schema")
	}
	return nil
}

func (s toolSet) Names() []string {
	var names []string
	for n := range s {
		names = append(names, n)
	}
	return names
}

func constTool(name, out string) fakeTool {
	return fakeTool{name: name, call: func(context.Context, map[string]any) (string, error) { return out, nil }}
}

// barrier lets callers through only once n of them have arrived, or fails after waitLimit.
type barrier struct {
	mu       sync.Mutex
	arrived  int
	inFlight int
	max      int
	n        int
	open     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.arrived++
	b.inFlight++
	b.max = max(b.max, b.inFlight)
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.inFlight--; b.mu.Unlock() }()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(waitLimit):
		return fmt.Errorf("barrier: only %d of %d callers arrived", b.arrived, b.n)
	}
}

// mustConfig decodes a JSON configuration as the API does, with json.Number numbers.
func mustConfig(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("config %s: %v", s, err)
	}
	return m
}

// mustGraph parses a configuration that the test expects to be valid.
func mustGraph(t testing.TB, cfg string, tools toolSet) *Graph {
	t.Helper()
	var catalog domain.ToolCatalog
	if tools != nil {
		catalog = tools
	}
	g, errs := domain.ParseConfig(mustConfig(t, cfg), catalog, "")
	if len(errs) > 0 {
		t.Fatalf("ParseConfig: %v", errs)
	}
	return g
}

// userInput is a one-text-part user message.
func userInput(s string) []domain.Part { return []domain.Part{{Type: domain.PartText, Text: s}} }

// seqIDs returns an id generator counting m1, m2, …
func seqIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("m%d", n) }
}

// recorder collects events; the engine promises to call it one event at a time.
type recorder struct{ events []Event }

func (r *recorder) emit(ev Event) { r.events = append(r.events, ev) }

func (r *recorder) types() []string {
	var out []string
	for _, ev := range r.events {
		out = append(out, ev.Type)
	}
	return out
}

// turnTexts renders turns compactly as "role: text" with tool parts abbreviated, for diffs.
func turnTexts(turns []domain.Turn) []string {
	var out []string
	for _, t := range turns {
		var parts []string
		for _, p := range t.Parts {
			switch p.Type {
			case domain.PartText:
				parts = append(parts, p.Text)
			case domain.PartToolUse:
				parts = append(parts, "use "+p.ToolUse.ID+" "+p.ToolUse.Name)
			case domain.PartToolResult:
				r := p.ToolResult
				parts = append(parts, fmt.Sprintf("result %s error=%t %s", r.ToolUseID, r.IsError, r.Content))
			default:
				parts = append(parts, p.Type)
			}
		}
		out = append(out, t.Role+": "+strings.Join(parts, " | "))
	}
	return out
}

// searchCall is one SearchKnowledge call a fakeRetriever received.
type searchCall struct {
	Company string
	Query   string
	KBs     []string // the ids of the entries searched, in order
	TopK    int
}

// fakeRetriever answers searches from an in-memory corpus of hits by knowledge base id and
// records every call. A knowledge base that is not in the corpus is a problem; fail, when set,
// answers every search instead.
type fakeRetriever struct {
	mu     sync.Mutex
	corpus map[string][]domain.Hit
	fail   error
	calls  []searchCall
	tokens int // the embedding tokens each search reports
}

// SearchKnowledge returns the hits of the searched knowledge bases best first, at most top_k
// of each (topK, else the entry's, else domain.DefaultRetrievalTopK); it does not match the
// query, which is not the engine's concern.
func (r *fakeRetriever) SearchKnowledge(_ context.Context, company, query string, refs []domain.KnowledgeBaseRef, topK int) (*domain.RetrievalResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := searchCall{Company: company, Query: query, TopK: topK}
	for _, ref := range refs {
		c.KBs = append(c.KBs, ref.ID)
	}
	r.calls = append(r.calls, c)
	if r.fail != nil {
		return nil, r.fail
	}
	res := &domain.RetrievalResult{EmbeddingTokens: r.tokens}
	for _, ref := range refs {
		hits, ok := r.corpus[ref.ID]
		if !ok {
			res.Problems = append(res.Problems, domain.RetrievalProblem{KnowledgeBaseID: ref.ID, Message: "knowledge base " + ref.ID + " not found"})
			continue
		}
		k := cmp.Or(topK, ref.Retrieval.TopK, domain.DefaultRetrievalTopK)
		res.Hits = append(res.Hits, hits[:min(k, len(hits))]...)
	}
	slices.SortStableFunc(res.Hits, func(a, b domain.Hit) int { return cmp.Compare(b.Score, a.Score) })
	return res, nil
}

func (r *fakeRetriever) searches() []searchCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// hit is a chunk of file (whose id is file without its extension) in knowledge base kb.
func hit(kb, file string, chunk int, score float64, text string) domain.Hit {
	id := strings.TrimSuffix(file, path.Ext(file))
	return domain.Hit{ID: fmt.Sprintf("%s/%s/%d", kb, id, chunk), KBID: kb, FileID: id, FileName: file, ChunkIndex: chunk, Text: text, Score: score}
}

// eventsOf returns the recorded events of one type.
func (r *recorder) eventsOf(typ string) []Event {
	var out []Event
	for _, ev := range r.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}
