package kb

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/agentorch/agentorch/infra/bedrockrerank"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestRerankerFromConfig: no RERANK_MODEL_ID, no reranker (a search's rerank is then a 400);
// with one, Bedrock's Rerank API in RERANK_REGION at the configured endpoint, with the model's
// ARN in that Region, the configured model the default.
func TestRerankerFromConfig(t *testing.T) {
	if r, err := reranker(aws.Config{}, platform.Config{Region: "us-east-1", RerankRegion: "us-east-1"}); r != nil || err != nil {
		t.Fatalf("no model configured: %v, %v", r, err)
	}
	srv := bedrockrerank.New(bedrockrerank.Options{Region: "eu-central-1"})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	awsCfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "secret", "")}
	r, err := reranker(awsCfg, platform.Config{Region: "us-east-1", RerankModel: "amazon.rerank-v1:0", RerankRegion: "eu-central-1", RerankEndpoint: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Models(); len(m) != 2 || m[0] != "amazon.rerank-v1:0" {
		t.Errorf("models %v", m)
	}
	got, err := r.Rerank(context.Background(), domain.RerankRequest{Query: "refund", Texts: []string{"shipping", "refund policy"}, TopN: 1})
	if err != nil || len(got) != 1 || got[0].Index != 1 {
		t.Fatalf("rerank: %v, %v", got, err)
	}
	arn := *srv.Last().RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.ModelARN
	if !strings.HasPrefix(arn, "arn:aws:bedrock:eu-central-1::") {
		t.Errorf("model ARN %s, want eu-central-1's", arn)
	}
}
