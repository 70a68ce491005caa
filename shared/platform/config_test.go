package platform

import (
	"path/filepath"
	"strings"
	"testing"
)

// clearEnv unsets, for the test, every variable LoadConfig reads that the machine may set.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, name := range []string{"AWS_LAMBDA_FUNCTION_NAME", "OPENSEARCH_ENDPOINT", "EMBEDDING_PROVIDER", "LOCALEMBED_DIR",
		"OPENAI_BASE_URL", "TOKEN_SECRET", "TOKEN_SECRET_ARN", "PUBLIC_BASE_URL"} {
		t.Setenv(name, "")
	}
}

// TestLoadConfigKnowledge: the knowledge settings default to the local stack (the OpenSearch
// stand-in, the local embedder with a cache directory) and to AWS in Lambda (bedrock, no local
// model); a default provider the deployment cannot offer fails at load.
func TestLoadConfigKnowledge(t *testing.T) {
	t.Run("local defaults", func(t *testing.T) {
		clearEnv(t)
		c, err := LoadConfig()
		if err != nil {
			t.Fatal(err)
		}
		if c.OpenSearchEndpoint != LocalOpenSearchEndpoint || c.EmbeddingProvider != "local" || !strings.HasSuffix(c.LocalEmbedDir, filepath.Join("agentorch", "models")) {
			t.Errorf("OpenSearchEndpoint %q, EmbeddingProvider %q, LocalEmbedDir %q", c.OpenSearchEndpoint, c.EmbeddingProvider, c.LocalEmbedDir)
		}
	})
	t.Run("lambda defaults", func(t *testing.T) {
		clearEnv(t)
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
		t.Setenv("TOKEN_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:1:secret:x")
		t.Setenv("OPENSEARCH_ENDPOINT", "search-kb.us-east-1.es.amazonaws.com")
		c, err := LoadConfig()
		if err != nil {
			t.Fatal(err)
		}
		if c.OpenSearchEndpoint != "search-kb.us-east-1.es.amazonaws.com" || c.EmbeddingProvider != "bedrock" || c.LocalEmbedDir != "" {
			t.Errorf("OpenSearchEndpoint %q, EmbeddingProvider %q, LocalEmbedDir %q", c.OpenSearchEndpoint, c.EmbeddingProvider, c.LocalEmbedDir)
		}
	})
	t.Run("explicit", func(t *testing.T) {
		clearEnv(t)
		t.Setenv("EMBEDDING_PROVIDER", "OpenAI")
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
		t.Setenv("LOCALEMBED_DIR", "/srv/models")
		c, err := LoadConfig()
		if err != nil {
			t.Fatal(err)
		}
		if c.EmbeddingProvider != "openai" || c.LocalEmbedDir != "/srv/models" {
			t.Errorf("EmbeddingProvider %q, LocalEmbedDir %q", c.EmbeddingProvider, c.LocalEmbedDir)
		}
	})
	for name, env := range map[string]map[string]string{
		"unknown provider":          {"EMBEDDING_PROVIDER": "mistral"},
		"openai without a base URL": {"EMBEDDING_PROVIDER": "openai"},
		"local in lambda without a cache": {"AWS_LAMBDA_FUNCTION_NAME": "fn", "TOKEN_SECRET_ARN": "arn:x",
			"EMBEDDING_PROVIDER": "local"},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), "EMBEDDING_PROVIDER") {
				t.Errorf("LoadConfig() error = %v, want one naming EMBEDDING_PROVIDER", err)
			}
		})
	}
}
