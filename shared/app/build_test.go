package app_test

import (
	"debug/elf"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestUnbuildableKnowledge: a configuration the knowledge feature's adapters refuse (an
// embedding provider the deployment does not offer) is an error from building each function
// that serves the feature, the same error every time, never a handler or processor left to fail
// later; functions without the feature build as usual. Nothing here touches the network.
func TestUnbuildableKnowledge(t *testing.T) {
	cfg, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.EmbeddingProvider = "no-such-provider"
	a := app.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, slog.New(slog.DiscardHandler))
	k1, err1 := a.Knowledge()
	k2, err2 := a.Knowledge()
	if err1 == nil || k1 != nil || k2 != nil || !errors.Is(err2, err1) {
		t.Fatalf("Knowledge() = %v, %v then %v, %v; want nil and one error", k1, err1, k2, err2)
	}
	for _, f := range app.Functions {
		var got any
		var err error
		switch {
		case f.HTTP != nil:
			got, err = a.Handler(f.Dir)
		case f.Schedule != nil:
			got, err = a.Task(f.Dir)
		default:
			got, err = a.Processor(f.Dir)
		}
		switch f.Dir {
		case "files", "collections", "knowledge", "ingest", "ingestfailed",
			"memory", "memoryextract": // memory embeds with the knowledge feature's embedders (kb.Embedders)
			if err == nil {
				t.Errorf("%s built with an unbuildable knowledge feature", f.Dir)
			}
		default:
			if err != nil || got == nil {
				t.Errorf("%s: %v, want it built", f.Dir, err)
			}
		}
	}
}

// Where each provider is linked: by the functions of its list and by no other. The lists are exact
// (a function of a list that does not link the package fails too), so they say what each function
// serves. Imported packages are read from go list; the features every function imports through
// api (which holds every group's handlers) count by their code, the functions and methods other
// than their package initialisation that the linker kept.
var (
	knowledgeFns = []string{"files", "collections", "knowledge", "ingest", "ingestfailed"}
	runFns       = []string{"runtime", "stream", "worker"}
	memoryFns    = []string{"memory", "memoryextract"}
	// modelFns call a model: the runs, and memory extraction.
	modelFns  = slices.Concat(runFns, []string{"memoryextract"})
	mcpFns    = []string{"mcpservers", "runtime", "stream", "worker"}
	toolFns   = []string{"agents", "sessions", "runtime", "stream", "worker"}
	secretFns = []string{"agents", "mcpservers", "webhooks", "auth", "sessions", "runtime", "stream", "images", "files", "collections", "knowledge", "memory", "worker", "webhookdelivery"}
	linkLists = []struct {
		pkg  string
		code bool // counted by linked code (imported everywhere through api)
		fns  []string
	}{
		{"github.com/opensearch-project/opensearch-go/v4", false, slices.Concat(knowledgeFns, runFns, memoryFns)},
		{"github.com/aws/aws-sdk-go-v2/service/bedrockruntime", false, slices.Concat(knowledgeFns, runFns, memoryFns)},
		// executionfailed and watchdog send execution.failed to WebhookQueue; app/mem builds the
		// extraction queue its service enqueues on (the memory function, which does not enqueue,
		// is given no MEMORY_QUEUE_URL: its client is never made).
		{"github.com/aws/aws-sdk-go-v2/service/sqs", false, slices.Concat(knowledgeFns, runFns, memoryFns, []string{"webhooks", "webhookdelivery", "executionfailed", "watchdog"})},
		{"github.com/aws/aws-sdk-go-v2/service/secretsmanager", false, secretFns},
		{"github.com/santhosh-tekuri/jsonschema/v6", false, toolFns},
		{"github.com/modelcontextprotocol/go-sdk/mcp", false, mcpFns},
		{mod + "shared/mcp", false, mcpFns},
		{mod + "shared/tools", false, toolFns},
		{mod + "shared/vectors", false, slices.Concat(knowledgeFns, runFns, memoryFns)},
		{mod + "shared/knowledge", true, slices.Concat(knowledgeFns, runFns)},
		{mod + "shared/extract", true, []string{"files", "ingest"}}, // uploads are checked, ingestion extracts
		// Memory extraction resolves its model through the engine's ModelSet (app/llm).
		{mod + "shared/engine", true, modelFns},
		// The model adapters where a model is called: not in the memory function, whose service
		// has none (mem.Service; mem.Extract adds them). (shared/openai's code is linked with the
		// embedders, which call its embeddings API.)
		{mod + "shared/bedrock", true, modelFns},
		{mod + "shared/localmodel", true, modelFns},
		// Memory's feature where it is served and where agents run (the engine's recall and tools).
		{mod + "shared/memory", true, slices.Concat(memoryFns, runFns)},
		// The OpenTelemetry SDK and its exporter where agents run (docs/observability.md); gRPC,
		// which the SDK's own OTLP exporters link, and the collector of the tests nowhere.
		{"go.opentelemetry.io/otel/sdk", false, runFns},
		{mod + "shared/telemetry", false, runFns},
		{"google.golang.org/grpc", false, nil},
		{"go.opentelemetry.io/collector", false, nil},
		{"google.golang.org/protobuf/proto", false, nil},
		// current_time's zone database (0.4 MB) where tools run, not where names are only checked.
		{"time/tzdata", false, runFns},
		// Every function but meta reads the store; meta builds no App (app.Function.Bare).
		{"github.com/aws/aws-sdk-go-v2/service/dynamodb", false, slices.DeleteFunc(fnDirs(), func(d string) bool { return d == "meta" })},
		// The SDK's default credential chain (shared files, SSO, STS, IMDS) is for the dev server
		// and scripts; in Lambda the credentials are in the environment (platform.LambdaAWSConfig).
		{"github.com/aws/aws-sdk-go-v2/config", false, nil},
		{"github.com/aws/aws-sdk-go-v2/service/sts", false, nil},
		{"github.com/aws/aws-sdk-go-v2/service/sso", false, nil},
		{"github.com/aws/aws-sdk-go-v2/service/ssooidc", false, nil},
		{"github.com/aws/aws-sdk-go-v2/feature/ec2/imds", false, nil},
	}
)

// fnDirs is every function's directory.
func fnDirs() []string {
	var dirs []string
	for _, f := range app.Functions {
		dirs = append(dirs, f.Dir)
	}
	return dirs
}

const mod = "github.com/agentorch/agentorch/"

// TestFunctionsLinkOnlyTheirProviders: each function built with the Lambda recipe (linux/arm64,
// lambdarun.AWSTags) links OpenSearch, Bedrock, SQS, Secrets Manager, DynamoDB, the JSON Schema
// compiler, the MCP SDK, extraction, the knowledge feature and the engine exactly where linkLists
// says, and the SDK's default credential chain nowhere.
func TestFunctionsLinkOnlyTheirProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("links every function; runs without -short")
	}
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	goCmd := func(args ...string) []byte {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
			}
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	// Each main's transitive imports, in one go list.
	imports := map[string][]string{}
	for line := range strings.Lines(string(goCmd("list", "-tags", lambdarun.AWSTags, "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/..."))) {
		f := strings.Fields(line)
		imports[strings.TrimPrefix(f[0], mod+"functions/")] = f[1:]
	}
	// Each main's linked code: the symbol table of its binary (the recipe without -s).
	bin := t.TempDir()
	goCmd("build", "-tags", lambdarun.AWSTags, "-trimpath", "-o", bin+string(filepath.Separator), "./functions/...")
	code := map[string]map[string]bool{} // function → package → code beyond its init linked
	for _, f := range app.Functions {
		code[f.Dir] = linkedCode(t, filepath.Join(bin, f.Dir))
	}
	if len(imports) != len(app.Functions) {
		t.Errorf("go list found %d mains under functions/, app.Functions has %d", len(imports), len(app.Functions))
	}
	for _, l := range linkLists {
		for _, f := range app.Functions {
			var links bool
			if l.code {
				links = code[f.Dir][l.pkg]
			} else {
				links = slices.ContainsFunc(imports[f.Dir], func(p string) bool { return p == l.pkg || strings.HasPrefix(p, l.pkg+"/") })
			}
			if want := slices.Contains(l.fns, f.Dir); links != want {
				t.Errorf("functions/%s links %s: %v, its list says %v", f.Dir, l.pkg, links, want)
			}
		}
	}
}

// linkedCode reads which packages have functions or methods other than their initialisation in
// a binary's symbol table.
func linkedCode(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	pkgs := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		pkg, name := splitSymbol(s.Name)
		if pkg == "" || name == "init" || strings.HasPrefix(name, "init.") || strings.Contains(name, "map.init") {
			continue
		}
		pkgs[pkg] = true
	}
	return pkgs
}

// splitSymbol splits a Go symbol name into its package path and the rest: the first dot after
// the last slash ends the path ("example.com/a/b.(*T).M" → "example.com/a/b", "(*T).M").
func splitSymbol(sym string) (pkg, name string) {
	slash := strings.LastIndex(sym, "/")
	dot := strings.Index(sym[slash+1:], ".")
	if dot < 0 {
		return "", ""
	}
	return sym[:slash+1+dot], sym[slash+1+dot+1:]
}
