// Package app is the composition root: it builds the clients, stores, features and the
// http.Handler of each function group once, for the Lambda mains, the local dev server and tests.
package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/platform"
)

// Functions lists the HTTP functions by their directory under functions/.
var Functions = []string{"meta", "agents", "auth"}

// App holds what the handlers share: one store, one authenticator (and its key cache).
type App struct {
	Config platform.Config
	Log    *slog.Logger
	Store  *dynamo.Store
	Auth   *auth.Service
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
	return &App{Config: cfg, Log: log, Store: store, Auth: auth.NewService(store, store, tokens, cfg.KeyCacheTTL)}
}

// Handler builds the handler of one function group.
func (a *App) Handler(name string) (*api.Group, error) {
	opts := api.Options{Log: a.Log, Auth: a.Auth, MaxBodyBytes: a.Config.MaxBodyBytes}
	switch name {
	case "meta":
		return api.NewMeta(opts), nil
	case "agents":
		return api.NewAgents(agents.NewService(a.Store), opts), nil
	case "auth":
		return api.NewAuth(a.Auth, opts), nil
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
