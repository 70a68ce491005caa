package lambdarun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/platform"
)

// buildMeta builds functions/meta the way the Makefile does, once per test binary run.
func buildMeta(tb testing.TB) string {
	tb.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(tb.TempDir(), "meta", "bootstrap")
	if _, err := lambdarun.Build(context.Background(), root, "meta", out, lambdarun.AWSTags); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestRunHealth(t *testing.T) {
	bin := buildMeta(t)
	event, err := os.ReadFile("testdata/health.json")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "meta", Event: event, Stderr: &logs})
	if err != nil {
		t.Fatalf("run: %v\nlogs:\n%s", err, logs.String())
	}
	var resp struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
	}
	if err := json.Unmarshal(res.Response, &resp); err != nil {
		t.Fatalf("response %s: %v", res.Response, err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("statusCode = %d, want 200; response %s", resp.StatusCode, res.Response)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body["status"] != "ok" {
		t.Errorf("body = %q, want {\"status\":\"ok\"}", resp.Body)
	}
	if got := resp.Headers["X-Request-Id"]; got != "lambdarun-health-1" {
		t.Errorf("X-Request-Id = %q, want the API Gateway request id", got)
	}
	if res.InitDuration <= 0 || res.InitDuration > 10*time.Second {
		t.Errorf("InitDuration = %s, want a positive cold start under 10s", res.InitDuration)
	}
	fi, _ := os.Stat(bin)
	if res.BinaryBytes != fi.Size() {
		t.Errorf("BinaryBytes = %d, want %d", res.BinaryBytes, fi.Size())
	}
}

// An event the handler cannot decode is reported through /error, as Lambda would.
func TestRunFunctionError(t *testing.T) {
	bin := buildMeta(t)
	res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "meta", Event: []byte(`[1,2,3]`)})
	var fe *lambdarun.FunctionError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FunctionError; response %s", err, res.Response)
	}
	if fe.Phase != "invoke" || len(fe.Payload) == 0 {
		t.Errorf("got phase %q payload %s, want an invoke error with a payload", fe.Phase, fe.Payload)
	}
}

// TestAWSBuildsLeaveLocalOut: the Lambda recipe (the Makefile's tags, which must be AWSTags)
// links neither the local embedding model nor its provider into any function, while the local
// recipe keeps them where knowledge bases are served.
func TestAWSBuildsLeaveLocalOut(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAMBDA_FLAGS := .*-tags (\S+)`).FindSubmatch(mk)
	if m == nil || string(m[1]) != lambdarun.AWSTags {
		t.Fatalf("the Makefile's LAMBDA_FLAGS build with tags %q, lambdarun.AWSTags is %q", m, lambdarun.AWSTags)
	}
	const mod = "github.com/agentorch/agentorch/"
	local := []string{mod + "shared/localembed", mod + "shared/embeddings/local"}
	deps := func(tags, pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", "-tags", tags, "-f", `{{.ImportPath}}`, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %s %s: %v", tags, pkg, err)
		}
		return strings.Fields(string(out))
	}
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no functions/*/main.go: %v", err)
	}
	for _, main := range mains {
		dir := filepath.Base(filepath.Dir(main))
		for _, d := range deps(lambdarun.AWSTags, "./functions/"+dir) {
			if slices.Contains(local, d) {
				t.Errorf("functions/%s built for AWS links %s", dir, d)
			}
		}
	}
	for _, want := range local {
		if !slices.Contains(deps(lambdarun.LocalTags, "./functions/knowledge"), want) {
			t.Errorf("functions/knowledge built with the local recipe does not link %s", want)
		}
	}
}

// A bootstrap reads back the configuration ConfigEnv gives it.
func TestConfigEnvRoundTrip(t *testing.T) {
	want := platform.Config{Region: "eu-west-1", Table: "AppTable-t1", Bucket: "mediabucket-t1",
		IngestQueueURL: "http://127.0.0.1:4576/queue/IngestQueue-t1", ExecQueueURL: "http://127.0.0.1:4576/queue/ExecutionQueue-t1",
		MemoryQueueURL: "http://127.0.0.1:4576/queue/MemoryQueue-t1",
		DynamoEndpoint: "http://127.0.0.1:1", S3Endpoint: "http://127.0.0.1:2", SQSEndpoint: "http://127.0.0.1:3",
		OpenSearchEndpoint: "http://127.0.0.1:4", TokenSecret: "s3cret", ModelProvider: "local",
		EmbeddingProvider: "local", LocalEmbedDir: "/models", PublicBaseURL: "http://127.0.0.1:3000",
		OpenAIBaseURL: "http://127.0.0.1:5/v1", OpenAIModel: "m", BedrockModel: "b"}
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "knowledge")
	for _, kv := range lambdarun.ConfigEnv(want) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	// What the stack does not set keeps its Lambda default; the rerank Region is the Region's.
	want.RerankRegion = want.Region
	want.TokenTTL, want.KeyCacheTTL, want.MaxBodyBytes, want.LogFormat, want.LogLevel, want.InLambda = got.TokenTTL, got.KeyCacheTTL, got.MaxBodyBytes, got.LogFormat, got.LogLevel, true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadConfig after ConfigEnv (-want +got):\n%s", diff)
	}
}

// BenchmarkColdStart measures what a cold start of each function costs locally: exec to the
// first /next (init-ms, the median of the runs), peak memory and the binary's size, for every
// functions/<dir>, built with the Lambda recipe for the host. The environment is the template's
// (every endpoint and queue set, as on AWS) over the local stack's names; init makes no network
// call, so no stack needs to run. The event is the health check: the functions that do not serve
// it answer 404 or, for the queue consumers, an error, which does not touch the init figure.
func BenchmarkColdStart(b *testing.B) {
	root, err := localstack.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		b.Fatalf("no functions/*/main.go: %v", err)
	}
	event, err := os.ReadFile("testdata/health.json")
	if err != nil {
		b.Fatal(err)
	}
	env := []string{
		"OPENSEARCH_ENDPOINT=" + platform.LocalOpenSearchEndpoint,
		"INGEST_QUEUE_URL=" + platform.LocalSQSEndpoint + "/000000000000/" + platform.LocalQueue,
		"EXECUTION_QUEUE_URL=" + platform.LocalSQSEndpoint + "/000000000000/ExecutionQueue",
		"MODEL_PROVIDER=bedrock", "EMBEDDING_PROVIDER=bedrock",
	}
	for _, m := range mains {
		dir := filepath.Base(filepath.Dir(m))
		bin := filepath.Join(b.TempDir(), dir, "bootstrap")
		if _, err := lambdarun.Build(b.Context(), root, dir, bin, lambdarun.AWSTags); err != nil {
			b.Fatal(err)
		}
		b.Run(dir, func(b *testing.B) {
			var inits []time.Duration
			var rss, size int64
			for range b.N {
				res, err := lambdarun.Run(b.Context(), lambdarun.Options{Bootstrap: bin, Function: dir, Event: event, Env: env})
				var fe *lambdarun.FunctionError
				if err != nil && !(errors.As(err, &fe) && fe.Phase == "invoke") {
					b.Fatal(err)
				}
				if res.InitDuration <= 0 {
					b.Fatalf("%s never asked for an event", dir)
				}
				inits = append(inits, res.InitDuration)
				rss = max(rss, res.MaxRSSBytes)
				size = res.BinaryBytes
			}
			slices.Sort(inits)
			b.ReportMetric(float64(inits[len(inits)/2].Microseconds())/1000, "init-ms")
			b.ReportMetric(float64(rss), "maxrss-bytes")
			b.ReportMetric(float64(size), "binary-bytes")
		})
	}
}
