package knowledge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// usageCounts records what the service counts.
type usageCounts struct {
	mu  sync.Mutex
	got []domain.UsageEntry
}

func (u *usageCounts) CountUsage(_ context.Context, e domain.UsageEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.got = append(u.got, e)
	return nil
}

// tokens sums the embedding tokens counted, by key id.
func (u *usageCounts) tokens() map[string]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string]int64{}
	for _, e := range u.got {
		out[e.KeyID] += e.EmbeddingTokens
	}
	return out
}

// perText is the count the counting embedder's provider reports for every text: no estimate
// of the texts would give it.
const perText = 1000

// countingBow is the bag-of-words embedder with a provider's own token count (as the
// shared/embeddings providers report it).
type countingBow struct{ *bowEmbedder }

func (c countingBow) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	v, err := c.Embed(ctx, texts)
	return v, perText * len(texts), err
}

type countingEmbedders struct{ testEmbedders }

func (c countingEmbedders) Embedder(ctx context.Context, cfg domain.Embedding) (knowledge.Embedder, error) {
	e, err := c.testEmbedders.Embedder(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return countingBow{e.(*bowEmbedder)}, nil
}

// TestEmbeddingTokensCounted: the tokens the provider reports for an ingestion's chunks are
// counted for the company under no key (one count per file job), a search through the API
// counts its query's under the caller's key, and an agent's retrieval reports its query's in its
// result without counting (the execute counts them in its own write).
func TestEmbeddingTokensCounted(t *testing.T) {
	usage := &usageCounts{}
	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) {
		d.Usage = usage
		d.Embedders = countingEmbedders{d.Embedders.(testEmbedders)}
	})
	r := k.addFile(t, alice, "returns.txt", returnsText)
	s := k.addFile(t, alice, "shipping.txt", shippingText)
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(r, s)})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	chunks := int64(len(k.Emb.Embedded()))
	if d := cmp.Diff(map[string]int64{"": perText * chunks}, usage.tokens()); chunks == 0 || d != "" {
		t.Fatalf("after ingesting %d chunks (-want +got):\n%s", chunks, d)
	}
	if len(usage.got) != 2 || usage.got[0].Company != "acme" || usage.got[0].AgentID != "" || usage.got[0].Requests != 0 {
		t.Errorf("counts %+v, want one per file job, of acme, embedding tokens only", usage.got)
	}

	k.search(t, alice, kb.ID, map[string]any{"query": "refund thirty days"})
	if got := usage.tokens()[alice.KeyID]; got != perText {
		t.Errorf("a search counted %d tokens for %s, want %d", got, alice.KeyID, perText)
	}

	before := len(usage.got)
	res, err := k.Svc.SearchKnowledge(kbCtx(t), "acme", "refund", []domain.KnowledgeBaseRef{{Name: "KB", ID: kb.ID}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.EmbeddingTokens != perText || len(usage.got) != before {
		t.Errorf("retrieval: %d tokens in the result, %d counts made; want %d and none", res.EmbeddingTokens, len(usage.got)-before, perText)
	}
}

// TestEmbeddingTokensEstimated: an embedder that reports no count is counted with its own
// Tokens of each text, up to what it reads.
func TestEmbeddingTokensEstimated(t *testing.T) {
	usage := &usageCounts{}
	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Usage = usage })
	f := k.addFile(t, alice, "returns.txt", returnsText)
	k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(f)})
	k.drain(t)
	var want int64
	for _, text := range k.Emb.Embedded() {
		want += int64(min(k.Emb.Tokens(text), k.Emb.MaxTokens()))
	}
	if got := usage.tokens()[""]; want == 0 || got != want {
		t.Errorf("counted %d tokens, want %d", got, want)
	}
}
