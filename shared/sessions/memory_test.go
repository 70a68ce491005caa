package sessions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// scopeMemory is the memory feature as the engine and sessions use it, over maps by scope: a
// block per scope ("what <user> told <agent>") and the extraction jobs queued.
type scopeMemory struct {
	mu      sync.Mutex
	blocks  map[domain.MemoryScope]string
	scopes  []domain.MemoryScope // of every read and write
	jobs    []domain.MemoryExtractJob
	sendErr error
}

func (m *scopeMemory) Blocks(_ context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scopes = append(m.scopes, sc)
	if v, ok := m.blocks[sc]; ok {
		return []*domain.MemoryBlock{{ID: "b", Label: "human", Value: v, Limit: 2000}}, nil
	}
	return nil, nil
}

func (m *scopeMemory) Search(_ context.Context, sc domain.MemoryScope, _ string, _ int) ([]domain.MemoryHit, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scopes = append(m.scopes, sc)
	if v, ok := m.blocks[sc]; ok {
		return []domain.MemoryHit{{Record: domain.MemoryRecord{ID: "r", Text: "fact: " + v}, Score: 0.9}}, 3, nil
	}
	return nil, 3, nil
}

func (m *scopeMemory) Save(context.Context, domain.MemoryScope, string, domain.MemorySource) (*domain.MemoryRecord, error) {
	return nil, errors.New("not used")
}

func (m *scopeMemory) EditBlock(context.Context, domain.MemoryScope, domain.MemoryBlockSpec, domain.MemorySource, func(string) (string, error)) (*domain.MemoryBlock, error) {
	return nil, errors.New("not used")
}

func (m *scopeMemory) Enqueue(_ context.Context, job domain.MemoryExtractJob) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sendErr != nil {
		return m.sendErr
	}
	m.jobs = append(m.jobs, job)
	return nil
}

// promptModel answers "ok" and keeps the system prompts it was given.
type promptModel struct {
	mu      sync.Mutex
	systems []string
}

func (m *promptModel) Converse(_ context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.systems = append(m.systems, req.System)
	return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "Noted."}}, StopReason: domain.StopEndTurn}, nil
}

func (m *promptModel) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.systems[len(m.systems)-1]
}

// memoryService is a sessions service whose engine has mem as its memory and whose agents are
// "shop" (id agent-shop) with memory on, and "shared-shop" (id agent-shared) sharing it.
func memoryService(st *memStore, mem *scopeMemory, model domain.Model) *sessions.Service {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	eng := engine.NewEngine(engine.ModelSet{Default: "fake", ByName: map[string]domain.Model{"fake": model}}, reg, engine.Limits{}).WithMemory(mem)
	return sessions.New(sessions.Deps{Store: st, Agents: memoryAgents{}, Engine: eng, Tools: reg, Memory: mem}, sessions.Limits{})
}

type memoryAgents struct{}

func (memoryAgents) GetByKey(_ context.Context, p domain.Principal, key string) (*domain.Agent, error) {
	cfg, ok := map[string]map[string]any{"shop": memoryConfig("Shop", ""), "shared-shop": memoryConfig("Shop", `"shared":true,`)}[key]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return &domain.Agent{ID: "agent-" + key, Name: key, Company: p.Company, Owner: p.Owner, SystemConfig: cfg}, nil
}

func memoryConfig(name, extra string) map[string]any {
	return mustJSON(`{"name":"` + name + `","system_prompt":"You sell bread.","llm_config":{"provider":"fake","model":"m1"},"memory":{` + extra + `"extract":{}}}`)
}

func mustJSON(s string) map[string]any {
	doc := domain.ConfigDoc{}
	if err := doc.UnmarshalJSON([]byte(s)); err != nil {
		panic(err)
	}
	return doc.Object()
}

func userOf(s string) *string { return &s }

// TestMemoryScopesOfSessions: a session's run reads the memory of its own user and agent only
// (an inline configuration's by its name, a stored agent's by its id, memory.shared the user's
// shared memory), in its own company; users with the same id in two companies, and two users
// of one agent, never see each other's memory (tests that try).
func TestMemoryScopesOfSessions(t *testing.T) {
	ctx := context.Background()
	mem := &scopeMemory{blocks: map[domain.MemoryScope]string{
		{Company: "acme", UserID: "alice", AgentID: "inline:Shop"}:  "ALICE-INLINE",
		{Company: "acme", UserID: "alice", AgentID: "agent-shop"}:   "ALICE-AGENT",
		{Company: "acme", UserID: "alice"}:                          "ALICE-SHARED",
		{Company: "other", UserID: "alice", AgentID: "inline:Shop"}: "OTHER-COMPANY-ALICE",
	}}
	model := &promptModel{}
	st := newMemStore()
	svc := memoryService(st, mem, model)
	acme := domain.Principal{Owner: "owner", Company: "acme"}
	other := domain.Principal{Owner: "owner", Company: "other"}
	inline := func(p domain.Principal, user string) *domain.Session {
		s, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(memoryConfig("Shop", "")), UserID: userOf(user)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fromAgent := func(key, user string) *domain.Session {
		s, _, err := svc.FromAgent(ctx, acme, key, userOf(user))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tt := range []struct {
		name  string
		p     domain.Principal
		sess  *domain.Session
		scope domain.MemoryScope
		sees  string // the one memory the prompt shows, "" none
	}{
		{"alice inline", acme, inline(acme, "alice"), domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "inline:Shop"}, "ALICE-INLINE"},
		{"alice of the agent", acme, fromAgent("shop", "alice"), domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "agent-shop"}, "ALICE-AGENT"},
		{"alice shared", acme, fromAgent("shared-shop", "alice"), domain.MemoryScope{Company: "acme", UserID: "alice"}, "ALICE-SHARED"},
		{"alice of another company", other, inline(other, "alice"), domain.MemoryScope{Company: "other", UserID: "alice", AgentID: "inline:Shop"}, "OTHER-COMPANY-ALICE"},
		{"bob inline", acme, inline(acme, "bob"), domain.MemoryScope{Company: "acme", UserID: "bob", AgentID: "inline:Shop"}, ""},
		{"bob of the agent", acme, fromAgent("shop", "bob"), domain.MemoryScope{Company: "acme", UserID: "bob", AgentID: "agent-shop"}, ""},
		{"bob shared", acme, fromAgent("shared-shop", "bob"), domain.MemoryScope{Company: "acme", UserID: "bob"}, ""},
		{"alice as a user id of the shared scope's spelling", acme, inline(acme, "alice\u200b"), domain.MemoryScope{Company: "acme", UserID: "alice\u200b", AgentID: "inline:Shop"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem.mu.Lock()
			mem.scopes, mem.jobs = nil, nil
			mem.mu.Unlock()
			res, err := svc.Execute(ctx, tt.p, tt.sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("I like rye")}, sessions.Observer{})
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range mem.scopes {
				if sc != tt.scope {
					t.Errorf("memory read in scope %+v, want only %+v", sc, tt.scope)
				}
			}
			if len(mem.scopes) != 2 {
				t.Errorf("%d memory reads, want one Blocks and one Search", len(mem.scopes))
			}
			sys := model.last()
			for _, v := range mem.blocks {
				if strings.Contains(sys, v) != (v == tt.sees) {
					t.Errorf("prompt shows %q: %t, want %t:\n%s", v, strings.Contains(sys, v), v == tt.sees, sys)
				}
			}
			want := []domain.MemoryExtractJob{{Scope: tt.scope, SessionID: tt.sess.ID, ExecutionID: res.Execution.ID, Provider: "fake", Model: "m1",
				User: "I like rye", Reply: "Noted."}}
			if diff := cmp.Diff(want, mem.jobs); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			if got := extractEvents(t, st, tt.sess.ID, res.Execution.ID); !cmp.Equal(got, []map[string]any{{"queued": true}}) {
				t.Errorf("memory_extract events %v", got)
			}
		})
	}
}

// extractEvents are the data of the stored execution's memory_extract events.
func extractEvents(t *testing.T, st *memStore, sessionID, execID string) []map[string]any {
	t.Helper()
	e, err := st.GetExecution(context.Background(), sessionID, execID)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range e.Events {
		if ev["type"] == engine.EventMemoryExtract {
			d, _ := ev["data"].(map[string]any)
			out = append(out, d)
		}
	}
	return out
}

// TestMemoryExtractionQueued: extraction is queued after the commit only for a session with a
// user, a caller with memory:write and a configuration that asks for it; a queue that fails
// never fails the turn, and its event says so.
func TestMemoryExtractionQueued(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		p       domain.Principal
		user    *string
		config  string
		noQueue bool
		sendErr error
		want    []map[string]any // memory_extract events' data
		jobs    int
	}{
		{"queued", alice, userOf("u1"), "", false, nil, []map[string]any{{"queued": true}}, 1},
		{"no memory:write", domain.Principal{Owner: "alice", Company: "acme", Scopes: []string{domain.ScopeSessionsWrite, domain.ScopeMemoryRead}},
			userOf("u1"), "", false, nil, []map[string]any{{"queued": false, "reason": "this API key lacks the memory:write scope"}}, 0},
		{"no queue", alice, userOf("u1"), "", true, nil, []map[string]any{{"queued": false, "reason": "this deployment has no memory extraction queue"}}, 0},
		{"send fails", alice, userOf("u1"), "", false, errors.New("sqs down"), []map[string]any{{"queued": false, "reason": "the extraction could not be queued"}}, 0},
		{"no user", alice, nil, "", false, nil, nil, 0},
		{"extraction off", alice, userOf("u1"), `{"name":"x","memory":{"extract":{"enabled":false}}}`, false, nil, nil, 0},
		{"no extract object", alice, userOf("u1"), `{"name":"x","memory":{}}`, false, nil, nil, 0},
		{"memory off", alice, userOf("u1"), `{"name":"x","memory":{"enabled":false,"extract":{}}}`, false, nil, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := &scopeMemory{sendErr: tt.sendErr}
			st := newMemStore()
			q := mem
			if tt.noQueue {
				q = nil
			}
			var svc *sessions.Service
			if q != nil {
				svc = memoryService(st, q, &promptModel{})
			} else {
				// the engine keeps its memory; only the queue is missing
				reg := tools.NewRegistry()
				eng := engine.NewEngine(engine.ModelSet{Default: "fake", ByName: map[string]domain.Model{"fake": &promptModel{}}}, reg, engine.Limits{}).WithMemory(mem)
				svc = sessions.New(sessions.Deps{Store: st, Engine: eng, Tools: reg}, sessions.Limits{})
			}
			cfg := domain.ConfigDocOf(memoryConfig("Shop", ""))
			if tt.config != "" {
				cfg = domain.ConfigDocOf(mustJSON(tt.config))
			}
			sess, err := svc.Create(ctx, tt.p, sessions.CreateInput{Config: cfg, UserID: tt.user})
			if err != nil {
				t.Fatal(err)
			}
			var seen []map[string]any // the memory_extract events an observer (a stream) is told
			obs := sessions.Observer{OnEvent: func(e engine.Event) {
				if e.Type == engine.EventMemoryExtract {
					seen = append(seen, e.Data)
				}
			}}
			res, err := svc.Execute(ctx, tt.p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("I live in Lyon")}, obs)
			if err != nil {
				t.Fatalf("the turn failed: %v", err)
			}
			if diff := cmp.Diff(tt.want, seen); diff != "" {
				t.Errorf("observed memory_extract events (-want +got):\n%s", diff)
			}
			if len(mem.jobs) != tt.jobs {
				t.Errorf("%d jobs, want %d", len(mem.jobs), tt.jobs)
			}
			if diff := cmp.Diff(tt.want, extractEvents(t, st, sess.ID, res.Execution.ID)); diff != "" {
				t.Errorf("stored memory_extract events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMemoryExtractionOfAPausedTurn: a turn that pauses queues nothing; the part that finishes
// it queues the extraction of the message it answers.
func TestMemoryExtractionOfAPausedTurn(t *testing.T) {
	ctx := context.Background()
	mem := &scopeMemory{}
	st := newMemStore()
	calls := 0
	model := modelFunc(func(_ context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
		calls++
		if calls == 1 {
			return &domain.ModelResponse{StopReason: domain.StopToolUse, Parts: []domain.Part{{Type: domain.PartToolUse,
				ToolUse: &domain.ToolUse{ID: "c1", Name: "lookup", Input: map[string]any{}}}}}, nil
		}
		return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "Found it."}}, StopReason: domain.StopEndTurn}, nil
	})
	svc := memoryService(st, mem, model)
	cfg := mustJSON(`{"name":"F","agent_type":"react_agent","llm_config":{"provider":"fake"},"tools":[{"type":"function","name":"lookup"}],"memory":{"extract":{}}}`)
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(cfg), UserID: userOf("u1")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("find my order")}, sessions.Observer{})
	if err != nil || res.Pending == nil {
		t.Fatalf("first part: %v, pending %v", err, res)
	}
	if len(mem.jobs) != 0 || len(extractEvents(t, st, sess.ID, res.Execution.ID)) != 0 {
		t.Errorf("a paused turn queued extraction: %v", mem.jobs)
	}
	_, err = svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Answer: &sessions.Answer{
		ToolResults: []sessions.ToolResultInput{{ToolCallID: "c1", Output: "order 7"}}, HasResults: true}}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mem.jobs) != 1 || mem.jobs[0].User != "find my order" || mem.jobs[0].Reply != "Found it." {
		t.Errorf("jobs %+v", mem.jobs)
	}
}

type modelFunc func(context.Context, domain.ModelRequest) (*domain.ModelResponse, error)

func (f modelFunc) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	return f(ctx, req)
}
