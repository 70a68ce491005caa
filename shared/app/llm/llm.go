// Package llm builds the application's model providers, once: the engine's (run) and memory
// extraction's (mem). Only the functions that call a model import it, so that no other links the
// Bedrock, OpenAI and offline model adapters.
package llm

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/openai"
)

type modelsKey struct{}

// Models are the providers, built on first use and shared by every use in the application: one
// adapter for each provider core.ModelProviders offers (the agent catalog lists the same), the
// bedrock client making no call until used; the default is MODEL_PROVIDER.
func Models(a *core.App) engine.ModelSet {
	m, _ := core.Shared(a, modelsKey{}, func() (engine.ModelSet, error) { return build(a), nil })
	return m
}

func build(a *core.App) engine.ModelSet {
	cfg := a.Config
	set := engine.ModelSet{Default: cfg.ModelProvider, ByName: map[string]domain.Model{}}
	for _, p := range core.ModelProviders(cfg) {
		switch p.Name {
		case domain.ProviderLocal:
			set.ByName[p.Name] = localmodel.Model{}
		case domain.ProviderBedrock:
			set.ByName[p.Name] = bedrock.New(bedrockruntime.NewFromConfig(a.AWS), bedrock.Options{DefaultModel: p.DefaultModel})
		case domain.ProviderOpenAI:
			set.ByName[p.Name] = openai.New(openai.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, DefaultModel: p.DefaultModel})
		}
	}
	return set
}
