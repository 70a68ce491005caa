// Package app is the composition root: it builds the clients, stores, features and the
// http.Handler of each function group once, for the Lambda mains, the local dev server and tests.
package app

import (
	"context"
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
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/images"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/openai"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/s3"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/tools"
)

// Functions lists the HTTP functions by their directory under functions/.
var Functions = []string{"meta", "agents", "auth", "sessions", "runtime", "images"}

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
	a.Agents = agents.NewService(store, a.tools)
	a.awsCfg = awsCfg
	return a
}

// Sessions is the sessions service with the runtime engine, its models and tools. It is built
// on first use, so functions that serve no sessions neither build nor link it.
func (a *App) Sessions() *sessions.Service {
	a.sessionsOnce.Do(func() {
		engine := engine.NewEngine(models(a.awsCfg, a.Config), a.tools, engine.Limits{})
		a.sessions = sessions.New(a.Store, a.Agents, engine, a.tools, tools.NewURLFetcher(tools.Options{}), sessions.Limits{})
		a.sessions.SetImages(a.images())
		if a.Config.ExecQueueURL != "" {
			a.sessions.SetDispatcher(sqs.NewDispatcher(platform.SQSClient(a.awsCfg, a.Config), a.Config.ExecQueueURL))
		} else {
			a.sessions.SetDispatcher(&sessions.InProcess{Service: a.sessions, Log: a.Log, Timeout: 15 * time.Minute})
		}
	})
	return a.sessions
}

// ProcessJob runs the queued execution an execution-queue message names: the worker function's
// whole work. A body that is not a job is an error, so its message ends in the dead-letter queue.
// An outcome RunQueued recorded on the execution for the client (invalid, not found, permission,
// conflict …) is logged and dropped: a redelivery could only repeat it. Internal, overloaded and
// rate-limited errors are returned so that SQS redelivers the message.
func (a *App) ProcessJob(ctx context.Context, body string) error {
	sessionID, execID, err := sqs.ParseJob(body)
	if err != nil {
		return fmt.Errorf("parse job: %w", err)
	}
	err = a.Sessions().RunQueued(ctx, sessionID, execID)
	if err == nil {
		return nil
	}
	switch domain.KindOf(err) {
	case domain.KindInternal, domain.KindOverloaded, domain.KindRateLimited:
		return err
	}
	if a.Log != nil {
		a.Log.WarnContext(ctx, "queued execution failed", "session_id", sessionID, "execution_id", execID, "err", err)
	}
	return nil
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

// Builder builds the handler of one function group. Each function's main names its own
// builder, so its binary links only that group's features.
type Builder func(a *App) *api.Group

func (a *App) options() api.Options {
	return api.Options{Log: a.Log, Auth: a.Auth, MaxBodyBytes: a.Config.MaxBodyBytes}
}

// Meta builds the meta group (health, OpenAPI document).
func Meta(a *App) *api.Group { return api.NewMeta(a.options()) }

// Agents builds the agents group.
func Agents(a *App) *api.Group { return api.NewAgents(a.Agents, a.options()) }

// Auth builds the auth group (tokens, API keys).
func Auth(a *App) *api.Group { return api.NewAuth(a.Auth, a.options()) }

// Sessions builds the sessions group.
func Sessions(a *App) *api.Group { return api.NewSessions(a.Sessions(), a.options()) }

// Images builds the images group (uploads and their /media/ URLs).
func Images(a *App) *api.Group { return api.NewImages(a.images(), a.publicBaseURL, a.options()) }

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

// Runtime builds the runtime group.
func Runtime(a *App) *api.Group { return api.NewRuntime(a.Sessions(), a.options()) }

// Handler builds the handler of a function group by its directory name (dev server, tests).
func (a *App) Handler(name string) (*api.Group, error) {
	builders := map[string]Builder{"meta": Meta, "agents": Agents, "auth": Auth, "sessions": Sessions, "runtime": Runtime, "images": Images}
	b, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("no function %q", name)
	}
	return b(a), nil
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
func MainHTTP(build Builder) {
	platform.MainHTTP(func(ctx context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
		a, err := New(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return build(a), nil
	})
}
