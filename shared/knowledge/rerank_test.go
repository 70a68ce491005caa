package knowledge_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"

	"github.com/agentorch/agentorch/infra/bedrockrerank"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/rerank"
)

// withRerank plugs Bedrock's Rerank adapter into the service, its real SDK client calling the
// Rerank stand-in over HTTP (which scores by the share of the query's words a passage holds).
func withRerank(t testing.TB, srv *bedrockrerank.Server) func(*knowledge.Deps, *knowledge.Limits) {
	return func(d *knowledge.Deps, _ *knowledge.Limits) {
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		client := bedrockagentruntime.NewFromConfig(aws.Config{Region: "us-west-2",
			Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "secret", "")},
			func(o *bedrockagentruntime.Options) { o.BaseEndpoint = aws.String(hs.URL) })
		r, err := rerank.New(client, rerank.Options{Region: "us-west-2", Model: rerank.CohereRerank, BaseDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		d.Reranker = r
	}
}

// rerankFixture is the search fixture with the reranker plugged in, and a fourth file whose
// words match the test's query best while its bag of words is far from it.
func rerankFixture(t testing.TB) (*searchFixture, *bedrockrerank.Server) {
	t.Helper()
	srv := bedrockrerank.New(bedrockrerank.Options{})
	k := newKBService(t, withRerank(t, srv))
	f := &searchFixture{kbHarness: k}
	f.returns = k.addFile(t, alice, "returns.txt", returnsText, "policy")
	f.shipping = k.addFile(t, alice, "shipping.txt", shippingText)
	f.notes = k.addFile(t, alice, "notes.txt", "Internal note: refund requests after thirty days go to the manager.", "policy", "internal")
	c := k.addCollection(t, alice, "C", f.returns, f.shipping, f.notes)
	f.kb = k.createKB(t, alice, "KB", map[string]any{"selected_collections": idList(c)})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	return f, srv
}

// TestSearchRerank: with rerank the first stage finds the candidates (max(4·top_k, 20) by
// default, or rerank.candidates), one Rerank request orders them, and the top_k most relevant
// come back with the reranker's score; the store and index calls are those of a plain search.
func TestSearchRerank(t *testing.T) {
	f, srv := rerankFixture(t)
	query := "manager refund requests"
	plain := f.search(t, alice, f.kb.ID, map[string]any{"query": query, "top_k": json.Number("50")})
	f.Store.Reset()
	f.Index.Reset()
	embeds := f.Emb.Calls()
	hits := f.search(t, alice, f.kb.ID, map[string]any{"query": query, "top_k": json.Number("2"), "rerank": true})
	if srv.Calls() != 1 {
		t.Fatalf("%d Rerank requests, want 1", srv.Calls())
	}
	if f.Store.Total() != 2 || f.Index.Get("Search") != 1 || f.Index.Total() != 1 || f.Emb.Calls()-embeds != 1 {
		t.Errorf("calls: store %d, index %d, embeddings %d; want 2, 1, 1", f.Store.Total(), f.Index.Total(), f.Emb.Calls()-embeds)
	}
	last := srv.Last()
	if want := min(len(plain), 20); len(last.Sources) != want {
		t.Errorf("%d candidates sent, want %d (the first stage's, at most 20 for top_k 2)", len(last.Sources), want)
	}
	if n := *last.RerankingConfiguration.BedrockRerankingConfiguration.NumberOfResults; n != 2 {
		t.Errorf("numberOfResults %d, want top_k 2", n)
	}
	if *last.Queries[0].TextQuery.Text != query {
		t.Errorf("query sent %q", *last.Queries[0].TextQuery.Text)
	}
	// The notes hold all three words: relevance 1 (the stand-in's), first.
	if len(hits) != 2 || hits[0].FileID != f.notes.ID || hits[0].Score != 1 || hits[1].Score > hits[0].Score {
		t.Fatalf("hits %+v", hits)
	}
	if hits[0].FileName != "notes.txt" || !strings.Contains(hits[0].Text, "manager") {
		t.Errorf("best hit %+v", hits[0])
	}

	// rerank.candidates bounds the first stage (at least top_k); rerank false is no request.
	f.search(t, alice, f.kb.ID, map[string]any{"query": query, "top_k": json.Number("2"),
		"rerank": map[string]any{"candidates": json.Number("3"), "model": "amazon.rerank-v1:0"}})
	last = srv.Last()
	if len(last.Sources) != min(3, len(plain)) || !strings.HasSuffix(*last.RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.ModelARN, "/amazon.rerank-v1:0") {
		t.Errorf("candidates 3, model amazon: %d sources, %s", len(last.Sources), *last.RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.ModelARN)
	}
	// Atthene's form.
	f.search(t, alice, f.kb.ID, map[string]any{"query": query, "enable_rerank": true, "rerank_model": "cohere.rerank-v3-5:0"})
	calls := srv.Calls()
	f.search(t, alice, f.kb.ID, map[string]any{"query": query, "rerank": false})
	f.search(t, alice, f.kb.ID, map[string]any{"query": query})
	if calls != 3 || srv.Calls() != 3 {
		t.Errorf("Rerank requests %d then %d, want 3 and no more without rerank", calls, srv.Calls())
	}
	// Nothing found: no request.
	if hits := f.search(t, alice, f.kb.ID, map[string]any{"query": query, "rerank": true, "filter": map[string]any{"tags": []any{"none"}}}); len(hits) != 0 || srv.Calls() != 3 {
		t.Errorf("no candidates: %+v, %d requests", hits, srv.Calls())
	}
}

// TestSearchRerankRefused: a rerank the deployment cannot serve is a 400 naming the field
// before anything is read; a bad option is a 400 naming it; Bedrock's refusal is a 400, its
// throttling a 503.
func TestSearchRerankRefused(t *testing.T) {
	k := newKBService(t) // no reranker
	_, err := k.Svc.Search(kbCtx(t), alice, unknownID, decoded[knowledge.SearchInput](map[string]any{"query": "x", "rerank": true}))
	kbWantErr(t, err, domain.KindInvalid, "rerank")
	if !strings.Contains(err.Error(), "RERANK_MODEL_ID") {
		t.Errorf("message does not say how to configure it: %v", err)
	}
	_, err = k.Svc.Search(kbCtx(t), alice, unknownID, decoded[knowledge.SearchInput](map[string]any{"query": "x", "enable_rerank": true}))
	kbWantErr(t, err, domain.KindInvalid, "enable_rerank")

	f, srv := rerankFixture(t)
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"unknown model", map[string]any{"rerank": map[string]any{"model": "bge-reranker"}}, "rerank.model"},
		{"unknown Atthene model", map[string]any{"enable_rerank": true, "rerank_model": "bge-reranker"}, "rerank_model"},
		{"wrong type", map[string]any{"rerank": "yes"}, "rerank"},
		{"candidates over 100", map[string]any{"rerank": map[string]any{"candidates": json.Number("101")}}, "rerank.candidates"},
		{"unknown key", map[string]any{"rerank": map[string]any{"top_n": json.Number("1")}}, "rerank.top_n"},
	} {
		body := map[string]any{"query": "refund"}
		for k, v := range tt.body {
			body[k] = v
		}
		_, err := f.Svc.Search(kbCtx(t), alice, f.kb.ID, decoded[knowledge.SearchInput](body))
		kbWantErr(t, err, domain.KindInvalid, tt.field)
	}
	if srv.Calls() != 0 {
		t.Errorf("%d Rerank requests for refused searches", srv.Calls())
	}
	srv.Fail(bedrockrerank.Fault{Status: 400, Type: "ValidationException", Message: "bad"})
	_, err = f.Svc.Search(kbCtx(t), alice, f.kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": "refund", "rerank": true}))
	kbWantErr(t, err, domain.KindInvalid)
	throttled := bedrockrerank.Fault{Status: 429, Type: "ThrottlingException", Message: "slow down"}
	srv.Fail(throttled, throttled, throttled, throttled)
	_, err = f.Svc.Search(kbCtx(t), alice, f.kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": "refund", "rerank": true}))
	kbWantErr(t, err, domain.KindOverloaded)
}

// TestSearchKnowledgeRerank: an agent's entries with rerank share one Rerank request per group
// and merge by relevance; without a reranker the entry is searched in the first stage's order
// and reported as a problem.
func TestSearchKnowledgeRerank(t *testing.T) {
	f, srv := rerankFixture(t)
	other := f.addFile(t, alice, "faq.txt", "Refund questions: a refund takes five business days.")
	second := f.createKB(t, alice, "FAQ", map[string]any{"selected_datasources": idList(other)})
	f.drain(t)
	on := domain.RetrievalConfig{TopK: 2, Rerank: &domain.Rerank{}}
	refs := []domain.KnowledgeBaseRef{{Name: "policies", ID: f.kb.ID, Retrieval: on},
		{Name: "faq", ID: second.ID, Retrieval: domain.RetrievalConfig{TopK: 2, Strategy: domain.StrategyBM25,
			Rerank: &domain.Rerank{Model: rerank.CohereRerank}}}}
	res, err := f.Svc.SearchKnowledge(kbCtx(t), "acme", "refund business days", refs, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Two groups (dense, bm25), each reranked by the default model: two requests, merged by score.
	if srv.Calls() != 2 || len(res.Problems) != 0 {
		t.Fatalf("%d requests, problems %+v", srv.Calls(), res.Problems)
	}
	if len(res.Hits) < 2 || res.Hits[0].KBID != second.ID || res.Hits[0].Score != 1 {
		t.Errorf("hits %+v, want the FAQ (all three words) first", res.Hits)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score > res.Hits[i-1].Score {
			t.Errorf("not merged by relevance: %+v", res.Hits)
		}
	}

	k := newKBService(t) // no reranker
	file := k.addFile(t, alice, "a.txt", returnsText)
	kb := k.createKB(t, alice, "Docs", map[string]any{"selected_datasources": idList(file)})
	k.drain(t)
	res, err = k.Svc.SearchKnowledge(kbCtx(t), "acme", "refund", []domain.KnowledgeBaseRef{{Name: "docs", ID: kb.ID, Retrieval: on}}, 0)
	if err != nil || len(res.Hits) == 0 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "without reranking") {
		t.Errorf("no reranker: %+v %v", res, err)
	}
}
