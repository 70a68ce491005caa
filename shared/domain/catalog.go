package domain

// The catalog: what a deployment offers agent configurations to choose from (its model providers
// and their models, the built-in tools, the limits of llm_config's parameters), so that a client
// such as the studio offers only what runs here.

// Model providers, as llm_config.provider names them.
const (
	ProviderLocal   = "local"   // the offline development model (shared/localmodel)
	ProviderBedrock = "bedrock" // Amazon Bedrock's Converse API
	ProviderOpenAI  = "openai"  // an OpenAI-compatible chat completions endpoint
)

// Default models of the providers, used when neither llm_config nor the deployment names one
// (the bedrock and openai adapters' DefaultModel).
const (
	// DefaultBedrockModel is Claude Haiku 4.5 through its global cross-Region inference profile,
	// which every commercial Region can invoke (Claude 4.x models cannot be invoked on demand by
	// their bare model ID).
	DefaultBedrockModel = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
	// DefaultOpenAIModel accepts max_tokens and temperature, which OpenAI's reasoning models reject.
	DefaultOpenAIModel = "gpt-4.1-mini"
)

// ModelProvider is one provider the deployment can run, as a catalog lists it.
type ModelProvider struct {
	Name string
	// Default: the provider of configurations whose llm_config names none.
	Default bool
	// DefaultModel is the model of a configuration that names none; empty for a provider that
	// takes no model (local).
	DefaultModel string
	// Models are the models the service knows for the provider (the default first, then the
	// priced ones in name order). A provider may run others: the list is a choice, not a limit.
	Models []string
}

// LLMParam is one number of llm_config with the bounds validation holds it to.
type LLMParam struct {
	Name     string
	Integer  bool
	Min, Max float64
	// Default is what a node gets when the field is left out; nil: the provider's own default.
	Default *float64
}

// LLMParams are llm_config's numeric fields and their limits, as ValidateAgentConfig checks them
// (TestLLMParamsMatchValidation holds the two together).
func LLMParams() []LLMParam {
	maxTokens := float64(DefaultMaxTokens)
	return []LLMParam{
		{Name: "temperature", Min: 0, Max: 2},
		{Name: "top_p", Min: 0, Max: 1},
		{Name: "max_tokens", Integer: true, Min: 1, Max: 1_000_000, Default: &maxTokens},
	}
}

// Catalog is what a deployment offers agent configurations.
type Catalog struct {
	Providers []ModelProvider
	// Tools are the built-in tools a node may name in its tools list, with the description and
	// input schema the model is shown.
	Tools  []ToolSpec
	Params []LLMParam
}
