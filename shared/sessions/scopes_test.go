package sessions_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// countingRetriever finds nothing and counts the searches.
type countingRetriever struct {
	mu sync.Mutex
	n  int
}

func (r *countingRetriever) SearchKnowledge(context.Context, string, string, []domain.KnowledgeBaseRef, int) (*domain.RetrievalResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return &domain.RetrievalResult{}, nil
}

func (r *countingRetriever) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// acmeKBs says knowledge base kb1 is acme's.
type acmeKBs struct{}

func (acmeKBs) KnowledgeBaseOwners(_ context.Context, ids []string) (map[string]string, error) {
	return map[string]string{"kb1": "acme"}, nil
}

// oneAgent is the agents feature with one agent, "kb-agent", whose configuration is kbConfig.
type oneAgent struct{}

func (oneAgent) GetByKey(_ context.Context, _ domain.Principal, key string) (*domain.Agent, error) {
	if key != "kb-agent" {
		return nil, domain.ErrNotFound
	}
	return &domain.Agent{ID: "a1", Name: "KB", Company: "acme", Owner: "alice", SystemConfig: kbConfig().Object()}, nil
}

func kbConfig() domain.ConfigDoc {
	return domain.ConfigDocOf(map[string]any{"name": "kb", "system_prompt": "hi", "knowledge_bases": []any{
		map[string]any{"name": "docs", "knowledge_base_type": "opensearch", "knowledge_base_id": "kb1"}}})
}

func kbService(st *memStore, q sessions.Queue, r engine.Retriever) *sessions.Service {
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	eng := engine.NewEngine(models, reg, engine.Limits{}).WithRetriever(r)
	return sessions.New(sessions.Deps{Store: st, Agents: oneAgent{}, Engine: eng, Tools: reg, Queue: q, KnowledgeBases: acmeKBs{}}, sessions.Limits{})
}

func scoped(scopes ...string) domain.Principal {
	return domain.Principal{Owner: "alice", Company: "acme", Scopes: scopes}
}

// TestConfigsNamingKnowledgeBasesNeedKnowledgeRead: creating a session, inline or from an agent,
// whose configuration names a knowledge base is a permission error without knowledge:read.
func TestConfigsNamingKnowledgeBasesNeedKnowledgeRead(t *testing.T) {
	ctx := context.Background()
	svc := kbService(newMemStore(), nil, &countingRetriever{})
	for _, tt := range []struct {
		p    domain.Principal
		want domain.Kind
	}{
		{scoped(domain.ScopeSessionsWrite), domain.KindPermission},
		{scoped(domain.ScopeSessionsWrite, domain.ScopeAgentsWrite), domain.KindPermission},
		{scoped(domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead), 0},
		{scoped(domain.ScopeSessionsWrite, domain.ScopeKnowledgeWrite), 0},
		{scoped(domain.ScopeAdmin), 0},
		{alice, 0},
	} {
		_, err := svc.Create(ctx, tt.p, sessions.CreateInput{Config: kbConfig()})
		if got := domain.KindOf(err); err != nil && got != tt.want || err == nil && tt.want != 0 {
			t.Errorf("Create by %v: %v, want kind %v", tt.p.Scopes, err, tt.want)
		}
		_, _, err = svc.FromAgent(ctx, tt.p, "kb-agent", nil)
		if got := domain.KindOf(err); err != nil && got != tt.want || err == nil && tt.want != 0 {
			t.Errorf("FromAgent by %v: %v, want kind %v", tt.p.Scopes, err, tt.want)
		}
	}
	// A configuration naming none needs no more than sessions:write.
	if _, err := svc.Create(ctx, scoped(domain.ScopeSessionsWrite), sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "plain", "system_prompt": "hi"})}); err != nil {
		t.Errorf("plain session by sessions:write: %v", err)
	}
}

// TestExecuteRetrievesWithTheCallersScopes: a session naming a knowledge base, executed by a
// key of its owner without knowledge:read, searches nothing and records why; with the scope it
// searches. Queued executions run with the scopes of the key that queued them.
func TestExecuteRetrievesWithTheCallersScopes(t *testing.T) {
	ctx := context.Background()
	st, q, r := newMemStore(), &queue{}, &countingRetriever{}
	svc := kbService(st, q, r)
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: kbConfig()})
	if err != nil {
		t.Fatal(err)
	}
	limited := scoped(domain.ScopeSessionsWrite)
	reader := scoped(domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead)

	res, err := svc.Execute(ctx, limited, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("returns?")}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if r.count() != 0 || !deniedEvent(res.Execution.Events) || res.Messages[0].Citations != nil {
		t.Errorf("sessions:write only: %d searches, events %v, citations %v", r.count(), res.Execution.Events, res.Messages[0].Citations)
	}
	if _, err := svc.Execute(ctx, reader, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("returns?")}, sessions.Observer{}); err != nil || r.count() != 1 {
		t.Errorf("knowledge:read: %v, %d searches, want 1", err, r.count())
	}

	for _, tt := range []struct {
		p        domain.Principal
		searches int
	}{{limited, 0}, {reader, 1}, {alice, 1}} {
		before := r.count()
		e, err := svc.Enqueue(ctx, tt.p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("later")})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.ProcessJob(ctx, q.bodies[len(q.bodies)-1]); err != nil {
			t.Fatal(err)
		}
		got, _ := st.GetExecution(ctx, sess.ID, e.ID)
		if n := r.count() - before; n != tt.searches || got.Status != domain.ExecCompleted || got.Scopes != nil {
			t.Errorf("queued by %v: %d searches, status %s, scopes kept %v; want %d searches, completed, none kept",
				tt.p.Scopes, n, got.Status, got.Scopes, tt.searches)
		}
	}

	// Queued before executions recorded their caller's grants: no search.
	e, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("old")})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := st.GetExecution(ctx, sess.ID, e.ID)
	rec.Scopes = nil
	_ = st.PutExecution(ctx, rec)
	before := r.count()
	if err := svc.ProcessJob(ctx, q.bodies[len(q.bodies)-1]); err != nil || r.count() != before {
		t.Errorf("a record without grants: %v, %d searches, want none", err, r.count()-before)
	}
}

func deniedEvent(events []map[string]any) bool {
	for _, e := range events {
		if d, _ := e["data"].(map[string]any); e["type"] == engine.EventError && d["message"] == engine.RetrievalDenied {
			return true
		}
	}
	return false
}
