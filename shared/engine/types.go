// Package engine executes agents: one model call for an llm_agent, the model → tools → model
// loop for a react_agent, and multi-node graphs of them. The model and tool interfaces its
// adapters implement (bedrock, openai, localmodel, tools) are in domain (model.go).
package engine

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Models resolves llm_config.provider ("" = the deployment default) to a model.
type Models interface {
	Model(provider string) (domain.Model, error)
}

// Tools is the registry of tools an agent may bind by name.
type Tools interface {
	Tool(name string) (domain.Tool, bool)
	Names() []string
}

// Event kinds recorded for each execution.
const (
	EventNodeStarted  = "node_started"
	EventNodeFinished = "node_finished"
	EventModelCall    = "model_call"
	EventToolCall     = "tool_call"
	EventToolResult   = "tool_result"
	EventError        = "error"
)

// Event is one observable step of an execution.
type Event struct {
	Type string         `json:"type"`
	Node string         `json:"node,omitempty"`
	Time time.Time      `json:"timestamp"`
	Data map[string]any `json:"data,omitempty"`
}

// ModelSet is the deployment's models by provider name, with a default for configurations that
// name none.
type ModelSet struct {
	Default string
	ByName  map[string]domain.Model
}

// Model implements Models.
func (m ModelSet) Model(provider string) (domain.Model, error) {
	if provider == "" {
		provider = m.Default
	}
	if mm, ok := m.ByName[provider]; ok {
		return mm, nil
	}
	return nil, &UnknownProviderError{Provider: provider}
}

// UnknownProviderError reports a provider the deployment does not offer.
type UnknownProviderError struct{ Provider string }

func (e *UnknownProviderError) Error() string { return "unknown model provider " + e.Provider }
