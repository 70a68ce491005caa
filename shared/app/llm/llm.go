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
	"github.com/agentorch/agentorch/shared/platform"
)

type modelsKey struct{}

// Models are the providers, built on first use and shared by every use in the application:
// local always (the offline development model), bedrock (its client makes no call until used) on
// AWS or with credentials, openai when a base URL is set; the default is MODEL_PROVIDER.
func Models(a *core.App) engine.ModelSet {
	m, _ := core.Shared(a, modelsKey{}, func() (engine.ModelSet, error) { return build(a), nil })
	return m
}

func build(a *core.App) engine.ModelSet {
	cfg := a.Config
	set := engine.ModelSet{Default: cfg.ModelProvider, ByName: map[string]domain.Model{"local": localmodel.Model{}}}
	// Locally Bedrock is offered only with real AWS credentials in the environment; otherwise a
	// configuration naming it gets a clear 400 rather than a failed call.
	if cfg.InLambda || cfg.ModelProvider == "bedrock" || platform.HasAWSCredentials() {
		set.ByName["bedrock"] = bedrock.New(bedrockruntime.NewFromConfig(a.AWS), bedrock.Options{DefaultModel: cfg.BedrockModel})
	}
	if cfg.OpenAIBaseURL != "" {
		set.ByName["openai"] = openai.New(openai.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, DefaultModel: cfg.OpenAIModel})
	}
	return set
}
