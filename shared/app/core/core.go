// Package core is what every function builds: configuration, the logger, the DynamoDB store, the
// authenticator and the api options, and the Lambda mains. It imports no provider a function may
// not need (Secrets Manager, SQS, OpenSearch, Bedrock, the tool registry, the MCP SDK): those are
// added by the packages beside it (secrets, tooling, kb, run), each imported only by the mains
// that use it, so that a function's binary links and initialises only what its group serves.
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/seal"
)

// App holds what every function shares: one store, one authenticator (and its key cache), and
// the services the provider packages build on it, one of each (Shared).
type App struct {
	Config platform.Config
	Log    *slog.Logger
	AWS    aws.Config
	Store  *dynamo.Store
	Auth   *auth.Service
	// Audit records admin actions (shared/audit); every service that changes keys, MCP servers,
	// agents, webhooks or limits is built with it.
	Audit *audit.Service

	secrets SecretReader        // set by UseSecrets
	mcpConn domain.MCPConnector // set by UseMCP

	mu     sync.Mutex
	shared map[any]func() (any, error)
}

// SecretReader reads a secret by its ARN. secrets.Manager gives the Secrets Manager one; the core does not
// import that client, so functions that read no secret do not link it.
type SecretReader func(ctx context.Context, arn string) ([]byte, error)

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
	store := dynamo.NewStore(dynamoClient(awsCfg, cfg, extra...), cfg.Table)
	a := &App{Config: cfg, Log: log, AWS: awsCfg, Store: store, shared: map[any]func() (any, error){}}
	secret := auth.StaticSecret(cfg.TokenSecret)
	if cfg.TokenSecret == "" {
		secret = func(ctx context.Context) ([]byte, error) { return a.Secret(ctx, cfg.TokenSecretARN) }
	}
	a.Audit = audit.New(store)
	a.Auth = auth.NewService(store, store, auth.NewTokens(secret, cfg.TokenTTL), cfg.KeyCacheTTL).WithAudit(a.Audit)
	return a
}

// dynamoClient builds the DynamoDB client, pointed at the local endpoint when one is configured.
func dynamoClient(cfg aws.Config, c platform.Config, extra ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		if c.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(c.DynamoEndpoint)
		}
		// DynamoDB Local omits x-amz-crc32 on errors; the check adds nothing on a local socket.
		o.DisableValidateResponseChecksum = !c.InLambda
	}}, extra...)...)
}

// Options are the api options of every group: its logger, authenticator and body limit.
func (a *App) Options() api.Options {
	return api.Options{Log: a.Log, Auth: a.Auth, MaxBodyBytes: a.Config.MaxBodyBytes}
}

// Shared is the value build makes for key in this application: built on first use, and every use
// gets the same value or the same error. The provider packages keep their services here (the key
// is a type of theirs), so that one App, the dev server's or a test's, holds one of each.
func Shared[T any](a *App, key any, build func() (T, error)) (T, error) {
	a.mu.Lock()
	get, ok := a.shared[key]
	if !ok {
		get = sync.OnceValues(func() (any, error) { return build() })
		a.shared[key] = get
	}
	a.mu.Unlock()
	v, err := get()
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// UseSecrets gives the application its secret reader (secrets.Manager).
func (a *App) UseSecrets(r SecretReader) { a.secrets = r }

// Secret reads a secret through the reader UseSecrets gave. A function given none reads no
// secret: it verifies no bearer token (meta, whose routes are public, and the dead-letter and
// ingestion functions) and unseals no MCP server's headers.
func (a *App) Secret(ctx context.Context, arn string) ([]byte, error) {
	if a.secrets == nil {
		return nil, fmt.Errorf("read secret %s: this function reads no secrets", arn)
	}
	return a.secrets(ctx, arn)
}

// CredentialsKey is the source of the secret the key that seals stored credentials (MCP
// servers' headers, webhooks' signing secrets) is derived from, read on first use:
// CREDENTIALS_KEY locally, the CREDENTIALS_KEY_ARN secret on AWS (through the reader UseSecrets
// gave).
func (a *App) CredentialsKey() seal.KeySource {
	switch cfg := a.Config; {
	case cfg.CredentialsKey != "":
		return seal.Static(cfg.CredentialsKey)
	case cfg.CredentialsKeyARN != "":
		return func(ctx context.Context) ([]byte, error) { return a.Secret(ctx, cfg.CredentialsKeyARN) }
	}
	return func(context.Context) ([]byte, error) {
		return nil, errors.New("config: CREDENTIALS_KEY or CREDENTIALS_KEY_ARN must be set to store MCP servers' headers and webhooks' secrets")
	}
}

// MCPConnect makes the MCP client adapter for an address guard (shared/mcp's ForPolicy).
type MCPConnect func(netguard.Policy) domain.MCPConnector

// UseMCP gives the application the MCP client adapter, through the address guard with the
// operator's allowed hosts (MCP_ALLOWED_HOSTS: loopback locally, none on AWS). The mains of the
// functions that connect to MCP servers pass it (agents registers them, runtime, stream and worker
// run their tools), and so do the dev server and the tests: no package under shared/app imports
// the MCP SDK, so that the other functions' binaries do not link it (about 3 MB each).
func (a *App) UseMCP(connect MCPConnect) {
	a.mcpConn = connect(netguard.Policy{AllowHosts: a.Config.MCPAllowedHosts})
}

// WithMCP is UseMCP as an option of MainHTTP and MainSQS.
func WithMCP(connect MCPConnect) func(*App) { return func(a *App) { a.UseMCP(connect) } }

// MCPConnector is the MCP client adapter UseMCP gave, or one that refuses to connect in a
// function that never does.
func (a *App) MCPConnector() domain.MCPConnector {
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
