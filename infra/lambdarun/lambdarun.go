// Package lambdarun runs a real Lambda bootstrap binary locally behind a minimal stand-in of the
// Lambda Runtime API (aws-lambda-rie and SAM CLI are not obtainable here): it serves one event,
// collects the response and measures the cold start, the time from exec to the function's first
// request for work.
package lambdarun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/platform"
)

// Defaults of an invocation, as template.yaml's Globals set them.
const (
	DefaultMemoryMB = 256
	DefaultTimeout  = 29 * time.Second
)

// Options configure one invocation.
type Options struct {
	Bootstrap string        // path of the built bootstrap
	Function  string        // the function's name (AWS_LAMBDA_FUNCTION_NAME)
	Event     []byte        // the payload served by /next
	Env       []string      // KEY=VALUE on top of the Lambda variables and LocalEnv()
	MemoryMB  int           // AWS_LAMBDA_FUNCTION_MEMORY_SIZE; DefaultMemoryMB when 0
	Timeout   time.Duration // the invocation deadline; DefaultTimeout when 0
	Stderr    io.Writer     // the function's output (its logs); discarded when nil
	// Stream, when set, invokes the function as InvokeWithResponseStream does (what a function
	// URL in RESPONSE_STREAM mode does): the response the function streams is written to Stream
	// as each chunk arrives (NewHTTPWriter takes a function URL's response apart), and kept in
	// Result.Response too. Without it the response is collected whole, as Invoke does.
	Stream io.Writer
}

// Result is the outcome of one invocation.
type Result struct {
	Response     []byte        // what the function posted to /response (or to /error)
	InitDuration time.Duration // from exec to the first /next: the cold start
	Duration     time.Duration // from serving the event to the function's answer (its last byte)
	FirstByte    time.Duration // from serving the event to the first byte of the response
	Streamed     bool          // the runtime posted the response chunked (the streaming response mode)
	BinaryBytes  int64         // size of the bootstrap
	MaxRSSBytes  int64         // peak resident memory of the process
}

// FunctionError is an invocation the function reported as failed, through
// /invocation/{id}/error or /init/error, or in the trailers of a streamed response.
type FunctionError struct {
	Phase   string // "init" or "invoke"
	Type    string // the Lambda-Runtime-Function-Error-Type header
	Payload []byte // the error document the function posted
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("function %s error %s: %s", e.Phase, e.Type, e.Payload)
}

// LocalEnv is the environment that points a function at the local stack (make dev) rather than
// at AWS: platform.LoadConfig takes AWS_LAMBDA_FUNCTION_NAME to mean "on AWS", so endpoints,
// names and the token secret are passed explicitly. Queue URLs depend on the stack that made the
// queues: ConfigEnv gives them, with everything else a running stack's configuration holds.
func LocalEnv() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + platform.LocalDynamoEndpoint,
		"AWS_ENDPOINT_URL_S3=" + platform.LocalS3Endpoint,
		"AWS_ENDPOINT_URL_SQS=" + platform.LocalSQSEndpoint,
		"OPENSEARCH_ENDPOINT=" + platform.LocalOpenSearchEndpoint,
		"TABLE_NAME=" + platform.LocalTable,
		"BUCKET_NAME=" + platform.LocalBucket,
		"TOKEN_SECRET=" + platform.LocalTokenSecret,
		"CREDENTIALS_KEY=" + platform.LocalCredentialsKey,
		"MCP_ALLOWED_HOSTS=" + platform.LocalMCPAllowedHosts,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"LOG_FORMAT=json",
	}
}

// ConfigEnv is the environment under which a bootstrap reads cfg (platform.LoadConfig in
// Lambda), for a stack's configuration: the one make dev serves its own functions with, or a
// test's. It sets what the local stack sets (endpoints, names, queues, the token secret, the
// default providers, the local model's cache, the public base URL) and clears the rest.
func ConfigEnv(cfg platform.Config) []string {
	return []string{
		"AWS_REGION=" + cfg.Region,
		"AWS_DEFAULT_REGION=" + cfg.Region,
		"AWS_ENDPOINT_URL_DYNAMODB=" + cfg.DynamoEndpoint,
		"AWS_ENDPOINT_URL_S3=" + cfg.S3Endpoint,
		"AWS_ENDPOINT_URL_SQS=" + cfg.SQSEndpoint,
		"OPENSEARCH_ENDPOINT=" + cfg.OpenSearchEndpoint,
		"TABLE_NAME=" + cfg.Table,
		"BUCKET_NAME=" + cfg.Bucket,
		"INGEST_QUEUE_URL=" + cfg.IngestQueueURL,
		"EXECUTION_QUEUE_URL=" + cfg.ExecQueueURL,
		"WEBHOOK_QUEUE_URL=" + cfg.WebhookQueueURL,
		"MEMORY_QUEUE_URL=" + cfg.MemoryQueueURL,
		"TOKEN_SECRET=" + cfg.TokenSecret,
		"TOKEN_SECRET_ARN=" + cfg.TokenSecretARN,
		"CREDENTIALS_KEY=" + cfg.CredentialsKey,
		"CREDENTIALS_KEY_ARN=" + cfg.CredentialsKeyARN,
		"MCP_ALLOWED_HOSTS=" + strings.Join(cfg.MCPAllowedHosts, ","),
		"MODEL_PROVIDER=" + cfg.ModelProvider,
		"EMBEDDING_PROVIDER=" + cfg.EmbeddingProvider,
		"LOCALEMBED_DIR=" + cfg.LocalEmbedDir,
		"PUBLIC_BASE_URL=" + cfg.PublicBaseURL,
		"STREAM_BASE_URL=" + cfg.StreamBaseURL,
		"OPENAI_BASE_URL=" + cfg.OpenAIBaseURL,
		"OPENAI_API_KEY=" + cfg.OpenAIAPIKey,
		"OPENAI_MODEL=" + cfg.OpenAIModel,
		"BEDROCK_MODEL_ID=" + cfg.BedrockModel,
	}
}

// Build tags of the two recipes.
const (
	// AWSTags is the recipe of make build and SAM (the Makefile's LAMBDA_FLAGS): the functions
	// without the local stand-ins AWS never uses (shared/app/kb/nolocal.go).
	AWSTags = "lambda.norpc,nolocal"
	// LocalTags keeps the local embedding model, for bootstraps run against the local stack,
	// whose knowledge bases embed with it (scripts/invoke).
	LocalTags = "lambda.norpc"
)

// Build compiles ./functions/<dir> of the repository at root with the Lambda recipe and the
// build tags given (AWSTags or LocalTags) for Linux on the host's architecture, into out, and
// returns the binary's size.
func Build(ctx context.Context, root, dir, out, tags string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, fmt.Errorf("build %s: %w", dir, err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-trimpath", "-ldflags", "-s -w",
		"-o", out, "./functions/"+dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build %s: %w\n%s", dir, err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return 0, fmt.Errorf("build %s: %w", dir, err)
	}
	return fi.Size(), nil
}

// lambdaEnv is what the Lambda service sets for a provided.al2023 function.
func lambdaEnv(o Options, api string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=" + filepath.Dir(o.Bootstrap),
		"AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023",
		"AWS_LAMBDA_RUNTIME_API=" + api,
		"AWS_LAMBDA_FUNCTION_NAME=" + o.Function,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(o.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + o.Function,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + time.Now().UTC().Format("2006/01/02") + "/[$LATEST]local",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
	}
}
