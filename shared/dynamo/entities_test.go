package dynamo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

func newAgent(key string, seq int, at time.Time) (*domain.Agent, *domain.AgentVersion) {
	cfg := map[string]any{"name": key}
	a := &domain.Agent{ID: uuid.NewString(), AgentKey: key, Name: key, Owner: "alice", Company: "acme", SystemConfig: cfg,
		VersionNumber: "1.0.0", ConfigHash: domain.ConfigHash(cfg), CreatedAt: at, UpdatedAt: at, Seq: seq}
	v := &domain.AgentVersion{ID: uuid.NewString(), AgentID: a.ID, VersionNumber: "1.0.0", Seq: seq, SystemConfig: cfg,
		Metadata: map[string]any{}, CreatedAt: at}
	return a, v
}

// TestAgentEntity: create claims agent_key in the same transaction (a second claim is
// ErrAgentKeyTaken and writes nothing), get by id and by key, the company's list, versions,
// and deletion frees the key.
func TestAgentEntity(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	now := time.Now().UTC()
	a, v := newAgent("support-bot", 1, now)
	if err := st.CreateAgent(ctx, a, v); err != nil {
		t.Fatal(err)
	}
	dup, dv := newAgent("support-bot", 1, now)
	if err := st.CreateAgent(ctx, dup, dv); !errors.Is(err, domain.ErrAgentKeyTaken) {
		t.Fatalf("second claim of the key: %v, want ErrAgentKeyTaken", err)
	}
	if _, err := st.GetAgent(ctx, dup.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the refused agent was written: %v", err)
	}
	got, err := st.GetAgent(ctx, a.ID)
	if err != nil || got.AgentKey != "support-bot" || got.Company != "acme" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if id, err := st.AgentIDByKey(ctx, "support-bot"); err != nil || id != a.ID {
		t.Errorf("by key: %q, %v", id, err)
	}
	var listed []string
	if err := st.ListAgents(ctx, "acme", func(x *domain.Agent) bool { listed = append(listed, x.ID); return true }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != a.ID {
		t.Errorf("list: %v", listed)
	}
	if err := st.ListAgents(ctx, "globex", func(x *domain.Agent) bool { t.Errorf("globex sees %s", x.ID); return true }); err != nil {
		t.Fatal(err)
	}
	vs, more, err := st.ListVersions(ctx, a.ID, 0, 10)
	if err != nil || more || len(vs) != 1 || vs[0].VersionNumber != "1.0.0" {
		t.Errorf("versions: %+v %v %v", vs, more, err)
	}
	if err := st.DeleteAgent(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetAgent(ctx, a.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	again, av := newAgent("support-bot", 1, now)
	if err := st.CreateAgent(ctx, again, av); err != nil {
		t.Errorf("the deleted agent's key is still taken: %v", err)
	}
}

// TestKeyEntity: keys are found by the hash of their secret and by id within their company
// only; revocation is written back and listed.
func TestKeyEntity(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	k := &domain.APIKey{ID: uuid.NewString(), Name: "k", Prefix: "ak_abc", Hash: "h-" + uuid.NewString(), Owner: "alice", Company: "acme",
		Scopes: []string{domain.ScopeAgentsRead}, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	if err := st.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetKeyByHash(ctx, k.Hash); err != nil || got.ID != k.ID {
		t.Fatalf("by hash: %+v, %v", got, err)
	}
	if _, err := st.GetKey(ctx, "globex", k.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's lookup: %v, want not found", err)
	}
	if _, err := st.GetKeyByHash(ctx, "no-such-hash"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown hash: %v", err)
	}
	revoked, err := st.RevokeKey(ctx, k, now)
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("revoke: %+v, %v", revoked, err)
	}
	keys, err := st.ListKeys(ctx, "acme")
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Errorf("list after revoke: %+v, %v", keys, err)
	}
	if got, err := st.GetKeyByHash(ctx, k.Hash); err != nil || got.RevokedAt == nil {
		t.Errorf("by hash after revoke: %+v, %v", got, err)
	}
}
