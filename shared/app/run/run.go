// Package run adds what executes agents to tooling: the engine and its model providers, retrieval
// from the knowledge feature, the execution queue and the URL fetcher. It builds the runtime
// group (HTTP API and streaming function URL) and the worker's processor.
package run

import (
	"context"
	"fmt"
	"os"
	"time"
	// The zone database of current_time is embedded where tools run: provided.al2023 has no
	// /usr/share/zoneinfo. The functions that only check tool names (agents, sessions) leave
	// it out (about 0.4 MB).
	_ "time/tzdata"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/api/a2aserve"
	"github.com/agentorch/agentorch/shared/api/mcpserve"
	"github.com/agentorch/agentorch/shared/api/openaiserve"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/llm"
	"github.com/agentorch/agentorch/shared/app/tooling"
	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/openai"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/pricing"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/telemetry"
	"github.com/agentorch/agentorch/shared/tools"
)

type sessionsKey struct{}

// Sessions is the sessions service with the runtime engine, its models and tools, built on first
// use.
func Sessions(a *core.App) *sessions.Service {
	s, _ := core.Shared(a, sessionsKey{}, func() (*sessions.Service, error) {
		reg := tooling.Registry(a)
		eng := engine.NewEngine(llm.Models(a), reg, engine.Limits{}).WithRetriever(retriever{a}).WithMemory(memories{a}).WithTracing(tracing(a))
		d := sessions.Deps{Store: a.Store, Agents: tooling.AgentsService(a), Engine: eng, Tools: reg,
			Fetch: tools.NewURLFetcher(tools.Options{}), Images: core.ImageStore(a), KnowledgeBases: a.Store, MCP: tooling.MCP(a),
			Prices: prices(a.Config), Usage: a.Store, Budgets: a.Auth}
		if a.Config.ExecQueueURL != "" {
			d.Queue = sqs.NewQueue(sqs.NewClient(a.AWS, a.Config.SQSEndpoint), a.Config.ExecQueueURL)
		}
		if a.Config.WebhookQueueURL != "" {
			d.Events = hooks.Deliverer(a) // one SQS send when a run completes or pauses
		}
		if a.Config.MemoryQueueURL != "" {
			d.Memory = memories{a} // one SQS send after a turn whose configuration extracts memory
		}
		return sessions.New(d, sessions.Limits{}), nil
	})
	return s
}

// tracing is the engine's OpenTelemetry tracing from the OTEL_* variables (docs/observability.md):
// off, and costing nothing, when they name no endpoint. A configuration it cannot use is logged
// and leaves tracing off rather than the function down.
func tracing(a *core.App) engine.Tracing {
	cfg, err := telemetry.FromEnv(os.Getenv)
	if err == nil && cfg.Enabled() {
		var tr *telemetry.Tracing
		if tr, err = telemetry.Start(context.Background(), cfg); err == nil {
			return engine.Tracing{Provider: tr.Provider(), CaptureContent: cfg.CaptureContent, Flush: tr.Flush}
		}
	}
	if err != nil {
		a.Log.Warn("tracing off", "err", err)
	}
	return engine.Tracing{CaptureContent: cfg.CaptureContent}
}

// retriever is the engine's retrieval through the knowledge feature, built on the first
// retrieval: executions of agents without knowledge bases never build it.
type retriever struct{ a *core.App }

// SearchKnowledge implements engine.Retriever.
func (r retriever) SearchKnowledge(ctx context.Context, company, query string, refs []domain.KnowledgeBaseRef, topK int) (*domain.RetrievalResult, error) {
	k, err := kb.Service(r.a)
	if err != nil {
		return nil, fmt.Errorf("knowledge feature unavailable: %w", err)
	}
	return k.SearchKnowledge(ctx, company, query, refs, topK)
}

// Search implements mcpserve.Knowledge (the MCP server's search_knowledge_base), built on its
// first search as retrieval is.
func (r retriever) Search(ctx context.Context, p domain.Principal, id string, in knowledge.SearchInput) ([]domain.Hit, error) {
	k, err := kb.Service(r.a)
	if err != nil {
		return nil, fmt.Errorf("knowledge feature unavailable: %w", err)
	}
	return k.Search(ctx, p, id, in)
}

// prices is the price book of cost_usd: the list prices with MODEL_PRICES over them, and the
// defaults llm.Models gives calls that name no provider or model.
func prices(cfg platform.Config) *pricing.Book {
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	return pricing.NewBook(cfg.ModelPrices, pricing.Defaults{Provider: cfg.ModelProvider, Models: map[string]string{
		"bedrock": or(cfg.BedrockModel, bedrock.DefaultModel), "openai": or(cfg.OpenAIModel, openai.DefaultModel)}})
}

// Runtime builds the runtime group, with the agents served as MCP tools at /api/v1/mcp/
// (mcpserve; docs/mcp-server.md).
func Runtime(a *core.App) (*api.Group, error) {
	g := api.NewRuntime(Sessions(a), a.Options())
	mcpserve.Serve(g, tooling.AgentsService(a), Sessions(a), retriever{a})
	openaiserve.Serve(g, tooling.AgentsService(a), Sessions(a))
	a2aserve.Serve(g, tooling.AgentsService(a), Sessions(a), api.StaticBaseURL(a.Config.PublicBaseURL), hooks.A2APushes(a)...)
	return g, nil
}

// Stream builds the stream function's handler: the runtime group, served behind a Lambda
// function URL in RESPONSE_STREAM mode so that an execute with ?stream=true sends each event as
// it happens on AWS too. It authenticates as every group does (API keys, bearer tokens).
func Stream(a *core.App) (*api.Group, error) { return Runtime(a) }

// WorkerBackoff is how soon the worker's queue delivers a job again after the worker gave it
// back (its session busy, a dependency failing): 2 s after the first receive, doubling up to
// 5 minutes. With ExecutionQueue's maxReceiveCount (template.yaml) a job outwaits the longest
// lease a run holds (the worker's 900 s and a margin) before the dead-letter queue takes it;
// TestWorkerBackoffOutwaitsALease holds the two together.
var WorkerBackoff = platform.Backoff{Base: 2 * time.Second, Max: 5 * time.Minute}

// Worker builds the worker function's processor: queued executions. A job it gives back comes
// back after WorkerBackoff, not after the queue's 960 s visibility timeout.
func Worker(a *core.App) (func(ctx context.Context, body string) error, error) {
	process := Sessions(a).ProcessJob
	if a.Config.ExecQueueURL == "" {
		return process, nil
	}
	redrive := sqs.NewRedrive(sqs.NewClient(a.AWS, a.Config.SQSEndpoint), a.Config.ExecQueueURL)
	return platform.RedriveSoon(process, redrive, WorkerBackoff), nil
}
