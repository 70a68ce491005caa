package core_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/pricing"
)

// TestModelProviders: local always; bedrock in Lambda, as the default provider or with AWS
// credentials, with BEDROCK_MODEL_ID (or the adapter's default) first; openai with a base URL;
// the priced models of each provider after its default, MODEL_PRICES' included; the default
// flag on MODEL_PROVIDER's.
func TestModelProviders(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(v, "")
	}
	names := func(ps []domain.ModelProvider) map[string]string {
		out := map[string]string{}
		for _, p := range ps {
			d := p.DefaultModel
			if p.Default {
				d += " (default)"
			}
			out[p.Name] = d
		}
		return out
	}
	tests := []struct {
		name  string
		cfg   platform.Config
		creds bool
		want  map[string]string
	}{
		{"local stack", platform.Config{ModelProvider: "local"}, false, map[string]string{"local": " (default)"}},
		{"local with AWS credentials", platform.Config{ModelProvider: "local"}, true,
			map[string]string{"local": " (default)", "bedrock": domain.DefaultBedrockModel}},
		{"bedrock by default", platform.Config{ModelProvider: "bedrock", BedrockModel: "amazon.nova-pro-v1:0"}, false,
			map[string]string{"local": "", "bedrock": "amazon.nova-pro-v1:0 (default)"}},
		{"in Lambda", platform.Config{ModelProvider: "local", InLambda: true}, false,
			map[string]string{"local": " (default)", "bedrock": domain.DefaultBedrockModel}},
		{"an OpenAI-compatible endpoint", platform.Config{ModelProvider: "openai", OpenAIBaseURL: "http://127.0.0.1:11434/v1", OpenAIModel: "llama3.2"}, false,
			map[string]string{"local": "", "openai": "llama3.2 (default)"}},
		{"openai without a base URL", platform.Config{ModelProvider: "openai"}, false, map[string]string{"local": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.creds {
				t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
			}
			if diff := cmp.Diff(tt.want, names(core.ModelProviders(tt.cfg))); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}

	cfg := platform.Config{ModelProvider: "openai", OpenAIBaseURL: "http://x/v1", OpenAIModel: "llama3.2",
		ModelPrices: pricing.Table{"openai/qwen3": {InputPerMTok: 0, OutputPerMTok: 0}}}
	ps := core.ModelProviders(cfg)
	got := ps[len(ps)-1].Models
	want := []string{"llama3.2", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "o3", "o3-mini", "o4-mini", "qwen3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("openai's models (-want +got):\n%s", diff)
	}
	if local := ps[0]; local.Name != "local" || len(local.Models) != 0 {
		t.Errorf("local = %+v, want no models", local)
	}
}
