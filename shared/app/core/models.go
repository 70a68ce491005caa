package core

import (
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/pricing"
)

// ModelProviders are the model providers this deployment runs, with their default and known
// models: the one rule both the engine's model set (app/llm builds an adapter for each) and the
// agent catalog (GET /api/v1/agent/catalog/) read, so that the catalog never offers a provider
// a run would refuse. local always (the offline development model); bedrock in Lambda, when it
// is the default provider, or with AWS credentials in the environment (locally, without them, a
// configuration naming it gets a clear 400 rather than a failed call); openai when a base URL is
// set. It reads only the configuration and links no adapter.
func ModelProviders(cfg platform.Config) []domain.ModelProvider {
	prices := pricing.ListPrices()
	for k, p := range cfg.ModelPrices {
		prices[k] = p
	}
	offer := func(name, defaultModel string) domain.ModelProvider {
		p := domain.ModelProvider{Name: name, Default: name == cfg.ModelProvider, DefaultModel: defaultModel}
		if defaultModel != "" {
			p.Models = append(p.Models, defaultModel)
		}
		var priced []string
		for k := range prices {
			if model, ok := strings.CutPrefix(k, name+"/"); ok && model != defaultModel && model != "" {
				priced = append(priced, model)
			}
		}
		slices.Sort(priced)
		p.Models = append(p.Models, priced...)
		return p
	}
	out := []domain.ModelProvider{offer(domain.ProviderLocal, "")}
	if cfg.InLambda || cfg.ModelProvider == domain.ProviderBedrock || platform.HasAWSCredentials() {
		out = append(out, offer(domain.ProviderBedrock, or(cfg.BedrockModel, domain.DefaultBedrockModel)))
	}
	if cfg.OpenAIBaseURL != "" {
		out = append(out, offer(domain.ProviderOpenAI, or(cfg.OpenAIModel, domain.DefaultOpenAIModel)))
	}
	return out
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
