package rerank

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/bedrockrerank"
	"github.com/agentorch/agentorch/shared/domain"
)

// standIn serves the Rerank stand-in for region and returns it with a Reranker whose real SDK
// client calls it over HTTP.
func standIn(t testing.TB, region, model string) (*bedrockrerank.Server, *Reranker) {
	t.Helper()
	srv := bedrockrerank.New(bedrockrerank.Options{Region: region})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client := bedrockagentruntime.NewFromConfig(aws.Config{Region: region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "secret", "")},
		func(o *bedrockagentruntime.Options) { o.BaseEndpoint = aws.String(hs.URL) })
	r, err := New(client, Options{Region: region, Model: model, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return srv, r
}

var passages = []string{
	"The licence terminates automatically if you fail to comply.",
	"Covered Software is provided on an as is basis, without warranty.",
	"You may distribute the Source Code Form under the terms of this licence.",
	"Notices must not be removed from the Source Code Form.",
}

// TestRerankOverHTTP: one request carries the query, every passage and the model's ARN; the
// answer comes back best first by index, cut to TopN.
func TestRerankOverHTTP(t *testing.T) {
	srv, r := standIn(t, "us-west-2", AmazonRerank)
	got, err := r.Rerank(context.Background(), domain.RerankRequest{Query: "distribute source code form", Texts: passages, TopN: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in scores the share of the query's 4 words a passage holds: passage 2 holds all,
	// passage 3 holds source, code, form (3/4 is exact in the wire's float32).
	want := []domain.Relevance{{Index: 2, Score: 1}, {Index: 3, Score: 0.75}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	last := srv.Last()
	conf := last.RerankingConfiguration.BedrockRerankingConfiguration
	if arn := *conf.ModelConfiguration.ModelARN; arn != "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0" {
		t.Errorf("model ARN %s", arn)
	}
	if *conf.NumberOfResults != 2 || len(last.Sources) != len(passages) || *last.Queries[0].TextQuery.Text != "distribute source code form" {
		t.Errorf("request %+v", last)
	}
	if srv.Calls() != 1 {
		t.Errorf("%d calls, want 1", srv.Calls())
	}
	// A model named in the request, an empty passage (Bedrock refuses empty texts) and TopN 0
	// (all of them).
	got, err = r.Rerank(context.Background(), domain.RerankRequest{Model: CohereRerank, Query: "warranty", Texts: []string{"", "without warranty"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]domain.Relevance{{Index: 1, Score: 1}, {Index: 0, Score: 0}}, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if arn := *srv.Last().RerankingConfiguration.BedrockRerankingConfiguration.ModelConfiguration.ModelARN; !strings.HasSuffix(arn, "/cohere.rerank-v3-5:0") {
		t.Errorf("model ARN %s", arn)
	}
}

// TestRerankErrors: Bedrock's errors, as the stand-in answers them over HTTP, become domain
// kinds; throttling and server errors are retried, the rest are not.
func TestRerankErrors(t *testing.T) {
	throttled := bedrockrerank.Fault{Status: http.StatusTooManyRequests, Type: "ThrottlingException", Message: "Too many requests"}
	internal := bedrockrerank.Fault{Status: http.StatusInternalServerError, Type: "InternalServerException", Message: "boom"}
	tests := []struct {
		name      string
		region    string
		model     string
		faults    []bedrockrerank.Fault
		wantKind  domain.Kind
		wantCalls int
		wantOK    bool
	}{
		{name: "throttled then served", faults: []bedrockrerank.Fault{throttled}, wantCalls: 2, wantOK: true},
		{name: "throttled throughout", faults: []bedrockrerank.Fault{throttled, throttled, throttled, throttled}, wantKind: domain.KindOverloaded, wantCalls: 4},
		{name: "bad gateway throughout", faults: []bedrockrerank.Fault{fault(502, "BadGatewayException", "x"), fault(502, "BadGatewayException", "x"), fault(502, "BadGatewayException", "x"), fault(502, "BadGatewayException", "x")},
			wantKind: domain.KindOverloaded, wantCalls: 4},
		{name: "server error throughout", faults: []bedrockrerank.Fault{internal, internal, internal, internal}, wantKind: domain.KindInternal, wantCalls: 4},
		{name: "quota", faults: []bedrockrerank.Fault{fault(400, "ServiceQuotaExceededException", "quota")}, wantKind: domain.KindOverloaded, wantCalls: 1},
		{name: "access denied", faults: []bedrockrerank.Fault{fault(403, "AccessDeniedException", "not authorized to perform bedrock:Rerank")}, wantKind: domain.KindInternal, wantCalls: 1},
		{name: "model not found", faults: []bedrockrerank.Fault{fault(404, "ResourceNotFoundException", "no such model")}, wantKind: domain.KindInternal, wantCalls: 1},
		// A model the Region does not offer: the stand-in refuses it as invalid.
		{name: "model not in region", region: "us-east-1", model: AmazonRerank, wantKind: domain.KindInvalid, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			region, model := tt.region, tt.model
			if region == "" {
				region, model = "eu-central-1", CohereRerank
			}
			srv, r := standIn(t, region, model)
			srv.Fail(tt.faults...)
			got, err := r.Rerank(context.Background(), domain.RerankRequest{Query: "warranty", Texts: passages, TopN: 1})
			if tt.wantOK {
				if err != nil || len(got) != 1 || got[0].Index != 1 {
					t.Fatalf("got %v, %v", got, err)
				}
			} else if k := domain.KindOf(err); err == nil || k != tt.wantKind {
				t.Fatalf("err %v (kind %v), want kind %v", err, k, tt.wantKind)
			}
			if srv.Calls() != tt.wantCalls {
				t.Errorf("%d calls, want %d", srv.Calls(), tt.wantCalls)
			}
		})
	}
}

// TestRerankValidation: what Bedrock would refuse is refused before a request (too many
// passages, no query); texts over Bedrock's 32,000 characters are cut, so Bedrock accepts them;
// a request without SigV4 is refused by the stand-in as Bedrock would.
func TestRerankValidation(t *testing.T) {
	srv, r := standIn(t, "us-west-2", AmazonRerank)
	if _, err := r.Rerank(context.Background(), domain.RerankRequest{Query: "q", Texts: make([]string, MaxSources+1)}); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("too many passages: %v", err)
	}
	if _, err := r.Rerank(context.Background(), domain.RerankRequest{Query: " ", Texts: passages}); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("no query: %v", err)
	}
	if got, err := r.Rerank(context.Background(), domain.RerankRequest{Query: "q"}); err != nil || len(got) != 0 {
		t.Errorf("no passages: %v, %v", got, err)
	}
	if srv.Calls() != 0 {
		t.Errorf("%d calls for requests refused before sending", srv.Calls())
	}
	long := strings.Repeat("é", MaxTextLength+10)
	if _, err := r.Rerank(context.Background(), domain.RerankRequest{Query: long, Texts: []string{long}}); err != nil {
		t.Errorf("long texts: %v", err)
	}
	if n := len([]rune(*srv.Last().Sources[0].InlineDocumentSource.TextDocument.Text)); n != MaxTextLength {
		t.Errorf("source sent with %d characters, want %d", n, MaxTextLength)
	}
	resp, err := http.Post(strings.TrimSuffix(hsURL(t, srv), "/")+"/rerank", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "MissingAuthenticationTokenException") {
		t.Errorf("unsigned: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
}

// hsURL serves srv once more for a raw request.
func hsURL(t *testing.T, srv *bedrockrerank.Server) string {
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// fault is a Bedrock error answer of the stand-in.
func fault(status int, typ, msg string) bedrockrerank.Fault {
	return bedrockrerank.Fault{Status: status, Type: typ, Message: msg}
}

// TestModels: the default first, then the other models the Region offers (not Amazon Rerank in
// us-east-1).
func TestModels(t *testing.T) {
	for _, tt := range []struct {
		region, model string
		want          []string
	}{
		{"us-west-2", AmazonRerank, []string{AmazonRerank, CohereRerank}},
		{"us-west-2", CohereRerank, []string{CohereRerank, AmazonRerank}},
		{"us-east-1", CohereRerank, []string{CohereRerank}},
	} {
		r, err := New(nil, Options{Region: tt.region, Model: tt.model})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, r.Models()); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.region, tt.model, diff)
		}
	}
	if _, err := New(nil, Options{Region: "us-west-2"}); err == nil {
		t.Error("no default model accepted")
	}
}

// TestModelARN: the partition follows the Region.
func TestModelARN(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2":     "arn:aws:bedrock:us-west-2::foundation-model/m",
		"cn-north-1":    "arn:aws-cn:bedrock:cn-north-1::foundation-model/m",
		"us-gov-west-1": "arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/m",
	} {
		if got := ModelARN(region, "m"); got != want {
			t.Errorf("%s: %s, want %s", region, got, want)
		}
	}
}
