// Package kb adds the knowledge feature to the core: files, collections, knowledge bases and
// their ingestion, on S3, the ingestion queue, OpenSearch and the embedding providers. Only the
// functions that serve knowledge (and, through run, those that retrieve from it) import it.
package kb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/rerank"
	"github.com/agentorch/agentorch/shared/s3"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/vectors"
)

// serviceKey keeps the application's knowledge service (core.Shared).
type serviceKey struct{}

// Service is the knowledge feature of the application. It is built on first use (no network
// call: the clients connect when used), and every use gets the same service or the same error,
// a configuration the adapters refuse. Where WebhookQueue is configured, a run that ends in any
// of the feature's functions tells the company's webhooks (one SQS send: the ingestion
// functions end runs, the knowledge function settles overdue ones and fails syncs it cannot
// queue, the files and collections functions finalise runs whose last open file they delete).
func Service(a *core.App) (*knowledge.Service, error) {
	return core.Shared(a, serviceKey{}, func() (*knowledge.Service, error) {
		var ev knowledge.Events
		if a.Config.WebhookQueueURL != "" {
			ev = hooks.Deliverer(a)
		}
		return build(a, ev)
	})
}

func build(a *core.App, events knowledge.Events) (*knowledge.Service, error) {
	cfg := a.Config
	index, err := Index(a)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	emb, err := Embedders(a)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	rr, err := reranker(a.AWS, cfg)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	d := knowledge.Deps{
		Store:       a.Store,
		Blobs:       s3.NewStore(s3.NewClient(a.AWS, cfg.S3Endpoint), cfg.Bucket),
		Index:       index,
		Embedders:   emb,
		NewSplitter: newSplitter,
		Events:      events,
		Usage:       a.Store,
		Reranker:    rr,
	}
	if cfg.IngestQueueURL != "" {
		d.Queue = sqs.NewQueue(sqs.NewClient(a.AWS, cfg.SQSEndpoint), cfg.IngestQueueURL)
	}
	return knowledge.New(d, knowledge.Limits{}), nil
}

type indexKey struct{}

// Index is the application's vector index on OpenSearch, built once (core.Shared; no network
// call): the knowledge feature's and memory's (shared/app/mem), whose records live in the same
// indices.
func Index(a *core.App) (*vectors.Store, error) {
	return core.Shared(a, indexKey{}, func() (*vectors.Store, error) {
		// On AWS every request to the domain is SigV4-signed for "es"; the local stand-in takes
		// plain HTTP.
		var signing *aws.Config
		if a.Config.InLambda {
			signing = &a.AWS
		}
		client, err := vectors.NewClient(a.Config.OpenSearchEndpoint, signing, nil)
		if err != nil {
			return nil, err
		}
		return vectors.New(client, vectors.Options{})
	})
}

type embeddersKey struct{}

// Embedders are the application's embedding providers, built once (core.Shared), so that the
// knowledge feature and memory share one local model in a process that serves both (the dev
// server, the tests).
func Embedders(a *core.App) (*embeddings.Providers, error) {
	return core.Shared(a, embeddersKey{}, func() (*embeddings.Providers, error) { return embedders(a.AWS, a.Config) })
}

// embedders builds the embedding providers: local where its model cache is configured (locally)
// and the build links it (not with tag nolocal, the Lambda builds), bedrock on AWS or with
// credentials (its client makes no call until used), openai when a base URL is set; the default
// is EMBEDDING_PROVIDER.
func embedders(awsCfg aws.Config, cfg platform.Config) (*embeddings.Providers, error) {
	opts := embeddings.Options{DefaultProvider: cfg.EmbeddingProvider, Local: localEmbedder(cfg.LocalEmbedDir),
		OpenAI: embeddings.OpenAIOptions{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey}}
	if cfg.InLambda || cfg.EmbeddingProvider == embeddings.ProviderBedrock || platform.HasAWSCredentials() {
		opts.Bedrock = bedrockruntime.NewFromConfig(awsCfg)
	}
	return embeddings.New(opts)
}

// reranker is Bedrock's Rerank API with RERANK_MODEL_ID as the default model, invoked in
// RERANK_REGION (its client makes no call until used); none when no model is configured (the
// local stack), and a search's rerank then answers 400 saying how to configure one.
func reranker(awsCfg aws.Config, cfg platform.Config) (knowledge.Reranker, error) {
	if cfg.RerankModel == "" {
		return nil, nil
	}
	client := bedrockagentruntime.NewFromConfig(awsCfg, func(o *bedrockagentruntime.Options) {
		o.Region = cfg.RerankRegion
		if cfg.RerankEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.RerankEndpoint)
		}
	})
	return rerank.New(client, rerank.Options{Region: cfg.RerankRegion, Model: cfg.RerankModel})
}

// newSplitter is chunk.New as the feature's splitter constructor.
func newSplitter(c domain.Chunking) (knowledge.Splitter, error) {
	s, err := chunk.New(c)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Files builds the files group.
func Files(a *core.App) (*api.Group, error) {
	k, err := Service(a)
	if err != nil {
		return nil, err
	}
	return api.NewFiles(k, a.Options()), nil
}

// Collections builds the collections group.
func Collections(a *core.App) (*api.Group, error) {
	k, err := Service(a)
	if err != nil {
		return nil, err
	}
	return api.NewCollections(k, a.Options()), nil
}

// Knowledge builds the knowledge-bases group.
func Knowledge(a *core.App) (*api.Group, error) {
	k, err := Service(a)
	if err != nil {
		return nil, err
	}
	return api.NewKnowledge(k, a.Options()), nil
}

// Ingest builds the ingestion function's processor: one knowledge-base ingestion job per message;
// a run it ends publishes knowledge_base.ingestion.completed or .failed.
func Ingest(a *core.App) (func(ctx context.Context, body string) error, error) {
	k, err := Service(a)
	if err != nil {
		return nil, err
	}
	return k.ProcessJob, nil
}

// IngestFailed builds the processor of the ingestion dead-letter queue: a job that exhausted its
// deliveries is recorded as a failed datasource with its reason; a run it ends publishes
// knowledge_base.ingestion.completed or .failed.
func IngestFailed(a *core.App) (func(ctx context.Context, body string) error, error) {
	k, err := Service(a)
	if err != nil {
		return nil, err
	}
	return k.HandleDeadLetter, nil
}
