// Package embeddings turns text into vectors for the knowledge bases. It holds the providers of
// a knowledge base's embedding_config and a catalogue of what each offers:
//
//   - local: Universal Sentence Encoder lite run in-process by shared/localembed (model
//     use-lite, 512 dimensions, 128 tokens), the default of the local stack. Its loader comes
//     from shared/embeddings/local through Options.Local, so that builds which do not offer it
//     (the Lambda functions) do not link the model's code;
//   - bedrock: Amazon Titan Text Embeddings V2 through Bedrock InvokeModel (256, 512 or 1,024
//     dimensions, 8,192 tokens), the default on AWS, one text per call and calls run concurrently;
//   - openai: any OpenAI-compatible POST {base}/embeddings, texts sent in batches.
//
// Providers.Resolve fills a configuration's defaults and reports what a provider does not offer
// as field errors under embedding_config.*; Providers.Embedder builds the embedder a knowledge
// base's chunks and queries are embedded with. Every vector returned has unit length, so a dot
// product is a cosine. The package implements knowledge.Embedders and knowledge.Embedder in
// domain terms without importing the feature.
package embeddings

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Embedder is what every provider returns: the port the knowledge feature embeds with, declared
// once in domain.
type Embedder = domain.Embedder

// Defaults for Options left at their zero value.
const (
	DefaultMaxRetries  = 6
	DefaultBaseDelay   = 250 * time.Millisecond
	DefaultConcurrency = 8
	maxDelay           = 10 * time.Second
)

// Options says which providers a deployment offers and how to reach them.
type Options struct {
	// DefaultProvider is used when embedding_config names no provider: local on the local
	// stack, bedrock on AWS; empty means local. It must be offered.
	DefaultProvider string
	// Local loads the local provider's model (local.Loader of shared/embeddings/local, over the
	// directory its files are cached in). Nil: local is not offered.
	Local LocalLoader
	// Bedrock is the bedrock-runtime client (*bedrockruntime.Client). Nil: bedrock is not offered.
	Bedrock Invoker
	// OpenAI is the OpenAI-compatible server. An empty BaseURL: openai is not offered.
	OpenAI OpenAIOptions
	// MaxRetries bounds the retries of one call after throttling or a server error; 0 means
	// DefaultMaxRetries and a negative value disables retries.
	MaxRetries int
	// BaseDelay is the first backoff delay, doubled on each retry; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
	// Concurrency bounds the Bedrock calls one Embed has in flight; 0 means DefaultConcurrency.
	Concurrency int
}

// LocalLoader loads an in-process model of the local provider by its id (ModelUSEGlove,
// ModelUSELite). Providers calls it on the first use of each model, one call at a time, and keeps
// the first embedder it returns; a failed load is tried again on the next use.
type LocalLoader func(ctx context.Context, model string) (Embedder, error)

// OpenAIOptions locates an OpenAI-compatible server.
type OpenAIOptions struct {
	// BaseURL is the API root that /embeddings is appended to, as for chat completions
	// (shared/openai): https://api.openai.com/v1, http://localhost:11434/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers need none).
	APIKey string
	// HTTPClient sends the requests; nil means http.DefaultClient. The context bounds each call.
	HTTPClient *http.Client
}

// Providers resolves embedding configurations and builds their embedders; it implements
// knowledge.Embedders. It is safe for concurrent use and loads the local model once, on first use.
type Providers struct {
	opts   Options
	local  chan struct{}       // a lock that waiters can leave when their context ends
	models map[string]Embedder // the local models loaded, by id
}

// New returns the providers opts offers. It fails when the default provider is not one of them.
func New(opts Options) (*Providers, error) {
	opts.DefaultProvider = strings.ToLower(strings.TrimSpace(opts.DefaultProvider))
	if opts.DefaultProvider == "" {
		opts.DefaultProvider = ProviderLocal
	}
	opts.OpenAI.BaseURL = strings.TrimRight(opts.OpenAI.BaseURL, "/")
	if opts.OpenAI.HTTPClient == nil {
		opts.OpenAI.HTTPClient = http.DefaultClient
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
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	p := &Providers{opts: opts, local: make(chan struct{}, 1), models: map[string]Embedder{}}
	if !p.offers(opts.DefaultProvider) {
		return nil, fmt.Errorf("embeddings: the default provider %q is not offered (offered: %s)", opts.DefaultProvider, strings.Join(p.Offered(), ", "))
	}
	return p, nil
}

// Offered lists the providers this deployment offers, in catalogue order.
func (p *Providers) Offered() []string {
	var names []string
	for _, pr := range catalogue {
		if p.offers(pr.name) {
			names = append(names, pr.name)
		}
	}
	return names
}

func (p *Providers) offers(name string) bool {
	switch name {
	case ProviderLocal:
		return p.opts.Local != nil
	case ProviderBedrock:
		return p.opts.Bedrock != nil
	case ProviderOpenAI:
		return p.opts.OpenAI.BaseURL != ""
	}
	return false
}

// Resolve returns the configuration cfg stands for, with the default provider, model and
// dimensions filled in, or the fields of cfg that this deployment cannot honour.
func (p *Providers) Resolve(cfg domain.Embedding) (domain.Embedding, []domain.FieldError) {
	eff, _, fields := p.resolve(cfg)
	return eff, fields
}

func (p *Providers) resolve(cfg domain.Embedding) (domain.Embedding, model, []domain.FieldError) {
	const (
		fProvider = "embedding_config.provider"
		fModel    = "embedding_config.model"
		fDims     = "embedding_config.dimensions"
	)
	offered := strings.Join(p.Offered(), ", ")
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if name == "" {
		name = p.opts.DefaultProvider
	}
	var prov provider
	for _, pr := range catalogue {
		if pr.name == name {
			prov = pr
		}
	}
	switch {
	case foreign[name]:
		return cfg, model{}, fieldErr(fProvider, "provider %q is not offered by this service; offered here: %s", cfg.Provider, offered)
	case prov.name == "":
		return cfg, model{}, fieldErr(fProvider, "unknown provider %q; offered here: %s", cfg.Provider, offered)
	case !p.offers(name) && name == ProviderLocal:
		// A knowledge base made on the local stack, read by a Lambda build (which leaves the
		// local model out).
		return cfg, model{}, fieldErr(fProvider, "provider %q (the in-process development model) is not available in this deployment; offered here: %s", name, offered)
	case !p.offers(name):
		return cfg, model{}, fieldErr(fProvider, "provider %q is not configured on this deployment; offered here: %s", name, offered)
	}

	id := strings.TrimSpace(cfg.Model)
	if id == "" {
		id = prov.models[0].id
	}
	if cfg.Dimensions < 0 {
		return cfg, model{}, fieldErr(fDims, "must be a positive integer, not %d", cfg.Dimensions)
	}
	m, known := prov.model(id)
	switch {
	case !known && !prov.anyModel:
		return cfg, model{}, fieldErr(fModel, "model %q is not offered by provider %s; offered: %s", id, name, prov.modelIDs())
	case !known && cfg.Dimensions == 0:
		return cfg, model{}, fieldErr(fDims, "required for model %q, which this service does not know: give the number of dimensions the model returns", id)
	case !known && cfg.Dimensions > maxIndexDimensions:
		return cfg, model{}, fieldErr(fDims, "must be at most %d (the vector index's limit), not %d", maxIndexDimensions, cfg.Dimensions)
	case !known:
		m = unknownModel(id, cfg.Dimensions)
	}
	dims := cfg.Dimensions
	if dims == 0 {
		dims = m.defaultDims
	}
	if !m.offers(dims) {
		return cfg, model{}, fieldErr(fDims, "model %s offers %s dimensions, not %d", id, m.offered(), dims)
	}
	return domain.Embedding{Provider: name, Model: id, Dimensions: dims}, m, nil
}

func fieldErr(field, format string, args ...any) []domain.FieldError {
	return []domain.FieldError{{Field: field, Message: fmt.Sprintf(format, args...)}}
}

// Embedder returns the embedder of cfg (resolved first: a configuration Resolve rejects is an
// invalid-request error). For the local provider the first call loads the model (Options.Local).
func (p *Providers) Embedder(ctx context.Context, cfg domain.Embedding) (Embedder, error) {
	eff, m, fields := p.resolve(cfg)
	if len(fields) > 0 {
		return nil, domain.Invalid(fields)
	}
	switch eff.Provider {
	case ProviderLocal:
		return p.localModel(ctx, eff.Model)
	case ProviderBedrock:
		return &bedrockEmbedder{client: p.opts.Bedrock, model: m, dims: eff.Dimensions, opts: &p.opts}, nil
	default:
		return &openaiEmbedder{model: m, dims: eff.Dimensions, opts: &p.opts}, nil
	}
}

// localModel loads each local model once. A failed load is not remembered: the next call tries
// again (a fetch that ran out of time may succeed later).
func (p *Providers) localModel(ctx context.Context, id string) (Embedder, error) {
	select {
	case p.local <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("local embedding model: %w", ctx.Err())
	}
	defer func() { <-p.local }()
	if m := p.models[id]; m != nil {
		return m, nil
	}
	m, err := p.opts.Local(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("local embedding model %s: %w", id, err)
	}
	p.models[id] = m
	return m, nil
}

// errEmpty is the error for an empty text, which the hosted models refuse.
func errEmpty(i int) error {
	return domain.Errorf(domain.KindInvalid, "Text %d to embed is empty", i)
}

// deadlineError is the error of a call that ctx ended (err is the call's own error): the
// caller's cancellation as such; a deadline that ran out while retrying after busy answers
// (throttled non-nil) as that overload; any other deadline as a timeout of the call.
func deadlineError(ctx context.Context, throttled, err error, what string) error {
	switch {
	case ctx.Err() == nil:
		return wrapf(err, "%s", what)
	case canceled(ctx):
		return wrapf(ctx.Err(), "%s", what)
	case throttled != nil && domain.KindOf(throttled) != domain.KindInternal:
		return throttled
	case throttled != nil:
		return overloaded(fmt.Errorf("%s: the deadline passed while retrying: %w", what, throttled))
	}
	return wrapf(err, "%s", what)
}

// canceled reports whether err is the caller giving up rather than a provider failing.
func canceled(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
