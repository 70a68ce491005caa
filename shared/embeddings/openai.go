package embeddings

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/openai"
)

// Batch limits of one OpenAI-compatible request.
const (
	// maxBatchInputs is OpenAI's limit on the inputs of one request.
	maxBatchInputs = 2048
	// maxBatchTokens is OpenAI's limit on the tokens summed over one request's inputs, counted
	// with estimateTokens (an upper bound, so a batch never passes it).
	maxBatchTokens = 300_000
	// maxBatchFloats bounds the numbers one response carries (about 20 bytes each as JSON), so
	// that a batch of large vectors does not need hundreds of megabytes: 682 inputs of 1,536
	// dimensions, 341 of 3,072.
	maxBatchFloats  = 1 << 20
	maxResponseBody = 64 << 20
)

// openaiEmbedder embeds with an OpenAI-compatible POST {base}/embeddings, in batches.
type openaiEmbedder struct {
	model model
	dims  int
	opts  *Options
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

func (e *openaiEmbedder) Dimensions() int        { return e.dims }
func (e *openaiEmbedder) MaxTokens() int         { return e.model.maxTokens }
func (e *openaiEmbedder) Tokens(text string) int { return estimateTokens(text) }
func (e *openaiEmbedder) Name() string           { return e.model.slug }

// Embed sends texts in as few batches as the limits allow, one after the other, and returns the
// vectors in the order of texts. A server answering with vectors of another size than the
// configured dimensions is an invalid-request error naming both; vectors that are not of unit
// length are normalised.
func (e *openaiEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := e.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also says how many tokens the server counted (usage.prompt_tokens
// of each batch, summed; estimated for a batch whose answer does not say): the tokens billed.
func (e *openaiEmbedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	for i, t := range texts {
		if t == "" {
			return nil, 0, errEmpty(i)
		}
	}
	out := make([][]float32, len(texts))
	tokens := 0
	for start := 0; start < len(texts); {
		end := e.batchEnd(texts, start)
		vecs, n, err := e.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, tokens, err
		}
		copy(out[start:end], vecs)
		tokens += n
		start = end
	}
	return out, tokens, nil
}

// batchEnd returns the end of the batch that starts at texts[start]: as many texts as fit all
// the limits, and at least one.
func (e *openaiEmbedder) batchEnd(texts []string, start int) int {
	limit := min(maxBatchInputs, max(1, maxBatchFloats/e.dims))
	end, tokens := start, 0
	for end < len(texts) && end-start < limit {
		t := estimateTokens(texts[end])
		if end > start && tokens+t > maxBatchTokens {
			break
		}
		tokens += t
		end++
	}
	return end
}

// embedBatch makes one request, retrying rate limits (429) and server errors (5xx) with backoff,
// honouring Retry-After, while the deadline allows; it returns the vectors and the tokens the
// server counted (estimated when its answer has no usage).
func (e *openaiEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, int, error) {
	req := embeddingsRequest{Model: e.model.id, Input: texts, EncodingFormat: "float"}
	if strings.HasPrefix(e.model.id, "text-embedding-3-") {
		req.Dimensions = e.dims // the only models that take the parameter; others reject it
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, 0, wrapf(err, "openai embeddings: encode request")
	}
	var (
		vecs      [][]float32
		tokens    int
		throttled error // the last failed answer, for a deadline that ends a later attempt
	)
	err = backoff.Retry(ctx, e.opts.policy(), func(int) (time.Duration, bool, error) {
		status, header, body, err := e.post(ctx, payload)
		if err != nil {
			return 0, false, deadlineError(ctx, throttled, err, "openai embeddings "+e.model.id)
		}
		if status == http.StatusOK {
			vecs, tokens, err = e.parse(body, len(texts))
			return 0, false, err
		}
		throttled = e.failure(status, body)
		wait, _ := openai.RetryAfter(header)
		return wait, openai.Retryable(status, body), throttled
	})
	if err != nil {
		if canceled(ctx) {
			return nil, 0, wrapf(ctx.Err(), "openai embeddings %s", e.model.id)
		}
		return nil, 0, err
	}
	if tokens <= 0 {
		for _, t := range texts {
			tokens += estimateTokens(t)
		}
	}
	return vecs, tokens, nil
}

// post sends one embeddings request and reads the response, bounded in size.
func (e *openaiEmbedder) post(ctx context.Context, payload []byte) (int, http.Header, []byte, error) {
	return openai.Post(ctx, e.opts.OpenAI.HTTPClient, e.opts.OpenAI.BaseURL+"/embeddings", e.opts.OpenAI.APIKey, payload, maxResponseBody)
}

// parse reads n vectors, putting each at its index, and the tokens the answer's usage counts.
func (e *openaiEmbedder) parse(body []byte, n int) ([][]float32, int, error) {
	var resp embeddingsResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, 0, wrapf(err, "openai embeddings %s: decode response", e.model.id)
	}
	if len(resp.Data) != n {
		return nil, 0, fmt.Errorf("openai embeddings %s: %d vectors for %d inputs", e.model.id, len(resp.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, 0, fmt.Errorf("openai embeddings %s: index %d out of range or repeated", e.model.id, d.Index)
		}
		if len(d.Embedding) != e.dims {
			return nil, 0, mismatch(e.model.id, len(d.Embedding), e.dims)
		}
		normalize(d.Embedding)
		out[d.Index] = d.Embedding
	}
	return out, resp.Usage.PromptTokens, nil
}

// failure translates an error answer into a domain error. Clients see at most a bounded,
// key-free excerpt of the server's message; the cause keeps one of the body for the log.
func (e *openaiEmbedder) failure(status int, body []byte) error {
	key := e.opts.OpenAI.APIKey
	apiErr := openai.DecodeError(body)
	cause := fmt.Errorf("openai embeddings %s: HTTP %d: %s", e.model.id, status, safeMessage(string(body), key))
	switch {
	case status == http.StatusTooManyRequests && apiErr.Error.Code == "insufficient_quota":
		return domain.Wrap(domain.KindInternal, cause, "The embedding provider's quota is exhausted")
	case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
		return overloaded(cause)
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		// The deployment's credentials are at fault, not the caller's request.
		return domain.Wrap(domain.KindInternal, cause, "The embedding provider rejected the service's credentials")
	case status >= 400 && status < 500:
		msg := safeMessage(apiErr.Error.Message, key)
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", status)
		}
		return rejected(cause, msg)
	}
	return cause
}
