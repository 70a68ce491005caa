// Package app is the whole application, for the local dev server and the tests: one core.App
// (one store and key cache) with every function's builder, in the one table of functions. The
// Lambda mains do not import it: each calls its own builder in core, tooling, kb, mem or run with its own providers
// (meta its own handler, without an App),
// so that its binary links only what its group serves (TestFunctionsLinkOnlyTheirProviders).
package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/hooks"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/mem"
	"github.com/agentorch/agentorch/shared/app/meta"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/app/secrets"
	"github.com/agentorch/agentorch/shared/app/servers"
	"github.com/agentorch/agentorch/shared/app/tooling"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Function is one Lambda function of template.yaml, by its directory under functions/: an HTTP
// function behind API Gateway (HTTP set) or a queue consumer (SQS set). Each main names its own
// builder; the dev server and the tests route through this table joined with template.yaml, and
// a test checks that the mains use the table's builders.
type Function struct {
	Dir  string
	HTTP core.Builder
	SQS  core.SQSBuilder
	// Secrets: the function verifies bearer tokens or unseals MCP servers' headers or webhooks'
	// signing secrets, so its main passes secrets.Manager (the dev server and the tests' App
	// reads through it too).
	Secrets bool
	// MCP: the function connects to MCP servers, so its main passes core.WithMCP(mcp.ForPolicy).
	MCP bool
	// Stream: the function is behind a function URL whose responses stream (InvokeMode
	// RESPONSE_STREAM), not the HTTP API, so its main is core.MainHTTPStream.
	Stream bool
	// Bare, when set, is what the main serves through platform.MainHTTP without building an App:
	// the group needs no store, authenticator or secret (meta's routes are public), so its binary
	// links no AWS service client. HTTP builds the same group on the App for the dev server.
	Bare platform.HandlerBuilder
	// Schedule builds the task of a function EventBridge runs on a schedule (its template
	// events are Schedule events); the dev server runs it on a ticker (infra/localstack).
	Schedule core.ScheduleBuilder
}

// Functions is the one table of functions.
var Functions = []Function{
	{Dir: "meta", HTTP: core.Meta, Bare: meta.Handler},
	{Dir: "agents", HTTP: tooling.Agents, Secrets: true},
	{Dir: "mcpservers", HTTP: servers.Group, Secrets: true, MCP: true},
	{Dir: "webhooks", HTTP: hooks.Group, Secrets: true},
	{Dir: "auth", HTTP: core.AuthUsage, Secrets: true},
	{Dir: "sessions", HTTP: tooling.Sessions, Secrets: true},
	{Dir: "runtime", HTTP: run.Runtime, Secrets: true, MCP: true},
	{Dir: "stream", HTTP: run.Stream, Secrets: true, MCP: true, Stream: true},
	{Dir: "images", HTTP: core.Images, Secrets: true},
	{Dir: "files", HTTP: kb.Files, Secrets: true},
	{Dir: "collections", HTTP: kb.Collections, Secrets: true},
	{Dir: "knowledge", HTTP: kb.Knowledge, Secrets: true},
	{Dir: "memory", HTTP: mem.Group, Secrets: true},
	{Dir: "worker", SQS: run.Worker, Secrets: true, MCP: true},
	{Dir: "executionfailed", SQS: hooks.ExecutionFailed},
	{Dir: "ingest", SQS: kb.Ingest},
	{Dir: "ingestfailed", SQS: kb.IngestFailed},
	{Dir: "memoryextract", SQS: mem.Extract},
	{Dir: "webhookdelivery", SQS: hooks.Delivery, Secrets: true},
	{Dir: "watchdog", Schedule: hooks.Watchdog},
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

// App is the application every function of the table is built from, with every provider the
// table's mains pass but the MCP connector (UseMCP: the callers choose it).
type App struct {
	*core.App
	Agents *agents.Service // the agents feature the groups share (tooling.AgentsService)
}

func newApp(a *core.App) *App {
	secrets.Manager(a)
	return &App{App: a, Agents: tooling.AgentsService(a)}
}

// New builds the application from configuration. It makes no network call.
func New(ctx context.Context, cfg platform.Config, log *slog.Logger, extra ...func(*dynamodb.Options)) (*App, error) {
	a, err := core.New(ctx, cfg, log, extra...)
	if err != nil {
		return nil, err
	}
	return newApp(a), nil
}

// NewWithAWS builds the application on an already loaded AWS configuration.
func NewWithAWS(awsCfg aws.Config, cfg platform.Config, log *slog.Logger, extra ...func(*dynamodb.Options)) *App {
	return newApp(core.NewWithAWS(awsCfg, cfg, log, extra...))
}

// Handler builds the handler of an HTTP function by its directory name.
func (a *App) Handler(dir string) (*api.Group, error) {
	f, ok := Lookup(dir)
	if !ok || f.HTTP == nil {
		return nil, fmt.Errorf("no HTTP function %q in app.Functions", dir)
	}
	return f.HTTP(a.App)
}

// Processor builds the message processor of a queue function by its directory name.
func (a *App) Processor(dir string) (func(ctx context.Context, body string) error, error) {
	f, ok := Lookup(dir)
	if !ok || f.SQS == nil {
		return nil, fmt.Errorf("no queue function %q in app.Functions", dir)
	}
	return f.SQS(a.App)
}

// Task builds the task of a scheduled function by its directory name.
func (a *App) Task(dir string) (func(ctx context.Context) error, error) {
	f, ok := Lookup(dir)
	if !ok || f.Schedule == nil {
		return nil, fmt.Errorf("no scheduled function %q in app.Functions", dir)
	}
	return f.Schedule(a.App)
}

// Sessions is the sessions service the runtime group and the worker run executions with.
func (a *App) Sessions() *sessions.Service { return run.Sessions(a.App) }

// Knowledge is the knowledge feature, or the error of a configuration its adapters refuse.
func (a *App) Knowledge() (*knowledge.Service, error) { return kb.Service(a.App) }
