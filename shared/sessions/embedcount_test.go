package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

// tokenRetriever finds nothing and reports embedding the query with tokens tokens.
type tokenRetriever struct{ tokens int }

func (r tokenRetriever) SearchKnowledge(context.Context, string, string, []domain.KnowledgeBaseRef, int) (*domain.RetrievalResult, error) {
	return &domain.RetrievalResult{Hits: []domain.Hit{}, EmbeddingTokens: r.tokens}, nil
}

// TestRetrievalEmbeddingTokensCounted: the tokens of an execute's retrievals (their events'
// embedding_tokens) are counted in the execute's own usage count, under its key: no other count
// is made, and each execute adds only its own retrievals'.
func TestRetrievalEmbeddingTokensCounted(t *testing.T) {
	const perSearch = 9
	reg := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	counters := usagetest.NewStore()
	eng := engine.NewEngine(models, reg, engine.Limits{}).WithRetriever(tokenRetriever{tokens: perSearch})
	svc := sessions.New(sessions.Deps{Store: newMemStore(), Agents: oneAgent{}, Engine: eng, Tools: reg, KnowledgeBases: acmeKBs{}, Usage: counters},
		sessions.Limits{})
	ctx := context.Background()
	p := alice
	p.KeyID = "k1"
	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: kbConfig()})
	if err != nil {
		t.Fatal(err)
	}
	searches := 0
	for range 2 {
		res, err := svc.Execute(ctx, p, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("returns?")}, sessions.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Execution.Events {
			if e["type"] == engine.EventRetrieval {
				searches++
			}
		}
	}
	all, err := counters.UsageEntries(ctx, alice.Company, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if searches < 2 || len(all) != 1 || all[0].KeyID != "k1" || all[0].Requests != 2 || all[0].EmbeddingTokens != int64(perSearch*searches) {
		t.Errorf("after %d searches of %d tokens: counters %+v, want one of key k1 with 2 requests and %d embedding tokens",
			searches, perSearch, all, perSearch*searches)
	}
}
