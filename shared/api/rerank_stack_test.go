package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentorch/agentorch/infra/bedrockrerank"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/mcp"
)

// TestSearchRerankEndToEnd: the application configured as a deployment with a rerank model
// (RERANK_MODEL_ID, RERANK_REGION, its endpoint at the Rerank stand-in) answers a search with
// rerank through the knowledge function's route: one Rerank request, the top_k by relevance,
// each with the reranker's score; the same search on the local stack's configuration (no rerank
// model) is a 400 naming rerank.
func TestSearchRerankEndToEnd(t *testing.T) {
	env := testEnv(t)
	srv := bedrockrerank.New(bedrockrerank.Options{Region: "us-west-2"})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg := env.Config
	cfg.RerankModel, cfg.RerankRegion, cfg.RerankEndpoint = "amazon.rerank-v1:0", "us-west-2", hs.URL
	a := app.NewWithAWS(env.AWS, cfg, slog.New(slog.DiscardHandler))
	a.UseMCP(mcp.ForPolicy)
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	env.RunEventSources(t, a.Processor)
	s := &stack{t: t, app: a, mux: mux}
	key := s.key("alice", "acme")

	txt := s.uploadFile(key, "returns.txt", "text/plain", []byte(returnsPolicy))
	md := s.uploadFile(key, "shipping.md", "text/markdown", []byte(shippingNotes))
	kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{"name": "Support", "processing_engine": "opensearch",
		"selected_datasources": []any{txt["id"], md["id"]}, "embedding_config": map[string]any{"provider": "local"}})
	kbID := kb["id"].(string)
	if st := s.waitKB(key, kbID)["knowledge_base"].(map[string]any); st["status"] != "completed" {
		t.Fatalf("knowledge base %v", st)
	}

	// "fragile goods padding" holds the Packaging section's words: relevance 1 from the
	// stand-in, whatever the first stage's order.
	hits := s.search(key, kbID, map[string]any{"query": "fragile goods padding", "top_k": 1, "rerank": true})
	if srv.Calls() != 1 {
		t.Fatalf("%d Rerank requests, want 1", srv.Calls())
	}
	if len(hits) != 1 || hits[0]["file_id"] != md["id"] || hits[0]["score"] != float64(1) {
		t.Errorf("reranked hits %v", hits)
	}
	last := srv.Last()
	if arn := *last.RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.ModelARN; arn != "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0" {
		t.Errorf("model ARN %s", arn)
	}
	if s.search(key, kbID, map[string]any{"query": "fragile goods padding", "top_k": 1}); srv.Calls() != 1 {
		t.Errorf("a search without rerank made a Rerank request")
	}
	res := s.do(req{method: "POST", path: "/api/v1/knowledge-bases/" + kbID + "/search/", key: key,
		body: map[string]any{"query": "x", "rerank": map[string]any{"model": "bge-reranker"}}})
	if typ, _ := res.errorType(t); res.status != http.StatusBadRequest || typ != "invalid_request_error" {
		t.Errorf("unknown model: %d %s", res.status, res.body)
	}

	plain := newStack(t)
	res = plain.do(req{method: "POST", path: "/api/v1/knowledge-bases/" + kbID + "/search/", key: plain.key("alice", "acme"),
		body: map[string]any{"query": "x", "rerank": true}})
	if typ, msg := res.errorType(t); res.status != http.StatusBadRequest || typ != "invalid_request_error" || msg[:7] != "rerank:" {
		t.Errorf("no rerank model: %d %s", res.status, res.body)
	}
}
