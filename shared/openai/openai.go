// Package openai adapts OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp
// server; anything taking a bearer key at {BaseURL}/chat/completions) to domain.Model over plain
// net/http. It retries rate limits and server errors within the context deadline and translates
// failures to domain kinds; the API key is sent only in the Authorization header and never
// appears in errors.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// Defaults for Options left at their zero value. The default model accepts max_tokens and
// temperature, which OpenAI's reasoning models reject.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultModel      = domain.DefaultOpenAIModel
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 250 * time.Millisecond
)

const (
	maxDelay        = 10 * time.Second
	maxResponseBody = 32 << 20 // a chat completion is far smaller; this only bounds a broken server
	maxErrorBody    = 64 << 10
	maxMessageRunes = 300
)

// Options configures a Model.
type Options struct {
	// BaseURL is the API root that /chat/completions is appended to, such as
	// https://api.openai.com/v1 or http://localhost:11434/v1; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers need none).
	APIKey string
	// DefaultModel is used when a request names no model; empty means DefaultModel.
	DefaultModel string
	// HTTPClient sends the requests; nil means http.DefaultClient. The context bounds each call.
	HTTPClient *http.Client
	// MaxRetries bounds the retries after the first attempt; 0 means DefaultMaxRetries and a
	// negative value disables retries.
	MaxRetries int
	// BaseDelay is the first backoff delay, doubled on each retry; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
}

// Model is a domain.Model backed by an OpenAI-compatible chat completions endpoint.
type Model struct {
	opts Options
}

var _ domain.Model = (*Model)(nil)

// New returns a Model for opts, with zero fields set to their defaults.
func New(opts Options) *Model {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.DefaultModel == "" {
		opts.DefaultModel = DefaultModel
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
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
	return &Model{opts: opts}
}

// DefaultModel is the model a request that names none is made to: the chat span's
// gen_ai.request.model (docs/observability.md).
func (m *Model) DefaultModel() string { return m.opts.DefaultModel }

// Converse sends req as one chat completion and returns the model's answer. Rate limits (429)
// and server errors (5xx) are retried with backoff, honouring Retry-After, while the deadline
// allows; a persistent 429 or 503 is of kind overloaded, a rejected request of kind invalid.
func (m *Model) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	body, err := buildRequest(req, m.opts.DefaultModel)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai chat completions: encode request: %w", err)
	}
	var resp *domain.ModelResponse
	err = backoff.Retry(ctx, m.policy(), func(int) (time.Duration, bool, error) {
		status, header, respBody, err := m.post(ctx, payload)
		if err != nil {
			return 0, false, fmt.Errorf("openai chat completions %s: %w", body.Model, err)
		}
		if status == http.StatusOK {
			resp, err = parseResponse(respBody)
			return 0, false, err
		}
		wait, _ := RetryAfter(header)
		return wait, Retryable(status, respBody), m.failure(status, respBody)
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, fmt.Errorf("openai chat completions %s: %w", body.Model, ctx.Err())
		}
		return nil, err
	}
	if text := resp.Text(); text != "" && req.OnText != nil {
		req.OnText(text)
	}
	return resp, nil
}

// policy is the retry policy of one call.
func (m *Model) policy() backoff.Policy {
	return backoff.Policy{MaxRetries: m.opts.MaxRetries, BaseDelay: m.opts.BaseDelay, MaxDelay: maxDelay}
}

// post sends one request and reads the response, bounded in size.
func (m *Model) post(ctx context.Context, payload []byte) (int, http.Header, []byte, error) {
	return Post(ctx, m.opts.HTTPClient, m.opts.BaseURL+"/chat/completions", m.opts.APIKey, payload, maxResponseBody)
}

// Post sends one JSON request to url of an OpenAI-compatible server (with a bearer token when
// apiKey is set) and reads the response: at most maxBody bytes of a 200, at most 64 KiB of an
// error. The chat model and the embeddings adapter share it.
func Post(ctx context.Context, client *http.Client, url, apiKey string, payload []byte, maxBody int64) (int, http.Header, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return 0, nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }() // a read error has already been returned
	limit := maxBody
	if resp.StatusCode != http.StatusOK {
		limit = maxErrorBody
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// APIError is the error envelope OpenAI-compatible servers answer with (chat completions and
// embeddings alike).
type APIError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"` // a string at OpenAI, a number at some servers
	} `json:"error"`
}

// DecodeError reads an error envelope; a body that is not one leaves it empty.
func DecodeError(body []byte) APIError {
	var e APIError
	_ = json.Unmarshal(body, &e) // a non-JSON body leaves it empty
	return e
}

// Retryable reports whether a later attempt may meet another answer than this error answer. An
// exhausted quota is a 429 that no wait cures.
func Retryable(status int, body []byte) bool {
	switch {
	case status == http.StatusTooManyRequests:
		return DecodeError(body).Error.Code != "insufficient_quota"
	case status >= 500:
		return true
	}
	return false
}

// failure translates an error answer into a domain error. Client messages carry at most a
// bounded, key-free excerpt of the provider's message; the cause keeps a bounded excerpt of the
// body for the log, also without the key.
func (m *Model) failure(status int, body []byte) error {
	e := DecodeError(body)
	cause := fmt.Errorf("openai chat completions: HTTP %d: %s", status, m.redact(string(body), 512))
	switch {
	case status == http.StatusTooManyRequests && e.Error.Code == "insufficient_quota":
		return domain.Wrap(domain.KindInternal, cause, "The model provider's quota is exhausted")
	case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
		return domain.Wrap(domain.KindOverloaded, cause, "The model is busy; retry shortly")
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		// The deployment's credentials are at fault, not the caller's request.
		return domain.Wrap(domain.KindInternal, cause, "The model provider rejected the service's credentials")
	case status >= 400 && status < 500:
		msg := m.redact(e.Error.Message, maxMessageRunes)
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", status)
		}
		return domain.Wrap(domain.KindInvalid, cause, "The model rejected the request: "+msg)
	}
	return cause
}

// redact removes the API key and control characters from s and bounds it to n runes.
func (m *Model) redact(s string, n int) string {
	if m.opts.APIKey != "" {
		s = strings.ReplaceAll(s, m.opts.APIKey, "[redacted]")
	}
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// RetryAfter reads the server's requested wait: retry-after-ms (OpenAI) or Retry-After in
// seconds or as an HTTP date.
func RetryAfter(h http.Header) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}
