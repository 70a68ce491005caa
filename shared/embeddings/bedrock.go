package embeddings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/awserr"
	"github.com/agentorch/agentorch/shared/backoff"
)

// Invoker is the part of *bedrockruntime.Client the bedrock provider uses.
type Invoker interface {
	InvokeModel(ctx context.Context, params *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

var _ Invoker = (*bedrockruntime.Client)(nil)

// bedrockEmbedder embeds with Amazon Titan Text Embeddings through InvokeModel. The API takes one
// text per call, so Embed runs up to Options.Concurrency calls at a time.
type bedrockEmbedder struct {
	client Invoker
	model  model
	dims   int
	opts   *Options
}

// titanRequest is the InvokeModel body of Titan Text Embeddings: V2 takes dimensions and
// normalize, V1 only the text.
type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions,omitempty"`
	Normalize  bool   `json:"normalize,omitempty"`
}

type titanResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

func (e *bedrockEmbedder) Dimensions() int        { return e.dims }
func (e *bedrockEmbedder) MaxTokens() int         { return e.model.maxTokens }
func (e *bedrockEmbedder) Tokens(text string) int { return estimateTokens(text) }
func (e *bedrockEmbedder) Name() string           { return e.model.slug }

// Embed embeds each text in its own InvokeModel call, at most Options.Concurrency at a time, and
// returns the vectors in the order of texts. The first text that fails for good cancels the
// calls still running, and its error is returned.
func (e *bedrockEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := e.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also says how many tokens Titan counted (the inputTextTokenCount
// of each answer, summed): the tokens billed.
func (e *bedrockEmbedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	for i, t := range texts {
		if t == "" {
			return nil, 0, errEmpty(i)
		}
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, 0, nil
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next   atomic.Int64
		tokens atomic.Int64
		wg     sync.WaitGroup
		once   sync.Once
		first  error
	)
	for range min(e.opts.Concurrency, len(texts)) {
		wg.Go(func() {
			for callCtx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(texts) {
					return
				}
				v, n, err := e.embedOne(callCtx, texts[i])
				if err != nil {
					once.Do(func() { first = wrapf(err, "text %d", i) })
					cancel()
					return
				}
				out[i] = v
				tokens.Add(int64(n))
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, int(tokens.Load()), first
	}
	if err := ctx.Err(); err != nil {
		return nil, int(tokens.Load()), wrapf(err, "bedrock embeddings %s", e.model.id)
	}
	return out, int(tokens.Load()), nil
}

// embedOne makes one InvokeModel call, retrying throttling and server errors with backoff while
// the deadline allows, and returns the vector and the tokens Titan counted (estimated when the
// answer does not say). The adapter owns retries: the SDK's retryer is off for its calls, since
// it would sleep into the deadline.
func (e *bedrockEmbedder) embedOne(ctx context.Context, text string) ([]float32, int, error) {
	req := titanRequest{InputText: text}
	if e.model.id == ModelTitanV2 {
		req.Dimensions, req.Normalize = e.dims, true
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, 0, wrapf(err, "bedrock embeddings: encode request")
	}
	in := &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(e.model.id),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	}
	noSDKRetry := func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }
	var (
		out       *bedrockruntime.InvokeModelOutput
		throttled error // the last busy answer, for a deadline that ends a later attempt
	)
	err = backoff.Retry(ctx, e.opts.policy(), func(int) (time.Duration, bool, error) {
		var err error
		out, err = e.client.InvokeModel(ctx, in, noSDKRetry)
		switch {
		case err == nil:
			return 0, false, nil
		case ctx.Err() != nil:
			return 0, false, deadlineError(ctx, throttled, err, "bedrock embeddings "+e.model.id)
		}
		busy, retry := bedrockRetryable(err)
		if awserr.Dropped(err) {
			busy, retry = false, true
		}
		if busy {
			throttled = err
			return 0, retry, overloaded(err)
		}
		return 0, retry, bedrockError(err, e.model.id)
	})
	if err != nil {
		switch {
		case canceled(ctx):
			return nil, 0, wrapf(ctx.Err(), "bedrock embeddings %s", e.model.id)
		case errors.Is(err, backoff.ErrDeadline):
			return nil, 0, overloaded(err) // even when the last answer was a server error
		}
		return nil, 0, err
	}
	v, n, err := e.parse(out.Body)
	if err == nil && n <= 0 {
		n = estimateTokens(text)
	}
	return v, n, err
}

func (e *bedrockEmbedder) parse(body []byte) ([]float32, int, error) {
	var resp titanResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, 0, wrapf(err, "bedrock embeddings %s: decode response", e.model.id)
	}
	if len(resp.Embedding) != e.dims {
		return nil, 0, fmt.Errorf("bedrock embeddings %s: got %d dimensions, want %d", e.model.id, len(resp.Embedding), e.dims)
	}
	normalize(resp.Embedding)
	return resp.Embedding, resp.InputTextTokenCount, nil
}

// bedrockRetryable reports whether a later attempt may succeed (retry) and whether the failure
// is the service being busy (busy): throttling, 429 and 5xx answers.
func bedrockRetryable(err error) (busy, retry bool) {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException", "TooManyRequestsException":
			return true, true
		case "InternalServerException":
			return false, true
		}
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		switch code := status.HTTPStatusCode(); {
		case code == 429, code == 503:
			return true, true
		case code >= 500:
			return false, true
		}
	}
	return false, false
}

// bedrockError translates a final SDK error into a domain error.
func bedrockError(err error, modelID string) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ValidationException":
			return rejected(err, safeMessage(api.ErrorMessage(), ""))
		case "ServiceQuotaExceededException", "ModelTimeoutException":
			return overloaded(err)
		}
	}
	// Access denied, a model not enabled in the Region, a persistent server error: the
	// deployment's problem, logged in full and shown to clients as an internal error.
	return fmt.Errorf("bedrock embeddings %s: %w", modelID, err)
}
