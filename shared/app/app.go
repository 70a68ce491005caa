// Package app is the composition root: it builds the clients, stores, features and the
// http.Handler of each function group once, for the Lambda mains, the local dev server and tests.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/images"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/openai"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/s3"
	"github.com/agentorch/agentorch/shared/seal"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/tools"
	"github.com/agentorch/agentorch/shared/vectors"
	"github.com/agentorch/agentorch/studio"
)

// Function is one Lambda function of template.yaml, by its directory under functions/: an HTTP
// function behind API Gateway (HTTP set) or a queue consumer (SQS set). Each main names its own
// builder, so a binary links only its group; the dev server and the tests route through this
// table joined with template.yaml, and a test checks that the mains use the table's builders.
type Function struct {
	Dir  string
	HTTP Builder
	SQS  SQSBuilder
	// MCP: the function connects to MCP servers, so its main passes app.WithMCP(mcp.ForPolicy).
	MCP bool
	// Stream: the function is behind a function URL whose responses stream (InvokeMode
	// RESPONSE_STREAM), not the HTTP API, so its main is app.MainHTTPStream.
	Stream bool
}

// SQSBuilder builds the message processor of a queue function, or says why it cannot.
type SQSBuilder func(a *App) (func(ctx context.Context, body string) error, error)

// Functions is the one table of functions.
var Functions = []Function{
	{Dir: "meta", HTTP: Meta},
	{Dir: "agents", HTTP: Agents, MCP: true},
	{Dir: "auth", HTTP: Auth},
	{Dir: "sessions", HTTP: Sessions},
	{Dir: "runtime", HTTP: Runtime, MCP: true},
	{Dir: "stream", HTTP: Stream, MCP: true, Stream: true},
	{Dir: "images", HTTP: Images},
	{Dir: "files", HTTP: Files},
	{Dir: "collections", HTTP: Collections},
	{Dir: "knowledge", HTTP: Knowledge},
	{Dir: "worker", SQS: Worker, MCP: true},
	{Dir: "executionfailed", SQS: ExecutionFailed},
	{Dir: "ingest", SQS: Ingest},
	{Dir: "ingestfailed", SQS: IngestFailed},
}

// Lookup returns the function of a directory.
func Lookup(dir string) (Function, bool) {
	for _, f := range Functions {
		if f.Dir == dir {
			return f, true
		}
	}
	return Function{}, false
}

// WorkerBackoff is how soon the worker's queue delivers a job again after the worker gave it
// back (its session busy, a dependency failing): 2 s after the first receive, doubling up to
// 5 minutes. With ExecutionQueue's maxReceiveCount (template.yaml) a job outwaits the longest
// lease a run holds (the worker's 900 s and a margin) before the dead-letter queue takes it;
// TestWorkerBackoffOutwaitsALease holds the two together.
var WorkerBackoff = platform.Backoff{Base: 2 * time.Second, Max: 5 * time.Minute}

// Worker builds the worker function's processor: queued executions. A job it gives back comes
// back after WorkerBackoff, not after the queue's 960 s visibility timeout.
func Worker(a *App) (func(ctx context.Context, body string) error, error) {
	process := a.Sessions().ProcessJob
	if a.Config.ExecQueueURL == "" {
		return process, nil
	}
	redrive := sqs.NewRedrive(platform.SQSClient(a.awsCfg, a.Config), a.Config.ExecQueueURL)
	return platform.RedriveSoon(process, redrive, WorkerBackoff), nil
}

// ExecutionFailed builds the processor of the execution dead-letter queue: a job the queue gave
// up on marks its execution failed, so that no poll waits for it forever. It needs only the
// store (no engine, models or tools: it runs nothing).
func ExecutionFailed(a *App) (func(ctx context.Context, body string) error, error) {
	return sessions.New(sessions.Deps{Store: a.Store}, sessions.Limits{}).HandleDeadLetter, nil
}

// Ingest builds the ingestion function's processor: one knowledge-base ingestion job per message.
func Ingest(a *App) (func(ctx context.Context, body string) error, error) {
	k, err := a.Knowledge()
	if err != nil {
		return nil, err
	}
	return k.ProcessJob, nil
}

// IngestFailed builds the processor of the ingestion dead-letter queue: a job that exhausted its
// deliveries is recorded as a failed datasource with its reason.
func IngestFailed(a *App) (func(ctx context.Context, body string) error, error) {
	k, err := a.Knowledge()
	if err != nil {
		return nil, err
	}
	return k.HandleDeadLetter, nil
}

// App holds what the handlers share: one store, one authenticator (and its key cache).
type App struct {
	Config platform.Config
	Log    *slog.Logger
	Store  *dynamo.Store
	Auth   *auth.Service
	Agents *agents.Service

	awsCfg       aws.Config
	tools        *tools.Registry
	sessionsOnce sync.Once
	sessions     *sessions.Service

	knowledge func() (*knowledge.Service, error) // buildKnowledge, once

	mcpOnce    sync.Once
	mcpServers *mcpservers.Service
	mcpConn    domain.MCPConnector // set by UseMCP
}

// New builds the application from configuration. It makes no network call.
func New(ctx context.Context, cfg platform.Config, log *slog.Logger, extra ...func(*dynamodb.Options)) (*App, error) {
	awsCfg, err := platform.AWSConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return NewWithAWS(awsCfg, cfg, log, extra...), nil
}

// NewWithAWS builds the application on an already loaded AWS configuration.
func NewWithAWS(awsCfg aws.Config, cfg platform.Config, log *slog.Logger, extra ...func(*dynamodb.Options)) *App {
	store := dynamo.NewStore(platform.DynamoClient(awsCfg, cfg, extra...), cfg.Table)
	secret := auth.StaticSecret(cfg.TokenSecret)
	if cfg.TokenSecret == "" {
		secret = secretsManagerSource(awsCfg, cfg.TokenSecretARN)
	}
	tokens := auth.NewTokens(secret, cfg.TokenTTL)
	a := &App{Config: cfg, Log: log, Store: store, Auth: auth.NewService(store, store, tokens, cfg.KeyCacheTTL)}
	// One tool registry: agent validation and session creation check tool names against it,
	// and the engine binds each node's built-in tools from it.
	a.tools = tools.NewRegistry(tools.Builtins(tools.Options{})...)
	a.Agents = agents.NewService(store, a.tools).WithMCP(mcpRuns{a})
	a.awsCfg = awsCfg
	a.knowledge = sync.OnceValues(a.buildKnowledge)
	return a
}

// Sessions is the sessions service with the runtime engine, its models and tools. It is built
// on first use, so functions that serve no sessions neither build nor link it.
func (a *App) Sessions() *sessions.Service {
	a.sessionsOnce.Do(func() {
		engine := engine.NewEngine(models(a.awsCfg, a.Config), a.tools, engine.Limits{}).WithRetriever(retriever{a})
		d := sessions.Deps{Store: a.Store, Agents: a.Agents, Engine: engine, Tools: a.tools,
			Fetch: tools.NewURLFetcher(tools.Options{}), Images: a.images(), KnowledgeBases: a.Store, MCP: mcpRuns{a}}
		if a.Config.ExecQueueURL != "" {
			d.Queue = sqs.NewQueue(platform.SQSClient(a.awsCfg, a.Config), a.Config.ExecQueueURL)
		}
		a.sessions = sessions.New(d, sessions.Limits{})
	})
	return a.sessions
}

// retriever is the engine's retrieval through the knowledge feature, built on the first
// retrieval: executions of agents without knowledge bases never build it.
type retriever struct{ a *App }

// SearchKnowledge implements engine.Retriever.
func (r retriever) SearchKnowledge(ctx context.Context, company, query string, refs []domain.KnowledgeBaseRef, topK int) (*domain.RetrievalResult, error) {
	k, err := r.a.Knowledge()
	if err != nil {
		return nil, fmt.Errorf("knowledge feature unavailable: %w", err)
	}
	return k.SearchKnowledge(ctx, company, query, refs, topK)
}

// Knowledge is the knowledge feature (files, collections, knowledge bases and their ingestion)
// on DynamoDB, S3, the ingestion queue, OpenSearch and the embedding providers. It is built on
// first use (no network call: the clients connect when used), and every use gets the same service
// or the same error, a configuration the adapters refuse.
func (a *App) Knowledge() (*knowledge.Service, error) { return a.knowledge() }

func (a *App) buildKnowledge() (*knowledge.Service, error) {
	cfg := a.Config
	// On AWS every request to the domain is SigV4-signed for "es"; the local stand-in takes
	// plain HTTP.
	var signing *aws.Config
	if cfg.InLambda {
		signing = &a.awsCfg
	}
	client, err := vectors.NewClient(cfg.OpenSearchEndpoint, signing, nil)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	index, err := vectors.New(client, vectors.Options{})
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	emb, err := embedders(a.awsCfg, cfg)
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	d := knowledge.Deps{
		Store:       a.Store,
		Blobs:       s3.NewStore(platform.S3Client(a.awsCfg, cfg), cfg.Bucket),
		Index:       index,
		Embedders:   emb,
		NewSplitter: newSplitter,
	}
	if cfg.IngestQueueURL != "" {
		d.Queue = sqs.NewQueue(platform.SQSClient(a.awsCfg, cfg), cfg.IngestQueueURL)
	}
	return knowledge.New(d, knowledge.Limits{}), nil
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

// newSplitter is chunk.New as the feature's splitter constructor.
func newSplitter(c domain.Chunking) (knowledge.Splitter, error) {
	s, err := chunk.New(c)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// models builds the providers: local always (the offline development model), bedrock (its
// client makes no call until used) on AWS or with credentials, openai when a base URL is set.
func models(awsCfg aws.Config, cfg platform.Config) engine.ModelSet {
	set := engine.ModelSet{Default: cfg.ModelProvider, ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	// Locally Bedrock is offered only with real AWS credentials in the environment; otherwise a
	// configuration naming it gets a clear 400 rather than a failed call.
	if cfg.InLambda || cfg.ModelProvider == "bedrock" || platform.HasAWSCredentials() {
		set.ByName["bedrock"] = bedrock.New(bedrockruntime.NewFromConfig(awsCfg), bedrock.Options{DefaultModel: cfg.BedrockModel})
	}
	if cfg.OpenAIBaseURL != "" {
		set.ByName["openai"] = openai.New(openai.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, DefaultModel: cfg.OpenAIModel})
	}
	return set
}

// Builder builds the handler of one function group, or says why it cannot (a configuration its
// features' adapters refuse). Each function's main names its own builder, so its binary links
// only that group's features.
type Builder func(a *App) (*api.Group, error)

func (a *App) options() api.Options {
	return api.Options{Log: a.Log, Auth: a.Auth, MaxBodyBytes: a.Config.MaxBodyBytes}
}

// Meta builds the meta group (health, OpenAPI document) and serves the studio's static files at
// /studio/ beside it: API Gateway's $default route already brings those paths to this function.
func Meta(a *App) (*api.Group, error) {
	g := api.NewMeta(a.options())
	g.Mount(studio.Prefix, studio.Handler(studio.Options{StreamBaseURL: a.Config.StreamBaseURL, UploadOrigins: uploadOrigins(a.Config)}))
	return g, nil
}

// uploadOrigins are where the studio's presigned uploads go: the S3 endpoint locally, the
// bucket's virtual-hosted address on AWS (as the SDK presigns).
func uploadOrigins(cfg platform.Config) []string {
	if cfg.S3Endpoint != "" {
		return []string{cfg.S3Endpoint}
	}
	if cfg.Bucket == "" || cfg.Region == "" {
		return nil
	}
	return []string{"https://" + cfg.Bucket + ".s3." + cfg.Region + ".amazonaws.com"}
}

// Agents builds the agents group, with the MCP servers their configurations bind.
func Agents(a *App) (*api.Group, error) {
	return api.NewAgents(a.Agents, a.options()).WithMCPServers(a.MCPServers()), nil
}

// MCPServers is the MCP-servers feature: the company's registered servers on DynamoDB, their
// headers sealed under the credentials key (read on first use: CREDENTIALS_KEY locally, the
// CREDENTIALS_KEY_ARN secret on AWS), reached through the MCP connector. Built on first use, with
// no network call.
func (a *App) MCPServers() *mcpservers.Service {
	a.mcpOnce.Do(func() {
		a.mcpServers = mcpservers.New(a.Store, a.mcpConnector(), seal.New(credentialsKey(a.awsCfg, a.Config)))
	})
	return a.mcpServers
}

// credentialsKey is the source of the secret the credentials sealing key is derived from.
func credentialsKey(awsCfg aws.Config, cfg platform.Config) seal.KeySource {
	switch {
	case cfg.CredentialsKey != "":
		return seal.Static(cfg.CredentialsKey)
	case cfg.CredentialsKeyARN != "":
		return seal.KeySource(secretsManagerSource(awsCfg, cfg.CredentialsKeyARN))
	}
	return func(context.Context) ([]byte, error) {
		return nil, errors.New("config: CREDENTIALS_KEY or CREDENTIALS_KEY_ARN must be set to store MCP servers' headers")
	}
}

// MCPConnect makes the MCP client adapter for an address guard (shared/mcp's ForPolicy).
type MCPConnect func(netguard.Policy) domain.MCPConnector

// UseMCP gives the application the MCP client adapter, through the address guard with the
// operator's allowed hosts (MCP_ALLOWED_HOSTS: loopback locally, none on AWS). The mains of the
// functions that connect to MCP servers pass it (agents registers them, runtime and worker run
// their tools), and so do the dev server and the tests: app itself does not import the MCP SDK,
// so that the other functions' binaries do not link it (about 3 MB each).
func (a *App) UseMCP(connect MCPConnect) {
	a.mcpConn = connect(netguard.Policy{AllowHosts: a.Config.MCPAllowedHosts})
}

// WithMCP is UseMCP as an option of MainHTTP and MainSQS.
func WithMCP(connect MCPConnect) func(*App) { return func(a *App) { a.UseMCP(connect) } }

// mcpConnector is the MCP client adapter UseMCP gave, or one that refuses to connect in a
// function that never does.
func (a *App) mcpConnector() domain.MCPConnector {
	if a.mcpConn == nil {
		return noMCP{}
	}
	return a.mcpConn
}

// noMCP is the connector of functions that do not connect to MCP servers.
type noMCP struct{}

func (noMCP) ListTools(context.Context, domain.MCPEndpoint) ([]domain.MCPTool, error) {
	return nil, &domain.MCPError{Reason: "this function does not connect to MCP servers"}
}

func (noMCP) Connect(context.Context, domain.MCPEndpoint) (domain.MCPSession, error) {
	return nil, &domain.MCPError{Reason: "this function does not connect to MCP servers"}
}

// mcpRuns is the company's MCP servers as sessions uses them: a read of them to check
// configurations, and each run's binder of their tools. The feature is built on first use.
type mcpRuns struct{ a *App }

func (m mcpRuns) Resolve(ctx context.Context, company string, refs []string) (domain.MCPServers, error) {
	return m.a.MCPServers().Resolve(ctx, company, refs)
}

func (m mcpRuns) NewRun() sessions.RunTools {
	return tools.NewMCPRun(m.a.MCPServers(), m.a.mcpConnector())
}

// Auth builds the auth group (tokens, API keys).
func Auth(a *App) (*api.Group, error) { return api.NewAuth(a.Auth, a.options()), nil }

// Sessions builds the sessions group.
func Sessions(a *App) (*api.Group, error) { return api.NewSessions(a.Sessions(), a.options()), nil }

// Images builds the images group (uploads and their /media/ URLs).
func Images(a *App) (*api.Group, error) {
	return api.NewImages(a.images(), a.publicBaseURL, a.options()), nil
}

// publicBaseURL is the base of the /media/ URLs: PUBLIC_BASE_URL (a custom domain; locally the
// dev server), or else the API Gateway stage the request came through. Never the Host header.
func (a *App) publicBaseURL(r *http.Request) string {
	if a.Config.PublicBaseURL != "" {
		return a.Config.PublicBaseURL
	}
	u, _ := platform.StageURL(r.Context())
	return u
}

func (a *App) images() *images.Service {
	return images.New(s3.NewStore(platform.S3Client(a.awsCfg, a.Config), a.Config.Bucket))
}

// Files builds the files group.
func Files(a *App) (*api.Group, error) {
	k, err := a.Knowledge()
	if err != nil {
		return nil, err
	}
	return api.NewFiles(k, a.options()), nil
}

// Collections builds the collections group.
func Collections(a *App) (*api.Group, error) {
	k, err := a.Knowledge()
	if err != nil {
		return nil, err
	}
	return api.NewCollections(k, a.options()), nil
}

// Knowledge builds the knowledge-bases group.
func Knowledge(a *App) (*api.Group, error) {
	k, err := a.Knowledge()
	if err != nil {
		return nil, err
	}
	return api.NewKnowledge(k, a.options()), nil
}

// Runtime builds the runtime group.
func Runtime(a *App) (*api.Group, error) {
	return api.NewRuntime(a.Sessions(), a.options()), nil
}

// Handler builds the handler of an HTTP function by its directory name (dev server, tests).
func (a *App) Handler(dir string) (*api.Group, error) {
	f, ok := Lookup(dir)
	if !ok || f.HTTP == nil {
		return nil, fmt.Errorf("no HTTP function %q in app.Functions", dir)
	}
	return f.HTTP(a)
}

// Processor builds the message processor of a queue function by its directory name.
func (a *App) Processor(dir string) (func(ctx context.Context, body string) error, error) {
	f, ok := Lookup(dir)
	if !ok || f.SQS == nil {
		return nil, fmt.Errorf("no queue function %q in app.Functions", dir)
	}
	return f.SQS(a)
}

// secretsManagerSource reads the token-signing secret on first use.
func secretsManagerSource(awsCfg aws.Config, arn string) auth.SecretSource {
	return func(ctx context.Context) ([]byte, error) {
		out, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", arn, err)
		}
		return []byte(aws.ToString(out.SecretString)), nil
	}
}

// MainHTTP is the whole main of an HTTP function: build the application and the group's handler
// once at init (no network calls) and serve it to Lambda.
func MainHTTP(build Builder, opts ...func(*App)) { platform.MainHTTP(handler(build, opts)) }

// MainSQS is the whole main of a queue function: build the application and the processor once
// at init (no network calls) and serve SQS events with partial batch responses.
func MainSQS(build SQSBuilder, opts ...func(*App)) { platform.MainSQS(withApp(build, opts)) }

// withApp builds what a function serves from the application, built with opts.
func withApp[T any](build func(*App) (T, error), opts []func(*App)) func(context.Context, platform.Config, *slog.Logger) (T, error) {
	return func(ctx context.Context, cfg platform.Config, log *slog.Logger) (T, error) {
		a, err := New(ctx, cfg, log)
		if err != nil {
			var zero T
			return zero, err
		}
		for _, o := range opts {
			o(a)
		}
		return build(a)
	}
}

// handler is withApp for an HTTP group.
func handler(build Builder, opts []func(*App)) platform.HandlerBuilder {
	b := withApp(build, opts)
	return func(ctx context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
		g, err := b(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}
