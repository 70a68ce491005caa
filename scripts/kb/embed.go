package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/localembed"
	"github.com/agentorch/agentorch/shared/platform"
)

// embedBatch is how many lines go to the embedder per call.
const embedBatch = 64

// embed runs `kb embed`: one text a line in, one embedding a line out.
func embed(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("kb embed", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	provider := fs.String("provider", embeddings.ProviderLocal, "local, bedrock or openai")
	model := fs.String("model", "", "the provider's model (default: the provider's default)")
	dims := fs.Int("dimensions", 0, "vector size (default: the model's default)")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("want one FILE, got %d\n%s", len(files), usage)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	providers, err := embedProviders(ctx, *provider)
	if err != nil {
		return err
	}
	cfg, fields := providers.Resolve(domain.Embedding{Provider: *provider, Model: *model, Dimensions: *dims})
	if len(fields) > 0 {
		return flagError(domain.Invalid(fields))
	}
	e, err := providers.Embedder(ctx, cfg)
	if err != nil {
		return err
	}
	var in io.Reader = stdin
	if files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		in = f
	}
	out := json.NewEncoder(stdout)
	out.SetEscapeHTML(false)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	var batch []string
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		vecs, err := e.Embed(ctx, batch)
		if err != nil {
			return err
		}
		for i, text := range batch {
			tokens := e.Tokens(text)
			if tokens > e.MaxTokens() {
				fmt.Fprintf(os.Stderr, "kb: warning: line %d has %d tokens, over the model's %d: ingestion would split it\n", n+1, tokens, e.MaxTokens())
			}
			if err := out.Encode(struct {
				Index     int       `json:"index"`
				Text      string    `json:"text"`
				Tokens    int       `json:"tokens"`
				Embedding []float32 `json:"embedding"`
			}{n, text, tokens, vecs[i]}); err != nil {
				return err
			}
			n++
		}
		batch = batch[:0]
		return nil
	}
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if batch = append(batch, text); len(batch) == embedBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}

// embedProviders offers the named provider as a deployment would: the local model's files in
// LOCALEMBED_DIR or the repository's .cache/models, Bedrock through the environment's AWS
// configuration, an OpenAI-compatible server at OPENAI_BASE_URL.
func embedProviders(ctx context.Context, provider string) (*embeddings.Providers, error) {
	opts := embeddings.Options{DefaultProvider: provider,
		OpenAI: embeddings.OpenAIOptions{BaseURL: os.Getenv("OPENAI_BASE_URL"), APIKey: os.Getenv("OPENAI_API_KEY")}}
	switch provider {
	case embeddings.ProviderLocal:
		dir := os.Getenv("LOCALEMBED_DIR")
		if dir == "" {
			root, err := localstack.RepoRoot()
			if err != nil {
				return nil, fmt.Errorf("%w: set LOCALEMBED_DIR to the local model's cache", err)
			}
			dir = filepath.Join(root, ".cache", "models")
		}
		if _, err := localembed.EnsureFiles(ctx, dir); err != nil {
			return nil, fmt.Errorf("local model files: %w", err)
		}
		opts.Local = local.Loader(dir)
	case embeddings.ProviderBedrock:
		cfg, err := platform.LoadConfig()
		if err != nil {
			return nil, err
		}
		cfg.InLambda = true // real AWS, not the local stack's endpoints
		awsCfg, err := platform.AWSConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		opts.Bedrock = bedrockruntime.NewFromConfig(awsCfg)
	case embeddings.ProviderOpenAI:
		if opts.OpenAI.BaseURL == "" {
			return nil, errors.New("--provider openai needs OPENAI_BASE_URL (e.g. https://api.openai.com/v1) and OPENAI_API_KEY")
		}
	default:
		return nil, fmt.Errorf("--provider: unknown provider %q: use local, bedrock or openai", provider)
	}
	p, err := embeddings.New(opts)
	if err != nil {
		return nil, fmt.Errorf("--provider: %w", err)
	}
	return p, nil
}
