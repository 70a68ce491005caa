// Package bedrock adapts Amazon Bedrock Runtime's Converse API to domain.Model: it maps the
// runtime's turns, tools and inference settings to a ConverseInput, maps the ConverseOutput back,
// retries throttling within the context deadline and translates SDK errors to domain kinds.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/awserr"
	"github.com/agentorch/agentorch/shared/backoff"
	"github.com/agentorch/agentorch/shared/domain"
)

// DefaultModel is the model used when neither the request nor Options name one (the catalog's
// default, domain.DefaultBedrockModel: Claude Haiku 4.5 through its global inference profile).
const DefaultModel = domain.DefaultBedrockModel

// Defaults for Options left at their zero value.
const (
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 250 * time.Millisecond
	maxDelay          = 10 * time.Second
)

// Converser is the part of *bedrockruntime.Client the adapter uses; tests and wrappers can
// provide their own.
type Converser interface {
	Converse(ctx context.Context, params *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// Options configures a Model.
type Options struct {
	// DefaultModel is the model ID or inference profile used when a request names none;
	// empty means DefaultModel.
	DefaultModel string
	// MaxRetries bounds the retries after the first attempt; 0 means DefaultMaxRetries and a
	// negative value disables retries.
	MaxRetries int
	// BaseDelay is the first backoff delay, doubled on each retry; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
}

// Model is a domain.Model backed by Bedrock Converse.
type Model struct {
	client Converser
	opts   Options
}

var (
	_ Converser    = (*bedrockruntime.Client)(nil)
	_ domain.Model = (*Model)(nil)
)

// New returns a Model calling client. The adapter owns retries (backoff.Retry): it turns the
// SDK's retryer off for its calls so attempts do not multiply and no backoff outlives the
// context deadline, which the SDK's retryer would sleep into.
func New(client Converser, opts Options) *Model {
	if opts.DefaultModel == "" {
		opts.DefaultModel = DefaultModel
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
	return &Model{client: client, opts: opts}
}

// DefaultModel is the model a request that names none is made to: the chat span's
// gen_ai.request.model (docs/observability.md).
func (m *Model) DefaultModel() string { return m.opts.DefaultModel }

// Converse sends req to Bedrock and returns the model's answer. Throttling and unavailability
// are retried with exponential backoff and jitter while the deadline allows; when they persist
// the error is of kind overloaded. Requests Bedrock rejects as invalid are of kind invalid.
func (m *Model) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if n := len(req.Turns); n > 0 && req.Turns[n-1].Role == domain.RoleAssistant {
		// In a graph, a later node sees earlier nodes' output as the last (assistant) turn. Claude
		// on Bedrock would take that as a prefill to continue, so the node is asked to answer.
		req.Turns = append(req.Turns[:n:n], domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "Continue with your part of the task."}}})
	}
	in, err := buildInput(req, m.opts.DefaultModel)
	if err != nil {
		return nil, err
	}
	noSDKRetry := func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }
	policy := backoff.Policy{MaxRetries: m.opts.MaxRetries, BaseDelay: m.opts.BaseDelay, MaxDelay: maxDelay}
	var out *bedrockruntime.ConverseOutput
	err = backoff.Retry(ctx, policy, func(int) (time.Duration, bool, error) {
		var err error
		out, err = m.client.Converse(ctx, in, noSDKRetry)
		switch {
		case err == nil:
			return 0, false, nil
		case retryable(err):
			return 0, true, domain.Wrap(domain.KindOverloaded, err, "The model is busy; retry shortly")
		case ctx.Err() == nil && awserr.Dropped(err):
			return 0, true, classify(err, *in.ModelId)
		}
		return 0, false, classify(err, *in.ModelId)
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, fmt.Errorf("bedrock converse %s: %w", *in.ModelId, ctx.Err())
		}
		return nil, err
	}
	resp, err := convertOutput(out)
	if err != nil {
		return nil, err
	}
	if text := resp.Text(); text != "" && req.OnText != nil {
		req.OnText(text)
	}
	return resp, nil
}

// retryable reports errors that a later attempt may not meet.
func retryable(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode() {
	case "ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException":
		return true
	}
	return false
}

// classify translates a final SDK error into a domain error.
func classify(err error, modelID string) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ValidationException":
			return domain.Wrap(domain.KindInvalid, err, "The model rejected the request: "+awserr.Message(api.ErrorMessage()))
		case "ServiceQuotaExceededException":
			return domain.Wrap(domain.KindOverloaded, err, "The model's quota is exhausted; retry later")
		case "ModelTimeoutException":
			return domain.Wrap(domain.KindOverloaded, err, "The model took too long to answer; retry shortly")
		}
	}
	return fmt.Errorf("bedrock converse %s: %w", modelID, err)
}
