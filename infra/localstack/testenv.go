package localstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/platform"
)

// Environment variables through which one running stack is shared by every test binary of a
// run (make test sets them); without them each test binary starts its own.
const (
	EnvTestDynamoDB   = "AGENTORCH_TEST_DYNAMODB"
	EnvTestSQS        = "AGENTORCH_TEST_SQS"
	EnvTestS3         = "AGENTORCH_TEST_S3"
	EnvTestOpenSearch = "AGENTORCH_TEST_OPENSEARCH"
)

// TestTokenSecret signs bearer tokens in tests.
const TestTokenSecret = "test-token-secret-not-for-production"

// RunTests is the whole TestMain of a package whose tests use NewTestEnv:
//
//	func TestMain(m *testing.M) { localstack.RunTests(m) }
//
// It uses the stack named by the AGENTORCH_TEST_* variables or, when they are unset, installs
// what is missing and starts one on free ports for this test binary, runs the tests, stops the
// stack and exits with the tests' status.
func RunTests(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if _, ok := TestEndpoints(); ok {
		return m.Run()
	}
	ctx := context.Background()
	root, err := RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "localstack:", err)
		return 1
	}
	if err := EnsureDeps(ctx, root, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "localstack:", err)
		return 1
	}
	st, err := Start(ctx, Options{Root: root})
	if err != nil {
		fmt.Fprintln(os.Stderr, "localstack:", err)
		return 1
	}
	defer func() { _ = st.Stop() }()
	ExportTestEndpoints(st.Endpoints())
	return m.Run()
}

// lazy is the stack of a test binary whose tests start it on first use (LazyTestEnv).
var lazy struct {
	once  sync.Once
	stack *Stack
	err   error
}

// RunLazyTests is the whole TestMain of a package where only some tests use the local stack
// (the others run over in-memory fakes, or are unit tests):
//
//	func TestMain(m *testing.M) { localstack.RunLazyTests(m) }
//
// The first LazyTestEnv starts the stack, as RunTests would; RunLazyTests stops it after the
// tests and exits with their status.
func RunLazyTests(m *testing.M) {
	code := m.Run()
	if lazy.stack != nil {
		_ = lazy.stack.Stop()
	}
	os.Exit(code)
}

// LazyTestEnv is fresh resources on the local stack (NewTestEnv), the stack named by the
// AGENTORCH_TEST_* variables or else started on first use for this test binary. With -short the
// test is skipped: it is end-to-end.
func LazyTestEnv(t testing.TB) *TestEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end over the local stack; runs without -short")
	}
	lazy.once.Do(func() {
		if _, ok := TestEndpoints(); ok {
			return
		}
		ctx := context.Background()
		root, err := RepoRoot()
		if err == nil {
			err = EnsureDeps(ctx, root, os.Stderr)
		}
		if err == nil {
			lazy.stack, err = Start(ctx, Options{Root: root})
		}
		if err != nil {
			lazy.err = fmt.Errorf("localstack: %w", err)
			return
		}
		ExportTestEndpoints(lazy.stack.Endpoints())
	})
	if lazy.err != nil {
		t.Fatal(lazy.err)
	}
	return NewTestEnv(t)
}

// TestEndpoints reads the shared stack's endpoints from the environment.
func TestEndpoints() (Endpoints, bool) {
	ep := Endpoints{DynamoDB: os.Getenv(EnvTestDynamoDB), SQS: os.Getenv(EnvTestSQS), S3: os.Getenv(EnvTestS3),
		OpenSearch: os.Getenv(EnvTestOpenSearch)}
	return ep, ep.DynamoDB != "" && ep.SQS != "" && ep.S3 != "" && ep.OpenSearch != ""
}

// ExportTestEndpoints sets the AGENTORCH_TEST_* variables so that this process and its children
// use the stack at ep.
func ExportTestEndpoints(ep Endpoints) {
	_ = os.Setenv(EnvTestDynamoDB, ep.DynamoDB)
	_ = os.Setenv(EnvTestSQS, ep.SQS)
	_ = os.Setenv(EnvTestS3, ep.S3)
	_ = os.Setenv(EnvTestOpenSearch, ep.OpenSearch)
}

// TestEnv is one test's own set of the template's resources in the shared stack.
type TestEnv struct {
	AWS       aws.Config // static test credentials, region us-east-1
	Endpoints Endpoints
	Resources *Resources
	Template  *sam.Template
	// Config is platform.LoadConfig() pointed at this env's resources and the stack.
	Config platform.Config
	suffix string
}

// NewTestEnv creates fresh resources from template.yaml under a unique suffix, so tests do not see
// each other's data, and deletes the tables and queues when the test ends. The package's TestMain
// must call RunTests.
func NewTestEnv(tb testing.TB) *TestEnv {
	tb.Helper()
	ep, ok := TestEndpoints()
	if !ok {
		tb.Fatal("localstack: no stack is running: the package's TestMain must call localstack.RunTests(m)")
	}
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var rnd [5]byte
	_, _ = rand.Read(rnd[:])
	suffix := "-t" + hex.EncodeToString(rnd[:])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := &TestEnv{AWS: AWSConfig(), Endpoints: ep, Template: tmpl, suffix: suffix}
	if env.Resources, err = CreateResources(ctx, env.AWS, ep, tmpl, suffix); err != nil {
		tb.Fatalf("localstack: %v", err)
	}
	tb.Cleanup(func() { env.delete() })

	cfg, err := platform.LoadConfig()
	if err != nil {
		tb.Fatalf("localstack: %v", err)
	}
	names, err := env.Resources.Local()
	if err != nil {
		tb.Fatalf("localstack: %v", err)
	}
	cfg.Region = Region
	cfg.Table, cfg.Bucket, cfg.IngestQueueURL = names.Table, names.Bucket, names.QueueURL
	cfg.ExecQueueURL = env.Resources.Queues["ExecutionQueue"] // consumed only where a test runs the event sources
	cfg.WebhookQueueURL = env.Resources.Queues["WebhookQueue"]
	cfg.MemoryQueueURL = env.Resources.Queues["MemoryQueue"] // memory extraction, consumed where a test runs the event sources
	cfg.DynamoEndpoint, cfg.S3Endpoint, cfg.SQSEndpoint = ep.DynamoDB, ep.S3, ep.SQS
	// Knowledge bases: the run's OpenSearch stand-in, and the local embedder's files in the
	// repository's cache (fetched once with npm, as the dev server does).
	cfg.OpenSearchEndpoint = ep.OpenSearch
	cfg.EmbeddingProvider, cfg.LocalEmbedDir = "local", filepath.Join(root, ".cache", "models")
	cfg.TokenSecret, cfg.TokenSecretARN = TestTokenSecret, ""
	cfg.InLambda = false
	env.Config = cfg
	return env
}

// DynamoDB returns a client for the stack's DynamoDB.
func (e *TestEnv) DynamoDB() *dynamodb.Client { return e.Endpoints.DynamoDBClient(e.AWS) }

// S3 returns a path-style client for the stack's S3.
func (e *TestEnv) S3() *s3.Client { return e.Endpoints.S3Client(e.AWS) }

// SQS returns a client for the stack's SQS.
func (e *TestEnv) SQS() *sqs.Client { return e.Endpoints.SQSClient(e.AWS) }

// OpenSearch returns a client of the official Go client library for the stack's OpenSearch
// stand-in. The stand-in is shared by every test of a run: name indices with IndexName.
func (e *TestEnv) OpenSearch(tb testing.TB) *opensearchapi.Client {
	tb.Helper()
	c, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{e.Endpoints.OpenSearch}}})
	if err != nil {
		tb.Fatalf("localstack: OpenSearch client for %q: %v", e.Endpoints.OpenSearch, err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// IndexName is base with this env's unique suffix: OpenSearch indices named so are this test's
// own and are deleted when it ends.
func (e *TestEnv) IndexName(base string) string { return base + e.suffix }

// delete removes the env's tables, queues and OpenSearch indices; buckets stay (gofakes3 deletes
// only empty ones and they cost next to nothing).
func (e *TestEnv) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.Endpoints.OpenSearch != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, e.Endpoints.OpenSearch+"/*"+e.suffix, nil)
		if err == nil {
			if res, err := http.DefaultClient.Do(req); err == nil {
				_ = res.Body.Close()
			}
		}
	}
	for _, t := range e.Resources.Tables {
		_, _ = e.DynamoDB().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t)})
	}
	for _, q := range e.Resources.Queues {
		_, _ = e.SQS().DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q)})
	}
}

// LocalNames are the resources the functions' configuration names: the table, the bucket and the
// ingestion queue's URL.
type LocalNames struct {
	Table, Bucket, QueueURL string
}

// Local picks the resources that platform.Config refers to, by their logical ids (the platform's
// local defaults are those ids).
func (r *Resources) Local() (LocalNames, error) {
	var n LocalNames
	var ok bool
	if n.Table, ok = r.Tables[platform.LocalTable]; !ok {
		return n, fmt.Errorf("template.yaml has no table %s (platform.LocalTable)", platform.LocalTable)
	}
	for id, name := range r.Buckets {
		if strings.EqualFold(id, platform.LocalBucket) {
			n.Bucket = name
		}
	}
	if n.Bucket == "" {
		return n, fmt.Errorf("template.yaml has no bucket %s (platform.LocalBucket)", platform.LocalBucket)
	}
	if n.QueueURL, ok = r.Queues[platform.LocalQueue]; !ok {
		return n, fmt.Errorf("template.yaml has no queue %s (platform.LocalQueue)", platform.LocalQueue)
	}
	return n, nil
}
