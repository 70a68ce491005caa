// Package app is the composition root: it builds the clients, stores, features and the
// http.Handler of each function group once, for the Lambda mains, the local dev server and tests.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

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
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/openai"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/runtime"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/tools"
)

// Functions lists the HTTP functions by their directory under functions/.
var Functions = []string{"meta", "agents", "auth", "sessions", "runtime"}

// App holds what the handlers share: one store, one authenticator (and its key cache).
type App struct {
	Config   platform.Config
	Log      *slog.Logger
	Store    *dynamo.Store
	Auth     *auth.Service
	Agents   *agents.Service
	Sessions *sessions.Service
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
	a.Agents = agents.NewService(store)
	registry := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	engine := runtime.NewEngine(models(awsCfg, cfg), registry, runtime.Limits{})
	a.Sessions = sessions.New(store, a.Agents, engine, registry, tools.NewURLFetcher(tools.Options{}), sessions.Limits{})
	if cfg.ExecQueueURL != "" {
		a.Sessions.SetDispatcher(sqs.NewDispatcher(platform.SQSClient(awsCfg, cfg), cfg.ExecQueueURL))
	} else {
		a.Sessions.SetDispatcher(&sessions.InProcess{Service: a.Sessions, Log: log, Timeout: 15 * time.Minute})
	}
	return a
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
	err = a.Sessions.RunQueued(ctx, sessionID, execID)
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
// client makes no call until used), openai when a base URL is configured.
func models(awsCfg aws.Config, cfg platform.Config) runtime.ModelSet {
	set := runtime.ModelSet{Default: cfg.ModelProvider, ByName: map[string]runtime.Model{
		"local":   localmodel.Model{},
		"bedrock": bedrock.New(bedrockruntime.NewFromConfig(awsCfg), bedrock.Options{DefaultModel: cfg.BedrockModel}),
	}}
	if cfg.OpenAIBaseURL != "" {
		set.ByName["openai"] = openai.New(openai.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, DefaultModel: cfg.OpenAIModel})
	}
	return set
}

// Handler builds the handler of one function group.
func (a *App) Handler(name string) (*api.Group, error) {
	opts := api.Options{Log: a.Log, Auth: a.Auth, MaxBodyBytes: a.Config.MaxBodyBytes}
	switch name {
	case "meta":
		return api.NewMeta(opts), nil
	case "agents":
		return api.NewAgents(a.Agents, opts), nil
	case "auth":
		return api.NewAuth(a.Auth, opts), nil
	case "sessions":
		return api.NewSessions(a.Sessions, opts), nil
	case "runtime":
		return api.NewRuntime(a.Sessions, opts), nil
	}
	return nil, fmt.Errorf("no function %q", name)
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

// MainHTTP is the whole main of the HTTP function in functions/<name>: build the application
// once at init (no network calls) and serve its group's handler to Lambda.
func MainHTTP(name string) {
	platform.MainHTTP(func(ctx context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
		a, err := New(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return a.Handler(name)
	})
}
