// Package rerank adapts Amazon Bedrock's Rerank API (bedrock-agent-runtime `Rerank`, the
// reranker Bedrock Knowledge Bases use) to domain.Reranker: one request per reranking, the
// model named by its foundation-model ARN in the adapter's Region, throttling retried within
// the context deadline, SDK errors translated to domain kinds. The wire format and its sources
// are in docs/wire-formats/bedrock-rerank.md.
package rerank

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/awserr"
	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// The rerank models Bedrock offers (user guide, "Supported Regions and models for reranking"):
// Amazon Rerank 1.0 (not in us-east-1) and Cohere Rerank 3.5.
const (
	AmazonRerank = "amazon.rerank-v1:0"
	CohereRerank = "cohere.rerank-v3-5:0"
)

// notOffered are the Regions that do not offer a model Bedrock otherwise does (user guide: Amazon
// Rerank 1.0 is not offered in us-east-1), so that naming it there is a 400 listing the others.
var notOffered = map[string][]string{AmazonRerank: {"us-east-1"}}

// Limits of the service model (bedrock-agent-runtime 2023-07-26).
const (
	// MaxSources is the most sources one request may carry.
	MaxSources = 1000
	// MaxTextLength bounds the query's and each source's text, in characters.
	MaxTextLength = 32000
)

// Defaults for Options left at their zero value.
const (
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 200 * time.Millisecond
	maxDelay          = 5 * time.Second
)

// Client is the part of *bedrockagentruntime.Client the adapter uses.
type Client interface {
	Rerank(ctx context.Context, params *bedrockagentruntime.RerankInput, optFns ...func(*bedrockagentruntime.Options)) (*bedrockagentruntime.RerankOutput, error)
}

var (
	_ Client          = (*bedrockagentruntime.Client)(nil)
	_ domain.Reranker = (*Reranker)(nil)
)

// Options configure a Reranker.
type Options struct {
	// Region is where the models are invoked: their ARNs name it. Required.
	Region string
	// Model is the default model id (AmazonRerank, CohereRerank, or another Bedrock rerank
	// model's id). Required.
	Model string
	// MaxRetries bounds the retries after the first attempt; 0 means DefaultMaxRetries and a
	// negative value disables retries.
	MaxRetries int
	// BaseDelay is the first backoff delay, doubled on each retry; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
}

// Reranker is a domain.Reranker backed by Bedrock's Rerank API.
type Reranker struct {
	client Client
	opts   Options
	models []string
}

// New returns a Reranker calling client (its Region must be opts.Region). The adapter owns
// retries, as shared/bedrock's does: the SDK's retryer is off for its calls.
func New(client Client, opts Options) (*Reranker, error) {
	if opts.Region == "" || opts.Model == "" {
		return nil, errors.New("rerank: a Region and a default model are required")
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = DefaultBaseDelay
	}
	models := []string{opts.Model}
	for _, m := range []string{CohereRerank, AmazonRerank} {
		if m != opts.Model && !slices.Contains(notOffered[m], opts.Region) {
			models = append(models, m)
		}
	}
	return &Reranker{client: client, opts: opts, models: models}, nil
}

// Models are the default model and Bedrock's other rerank models that the Region offers.
func (r *Reranker) Models() []string { return r.models }

// ModelARN is the foundation-model ARN of a model id in region ("arn:aws:bedrock:us-west-2::
// foundation-model/amazon.rerank-v1:0"), in the partition the Region is of.
func ModelARN(region, model string) string {
	partition := "aws"
	switch {
	case strings.HasPrefix(region, "cn-"):
		partition = "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		partition = "aws-us-gov"
	}
	return "arn:" + partition + ":bedrock:" + region + "::foundation-model/" + model
}

// Rerank sends one Rerank request: the query and texts (each cut to MaxTextLength characters;
// at most MaxSources texts) with numberOfResults TopN, and returns the results best first.
// Throttling and unavailability are retried with backoff while the deadline allows, then are
// of kind overloaded; a request Bedrock refuses is invalid; access denied, an unknown model or
// a persistent server error is the deployment's problem (an internal error, logged in full).
func (r *Reranker) Rerank(ctx context.Context, req domain.RerankRequest) ([]domain.Relevance, error) {
	model := req.Model
	if model == "" {
		model = r.opts.Model
	}
	switch {
	case len(req.Texts) == 0:
		return []domain.Relevance{}, nil
	case len(req.Texts) > MaxSources:
		return nil, domain.Errorf(domain.KindInvalid, "A reranking takes at most %d passages, not %d", MaxSources, len(req.Texts))
	case strings.TrimSpace(req.Query) == "":
		return nil, domain.Errorf(domain.KindInvalid, "A reranking needs a query")
	}
	topN := req.TopN
	if topN <= 0 || topN > len(req.Texts) {
		topN = len(req.Texts)
	}
	in := &bedrockagentruntime.RerankInput{
		Queries: []types.RerankQuery{{Type: types.RerankQueryContentTypeText, TextQuery: &types.RerankTextDocument{Text: aws.String(cut(req.Query))}}},
		Sources: make([]types.RerankSource, len(req.Texts)),
		RerankingConfiguration: &types.RerankingConfiguration{
			Type: types.RerankingConfigurationTypeBedrockRerankingModel,
			BedrockRerankingConfiguration: &types.BedrockRerankingConfiguration{
				NumberOfResults:    aws.Int32(int32(topN)),
				ModelConfiguration: &types.BedrockRerankingModelConfiguration{ModelArn: aws.String(ModelARN(r.opts.Region, model))},
			},
		},
	}
	for i, t := range req.Texts {
		if strings.TrimSpace(t) == "" {
			t = "-" // Bedrock refuses an empty text; an empty passage is relevant to nothing
		}
		in.Sources[i] = types.RerankSource{Type: types.RerankSourceTypeInline,
			InlineDocumentSource: &types.RerankDocument{Type: types.RerankDocumentTypeText, TextDocument: &types.RerankTextDocument{Text: aws.String(cut(t))}}}
	}
	noSDKRetry := func(o *bedrockagentruntime.Options) { o.Retryer = aws.NopRetryer{} }
	policy := backoff.Policy{MaxRetries: r.opts.MaxRetries, BaseDelay: r.opts.BaseDelay, MaxDelay: maxDelay}
	var out *bedrockagentruntime.RerankOutput
	err := backoff.Retry(ctx, policy, func(int) (time.Duration, bool, error) {
		var err error
		out, err = r.client.Rerank(ctx, in, noSDKRetry)
		switch busy, again := retryable(err); {
		case err == nil:
			return 0, false, nil
		case busy:
			return 0, true, domain.Wrap(domain.KindOverloaded, err, "The reranker is busy; retry shortly")
		case again || (ctx.Err() == nil && awserr.Dropped(err)):
			return 0, true, classify(err, model)
		}
		return 0, false, classify(err, model)
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, fmt.Errorf("bedrock rerank %s: %w", model, ctx.Err())
		}
		return nil, err
	}
	res := make([]domain.Relevance, 0, len(out.Results))
	for _, x := range out.Results {
		if x.Index == nil || x.RelevanceScore == nil || int(*x.Index) >= len(req.Texts) || *x.Index < 0 {
			return nil, fmt.Errorf("bedrock rerank %s: a result without a valid index and score", model)
		}
		res = append(res, domain.Relevance{Index: int(*x.Index), Score: float64(*x.RelevanceScore)})
	}
	return res, nil
}

// cut bounds a text to MaxTextLength characters (the model reads far fewer tokens anyway).
func cut(s string) string {
	if len(s) <= MaxTextLength { // bytes ≥ characters
		return s
	}
	if r := []rune(s); len(r) > MaxTextLength {
		return string(r[:MaxTextLength])
	}
	return s
}

// retryable reports whether a later attempt may succeed (again) and whether the failure is the
// service being busy (busy): throttling, 429, 502, 503; a 500 or 424 may pass on a retry.
func retryable(err error) (busy, again bool) {
	if err == nil {
		return false, false
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ServiceUnavailableException", "BadGatewayException":
			return true, true
		case "InternalServerException", "DependencyFailedException":
			return false, true
		}
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		switch code := status.HTTPStatusCode(); {
		case code == 429, code == 502, code == 503:
			return true, true
		case code >= 500:
			return false, true
		}
	}
	return false, false
}

// classify translates a final SDK error into a domain error.
func classify(err error, model string) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ValidationException":
			return domain.Wrap(domain.KindInvalid, err, "The reranker rejected the request: "+awserr.Message(api.ErrorMessage()))
		case "ServiceQuotaExceededException":
			return domain.Wrap(domain.KindOverloaded, err, "The reranker's quota is exhausted; retry later")
		case "ThrottlingException", "BadGatewayException", "ServiceUnavailableException":
			return domain.Wrap(domain.KindOverloaded, err, "The reranker is busy; retry shortly")
		}
	}
	// AccessDenied (no bedrock:Rerank or bedrock:InvokeModel, model access not granted),
	// ResourceNotFound (the model is not offered in the Region), a persistent 5xx: the
	// deployment's problem, logged in full and shown to clients as an internal error.
	return fmt.Errorf("bedrock rerank %s: %w", model, err)
}
