package embeddings_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// The package implements the feature's ports in domain terms.
var _ knowledge.Embedders = (*embeddings.Providers)(nil)

// noModel is a local provider whose model these tests never load.
func noModel(context.Context, string) (embeddings.Embedder, error) {
	return nil, errors.New("the local model is not loaded in these tests")
}

// allProviders offers every provider; nothing in these tests calls out.
func allProviders(t *testing.T, def string) *embeddings.Providers {
	t.Helper()
	client, _ := newBedrock(t, nil)
	p, err := embeddings.New(embeddings.Options{
		DefaultProvider: def,
		Local:           noModel,
		Bedrock:         client,
		OpenAI:          embeddings.OpenAIOptions{BaseURL: "http://127.0.0.1:9/v1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolveDefaults(t *testing.T) {
	tests := []struct {
		name string
		def  string
		in   domain.Embedding
		want domain.Embedding
	}{
		{"nothing, local default", "local", domain.Embedding{}, domain.Embedding{Provider: "local", Model: "use-lite-glove", Dimensions: 612}},
		{"nothing, bedrock default", "bedrock", domain.Embedding{}, domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v2:0", Dimensions: 1024}},
		{"empty default is local", "", domain.Embedding{}, domain.Embedding{Provider: "local", Model: "use-lite-glove", Dimensions: 612}},
		{"model of the default provider", "local", domain.Embedding{Model: "use-lite"}, domain.Embedding{Provider: "local", Model: "use-lite", Dimensions: 512}},
		{"provider case and spaces", "local", domain.Embedding{Provider: " Bedrock ", Dimensions: 256}, domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v2:0", Dimensions: 256}},
		{"titan v2 512", "local", domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v2:0", Dimensions: 512}, domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v2:0", Dimensions: 512}},
		{"titan v1", "local", domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v1"}, domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v1", Dimensions: 1536}},
		{"openai default", "local", domain.Embedding{Provider: "openai"}, domain.Embedding{Provider: "openai", Model: "text-embedding-3-small", Dimensions: 1536}},
		{"openai large", "local", domain.Embedding{Provider: "openai", Model: "text-embedding-3-large"}, domain.Embedding{Provider: "openai", Model: "text-embedding-3-large", Dimensions: 3072}},
		{"openai large shortened", "local", domain.Embedding{Provider: "openai", Model: "text-embedding-3-large", Dimensions: 256}, domain.Embedding{Provider: "openai", Model: "text-embedding-3-large", Dimensions: 256}},
		{"openai ada", "local", domain.Embedding{Provider: "openai", Model: "text-embedding-ada-002"}, domain.Embedding{Provider: "openai", Model: "text-embedding-ada-002", Dimensions: 1536}},
		{"openai-compatible model", "local", domain.Embedding{Provider: "openai", Model: "nomic-embed-text", Dimensions: 768}, domain.Embedding{Provider: "openai", Model: "nomic-embed-text", Dimensions: 768}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fields := allProviders(t, tt.def).Resolve(tt.in)
			if fields != nil {
				t.Fatalf("field errors %v", fields)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%+v) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestResolveRejects(t *testing.T) {
	const (
		provider = "embedding_config.provider"
		model    = "embedding_config.model"
		dims     = "embedding_config.dimensions"
	)
	tests := []struct {
		name      string
		noOpenAI  bool
		noLocal   bool
		in        domain.Embedding
		wantField string
		wantMsg   string // substring
	}{
		{name: "unknown provider", in: domain.Embedding{Provider: "foo"}, wantField: provider,
			wantMsg: `unknown provider "foo"; offered here: local, bedrock, openai`},
		{name: "azure_openai", in: domain.Embedding{Provider: "azure_openai", Model: "text-embedding-3-small"}, wantField: provider,
			wantMsg: `provider "azure_openai" is not offered by this service; offered here: local, bedrock, openai`},
		{name: "mistral", in: domain.Embedding{Provider: "mistral"}, wantField: provider, wantMsg: `provider "mistral" is not offered by this service`},
		{name: "telekom_otc", in: domain.Embedding{Provider: "telekom_otc"}, wantField: provider, wantMsg: `provider "telekom_otc" is not offered by this service`},
		{name: "provider not configured", noOpenAI: true, in: domain.Embedding{Provider: "openai"}, wantField: provider,
			wantMsg: `provider "openai" is not configured on this deployment; offered here: local, bedrock`},
		{name: "local left out of the build", noLocal: true, in: domain.Embedding{Provider: "local"}, wantField: provider,
			wantMsg: `provider "local" (the in-process development model) is not available in this deployment; offered here: bedrock, openai`},
		{name: "unknown local model", in: domain.Embedding{Provider: "local", Model: "all-minilm"}, wantField: model,
			wantMsg: `model "all-minilm" is not offered by provider local; offered: use-lite-glove, use-lite`},
		{name: "bedrock model of the default provider", in: domain.Embedding{Model: "amazon.titan-embed-text-v2:0"}, wantField: model,
			wantMsg: `not offered by provider local`},
		{name: "unknown bedrock model", in: domain.Embedding{Provider: "bedrock", Model: "cohere.embed-english-v3"}, wantField: model,
			wantMsg: `offered: amazon.titan-embed-text-v2:0, amazon.titan-embed-text-v1`},
		{name: "local dimensions", in: domain.Embedding{Provider: "local", Dimensions: 768}, wantField: dims,
			wantMsg: `model use-lite-glove offers 612 dimensions, not 768`},
		{name: "use-lite dimensions", in: domain.Embedding{Provider: "local", Model: "use-lite", Dimensions: 612}, wantField: dims,
			wantMsg: `model use-lite offers 512 dimensions, not 612`},
		{name: "titan v2 dimensions", in: domain.Embedding{Provider: "bedrock", Dimensions: 768}, wantField: dims,
			wantMsg: `model amazon.titan-embed-text-v2:0 offers 256, 512, 1024 dimensions, not 768`},
		{name: "titan v1 dimensions", in: domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v1", Dimensions: 1024}, wantField: dims,
			wantMsg: `offers 1536 dimensions, not 1024`},
		{name: "ada dimensions", in: domain.Embedding{Provider: "openai", Model: "text-embedding-ada-002", Dimensions: 512}, wantField: dims,
			wantMsg: `offers 1536 dimensions, not 512`},
		{name: "3-small above its size", in: domain.Embedding{Provider: "openai", Dimensions: 2000}, wantField: dims,
			wantMsg: `model text-embedding-3-small offers 1 to 1536 dimensions, not 2000`},
		{name: "negative dimensions", in: domain.Embedding{Provider: "bedrock", Dimensions: -1}, wantField: dims,
			wantMsg: `must be a positive integer`},
		{name: "unknown model without dimensions", in: domain.Embedding{Provider: "openai", Model: "nomic-embed-text"}, wantField: dims,
			wantMsg: `required for model "nomic-embed-text"`},
		{name: "unknown model beyond the index", in: domain.Embedding{Provider: "openai", Model: "huge", Dimensions: 20000}, wantField: dims,
			wantMsg: `must be at most 16000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := allProviders(t, "local")
			if tt.noOpenAI || tt.noLocal {
				client, _ := newBedrock(t, nil)
				opts := embeddings.Options{Local: noModel, Bedrock: client, OpenAI: embeddings.OpenAIOptions{BaseURL: "http://127.0.0.1:9/v1"}}
				if tt.noOpenAI {
					opts.OpenAI = embeddings.OpenAIOptions{}
				}
				if tt.noLocal {
					opts.Local, opts.DefaultProvider = nil, "bedrock"
				}
				var err error
				if p, err = embeddings.New(opts); err != nil {
					t.Fatal(err)
				}
			}
			_, fields := p.Resolve(tt.in)
			if len(fields) != 1 {
				t.Fatalf("field errors %v, want one", fields)
			}
			if fields[0].Field != tt.wantField || !strings.Contains(fields[0].Message, tt.wantMsg) {
				t.Errorf("got %s: %s\nwant %s: …%s…", fields[0].Field, fields[0].Message, tt.wantField, tt.wantMsg)
			}

			// Building an embedder from the same configuration is a 400 with the same field.
			_, err := p.Embedder(context.Background(), tt.in)
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) != 1 || de.Fields[0] != fields[0] {
				t.Errorf("Embedder: %v, want an invalid-request error with %v", err, fields[0])
			}
		})
	}
}

func TestNewRefusesADefaultNotOffered(t *testing.T) {
	for _, opts := range []embeddings.Options{
		{DefaultProvider: "bedrock", Local: noModel}, // no client
		{DefaultProvider: "local"},                   // no local model
		{DefaultProvider: "mistral", Local: noModel},
	} {
		if _, err := embeddings.New(opts); err == nil {
			t.Errorf("New(default %q) succeeded", opts.DefaultProvider)
		}
	}
}

// indexName is what OpenSearch accepts in an index name, without its leading-character rules.
var indexName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

func TestNames(t *testing.T) {
	p := allProviders(t, "local")
	tests := []struct {
		cfg  domain.Embedding
		want string
	}{
		{domain.Embedding{Provider: "bedrock"}, "titan-embed-text-v2"},
		{domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v1"}, "titan-embed-text-v1"},
		{domain.Embedding{Provider: "openai"}, "openai-text-embedding-3-small"},
		{domain.Embedding{Provider: "openai", Model: "text-embedding-3-large"}, "openai-text-embedding-3-large"},
		{domain.Embedding{Provider: "openai", Model: "nomic-embed-text", Dimensions: 768}, "openai-nomic-embed-text"},
	}
	for _, tt := range tests {
		e, err := p.Embedder(context.Background(), tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Name(); got != tt.want {
			t.Errorf("Name(%+v) = %q, want %q", tt.cfg, got, tt.want)
		}
	}

	// Model names with characters an index name cannot hold get a slug and a hash of the name,
	// so that names differing only in those characters stay apart.
	seen := map[string]string{}
	for _, m := range []string{"nomic-embed-text:v1.5", "nomic-embed-text-v1.5", "BAAI/bge-m3", "baai/bge-m3", "baai-bge-m3", "Ünïcode model", "::"} {
		e, err := p.Embedder(context.Background(), domain.Embedding{Provider: "openai", Model: m, Dimensions: 384})
		if err != nil {
			t.Fatal(err)
		}
		name := e.Name()
		if !indexName.MatchString(name) || len(name) > 120 {
			t.Errorf("Name for model %q = %q, not a valid index name part", m, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("models %q and %q share the name %q", other, m, name)
		}
		seen[name] = m
	}
}

func TestTokensBoundHostedModels(t *testing.T) {
	p := allProviders(t, "local")
	for _, cfg := range []domain.Embedding{{Provider: "bedrock"}, {Provider: "openai"}} {
		e, err := p.Embedder(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// English runs about four bytes a token; the bound must not fall below a third of the
		// bytes, and counts each CJK character (three bytes, one or two tokens) as two.
		for _, tt := range []struct {
			text string
			min  int
		}{
			{"", 0},
			{"refund", 2},
			{strings.Repeat("word ", 300), 500},
			{"退款政策", 8},
		} {
			if got := e.Tokens(tt.text); got < tt.min {
				t.Errorf("%s: Tokens(%.20q) = %d, want at least %d", e.Name(), tt.text, got, tt.min)
			}
		}
		if e.MaxTokens() < 8191 {
			t.Errorf("%s: MaxTokens = %d", e.Name(), e.MaxTokens())
		}
	}
}
