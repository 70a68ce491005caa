package app_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/usage"
)

// returnsText is the one file of returnsKB.
const returnsText = "Returns are accepted within thirty days of delivery."

// returnsKB is the knowledge service of a and p's knowledge base named name over one file
// (returns.txt, returnsText), embedded by the local model; its ingestion has only begun.
func returnsKB(t *testing.T, a *app.App, p domain.Principal, name string) (*knowledge.Service, *knowledge.KB) {
	t.Helper()
	k, err := a.Knowledge()
	if err != nil {
		t.Fatal(err)
	}
	f, err := k.Upload(t.Context(), p, library.Upload{Name: "returns.txt", Data: []byte(returnsText)})
	if err != nil {
		t.Fatal(err)
	}
	provider := "local"
	kb, err := k.CreateKB(t.Context(), p, knowledge.KBInput{Name: &name, Datasources: []*string{&f.ID},
		Embedding: &knowledge.EmbeddingInput{Provider: &provider}})
	if err != nil {
		t.Fatal(err)
	}
	return k, kb
}

// TestUsageCountsEmbeddingTokens: through the stack as make dev runs it (the local embedding
// model, the ingestion function driven from IngestQueue, DynamoDB Local's counters), the usage
// report's embedding_tokens holds the ingestion's tokens under no key, a search's under the
// caller's key, and an execute's retrieval under the execute's key in that execute's count.
func TestUsageCountsEmbeddingTokens(t *testing.T) {
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(t, a.Processor)
	ctx := t.Context()
	p := domain.Principal{KeyID: "k-embed", Owner: "o", Company: "company-usage-embed-" + time.Now().Format("150405.000000")}
	k, kb := returnsKB(t, a, p, "embedded")
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, err := k.GetKB(ctx, p, kb.ID)
		if err == nil && got.Status == domain.KBCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ingestion did not complete: %+v, %v", got, err)
		}
	}
	query := "thirty days"
	if _, err := k.Search(ctx, p, kb.ID, knowledge.SearchInput{Query: &query}); err != nil {
		t.Fatal(err)
	}
	svc := a.Sessions()
	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "r", "system_prompt": "answer",
		"knowledge_bases": []any{map[string]any{"name": "embedded", "knowledge_base_type": "opensearch", "knowledge_base_id": kb.ID}}})})
	if err != nil {
		t.Fatal(err)
	}
	p2 := p
	p2.KeyID = "k-execute"
	if _, err := svc.Execute(ctx, p2, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("how long for returns?")}, sessions.Observer{}); err != nil {
		t.Fatal(err)
	}

	rep, err := usage.New(a.Store).Report(ctx, p, usage.Query{GroupBy: usage.ByAPIKey})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]domain.UsageCount{}
	for _, r := range rep.Rows {
		byKey[r.KeyID] = r.UsageCount
	}
	// The local model counts its tokenizer's tokens: the file's one chunk and the queries are
	// a few words each, so a few tokens, never none.
	if byKey[""].EmbeddingTokens <= 0 || byKey["k-embed"].EmbeddingTokens <= 0 || byKey["k-execute"].EmbeddingTokens <= 0 ||
		byKey["k-execute"].Requests != 1 || rep.Total.EmbeddingTokens != byKey[""].EmbeddingTokens+byKey["k-embed"].EmbeddingTokens+byKey["k-execute"].EmbeddingTokens {
		t.Errorf("usage by key %+v: want embedding tokens of the ingestion (no key), the search (k-embed) and the execute (k-execute, one request)", byKey)
	}
}
