// Command invoke builds one function for Lambda and runs it once on an event through the local
// Runtime API stand-in (infra/lambdarun), the way Lambda would, against the stack of a running
// make dev:
//
//	go run ./scripts/invoke -fn agents -event events/agents-get-agent.json
//
// The function gets make dev's configuration: its endpoints, the template's table, bucket and
// queues as make dev names them, the token secret, the local model and embedder as defaults and
// the local embedder's files (the bootstrap is built with lambdarun.LocalTags, since make dev's
// knowledge bases embed with it; -aws builds the deployed recipe, lambdarun.AWSTags, instead).
//
// The function's response goes to stdout; its logs, the cold start (exec to the first request
// for work) and the binary's size go to stderr. A function behind a streaming function URL
// (template.yaml's StreamFunction) is invoked in the streaming mode, as its URL invokes it: its
// body goes to stdout as it comes, each server-sent event when written, its status and headers
// to stderr:
//
//	make invoke FN=stream EVENT=events/stream-execute.json SESSION_ID=<a session of make dev>
//
// A placeholder {{NAME}} in the event is replaced by -var NAME=VALUE or the environment variable
// NAME; {{API_KEY}} also by -key or by the key make dev wrote to .cache/dev-api-key (with PORT
// set to another port than 3000, .cache/dev-api-key-<PORT>). DYNAMODB_PORT, SQS_PORT, S3_PORT and
// OPENSEARCH_PORT name the stand-ins' ports as they do for make dev.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/platform"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run() error {
	fn := flag.String("fn", os.Getenv("FN"), "function directory under functions/ (meta, agents, auth)")
	eventPath := flag.String("event", os.Getenv("EVENT"), "event JSON file")
	key := flag.String("key", "", "API key for {{API_KEY}} (default: .cache/dev-api-key)")
	timeout := flag.Duration("timeout", lambdarun.DefaultTimeout, "invocation deadline")
	memory := flag.Int("memory", lambdarun.DefaultMemoryMB, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
	quiet := flag.Bool("quiet", false, "hide the function's own logs")
	awsRecipe := flag.Bool("aws", false, "build as make build does (without the local embedder: make dev's knowledge bases then answer 400)")
	vars := map[string]string{}
	flag.Func("var", "NAME=VALUE for {{NAME}} in the event (repeatable; else the environment variable NAME)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return errors.New("want NAME=VALUE")
		}
		vars[k] = v
		return nil
	})
	flag.Parse()
	if *fn == "" || *eventPath == "" {
		flag.Usage()
		return errors.New("-fn and -event are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := localstack.RepoRoot()
	if err != nil {
		return err
	}
	event, err := os.ReadFile(*eventPath)
	if err != nil {
		return err
	}
	if *key != "" {
		vars["API_KEY"] = *key
	}
	apiPort, err := localstack.DevAPIPort()
	if err != nil {
		return err
	}
	if event, err = fill(event, vars, localstack.DevKeyFile(root, apiPort)); err != nil {
		return err
	}

	cfg, err := devConfig(ctx, root, *awsRecipe)
	if err != nil {
		return err
	}

	tags, recipe := lambdarun.LocalTags, "local"
	if *awsRecipe {
		tags, recipe = lambdarun.AWSTags, "aws"
	}
	bin := filepath.Join(root, ".cache", "bin", recipe, *fn, "bootstrap")
	start := time.Now()
	size, err := lambdarun.Build(ctx, root, *fn, bin, tags)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "invoke: built %s (%.1f MB) in %s\n", rel(root, bin), float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))

	opts := lambdarun.Options{Bootstrap: bin, Function: *fn, Event: event, Env: lambdarun.ConfigEnv(cfg),
		Timeout: *timeout, MemoryMB: *memory, Stderr: os.Stderr}
	if *quiet {
		opts.Stderr = nil
	}
	streams, err := streaming(root, *fn)
	if err != nil {
		return err
	}
	if streams {
		// Invoked as its function URL invokes it: the body goes to stdout as it comes, each
		// server-sent event when the function writes it; the prelude's status and headers to stderr.
		opts.Stream = lambdarun.NewHTTPWriter(os.Stdout, func(p lambdarun.HTTPPrelude) error {
			fmt.Fprintf(os.Stderr, "invoke: status %d, headers %v, cookies %v\n", p.StatusCode, p.Headers, p.Cookies)
			return nil
		})
	}
	res, err := lambdarun.Run(ctx, opts)
	var fe *lambdarun.FunctionError
	if err != nil && !errors.As(err, &fe) {
		return err
	}
	if !streams {
		_, _ = os.Stdout.Write(res.Response)
		fmt.Println()
	} else if fe != nil {
		fmt.Println(string(fe.Payload))
	}
	fmt.Fprintf(os.Stderr, "invoke: cold start (exec to first /next) %.1f ms, first byte %.1f ms, duration %.1f ms, max RSS %.1f MB, binary %d bytes\n",
		ms(res.InitDuration), ms(res.FirstByte), ms(res.Duration), float64(res.MaxRSSBytes)/(1<<20), res.BinaryBytes)
	return err
}

// streaming reports whether template.yaml puts the function behind a function URL whose
// responses stream (StreamFunction): it is then invoked in the streaming mode.
func streaming(root, dir string) (bool, error) {
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return false, err
	}
	for _, f := range tmpl.Functions() {
		if f.Dir == dir {
			return f.Streams(), nil
		}
	}
	return false, nil
}

// devConfig is the configuration make dev serves its own functions with (scripts/dev): the
// stand-ins on platform's local ports or those the environment names for make dev
// (localstack.DevPorts), the template's resources named as make dev names them
// (localstack.CreateResources, idempotent: on a running make dev it finds what it made), the
// local model and embedder as defaults, unless the shell names others as it would for make dev.
// For the AWS recipe the defaults are the template's (bedrock) and no local model is configured.
func devConfig(ctx context.Context, root string, awsRecipe bool) (platform.Config, error) {
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return platform.Config{}, err
	}
	ports, err := localstack.DevPorts()
	if err != nil {
		return platform.Config{}, err
	}
	ep := ports.Endpoints()
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := localstack.CreateResources(rctx, localstack.AWSConfig(), ep, tmpl, "")
	if err != nil {
		return platform.Config{}, fmt.Errorf("the local stack does not answer at %s (is make dev running?): %w", ep.DynamoDB, err)
	}
	names, err := res.Local()
	if err != nil {
		return platform.Config{}, err
	}
	public := os.Getenv("PUBLIC_BASE_URL")
	if public == "" {
		public = "http://127.0.0.1:" + envOr("PORT", "3000")
	}
	provider, models := "local", filepath.Join(root, ".cache", "models")
	if awsRecipe {
		provider, models = "bedrock", ""
	}
	return platform.Config{
		Region:         localstack.Region,
		DynamoEndpoint: ep.DynamoDB, S3Endpoint: ep.S3, SQSEndpoint: ep.SQS, OpenSearchEndpoint: ep.OpenSearch,
		Table: names.Table, Bucket: names.Bucket, IngestQueueURL: names.QueueURL, ExecQueueURL: res.Queues["ExecutionQueue"],
		MemoryQueueURL:    res.Queues["MemoryQueue"],
		TokenSecret:       envOr("TOKEN_SECRET", platform.LocalTokenSecret),
		ModelProvider:     envOr("MODEL_PROVIDER", provider),
		EmbeddingProvider: envOr("EMBEDDING_PROVIDER", provider),
		LocalEmbedDir:     models,
		PublicBaseURL:     public,
		OpenAIBaseURL:     os.Getenv("OPENAI_BASE_URL"), OpenAIAPIKey: os.Getenv("OPENAI_API_KEY"), OpenAIModel: os.Getenv("OPENAI_MODEL"),
		BedrockModel: os.Getenv("BEDROCK_MODEL_ID"),
	}, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// placeholder is {{NAME}} in an event.
var placeholder = regexp.MustCompile(`\{\{([A-Z][A-Z0-9_]*)\}\}`)

// fill replaces each {{NAME}} in event by vars[NAME], else the environment variable NAME; API_KEY
// falls back to the key make dev wrote to keyFile.
func fill(event []byte, vars map[string]string, keyFile string) ([]byte, error) {
	var missing []string
	out := placeholder.ReplaceAllFunc(event, func(m []byte) []byte {
		name := string(placeholder.FindSubmatch(m)[1])
		if v, ok := vars[name]; ok {
			return []byte(v)
		}
		if v := os.Getenv(name); v != "" {
			return []byte(v)
		}
		if name == "API_KEY" {
			if b, err := os.ReadFile(keyFile); err == nil {
				return bytes.TrimSpace(b)
			}
		}
		if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return m
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("the event needs %s: pass -var NAME=VALUE or set the environment variable (API_KEY also comes from -key or from make dev's %s)",
			strings.Join(missing, ", "), keyFile)
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
