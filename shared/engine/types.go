// Package engine executes agents: one model call for an llm_agent, the model → tools → model
// loop for a react_agent, and multi-node graphs of them. The model and tool interfaces its
// adapters implement (bedrock, openai, localmodel, tools) are in domain (model.go).
package engine

import (
	"context"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Models resolves llm_config.provider ("" = the deployment default) to a model.
type Models interface {
	Model(provider string) (domain.Model, error)
}

// ToolBinder resolves the tools of a node for each run, from the node's configuration and the
// caller; the engine holds no process-wide tool list.
type ToolBinder interface {
	// Bind returns the tools node may call in one run for the tenant p (company and owner,
	// passed explicitly). A feature's binder returns only tools the node's configuration
	// asks for (its tools, or a tool its knowledge_bases imply).
	Bind(ctx context.Context, p domain.Principal, node *Node) ([]domain.Tool, error)
}

// Binders binds the tools of several binders, in order.
type Binders []ToolBinder

// Bind implements ToolBinder.
func (bs Binders) Bind(ctx context.Context, p domain.Principal, node *Node) ([]domain.Tool, error) {
	var out []domain.Tool
	for _, b := range bs {
		ts, err := b.Bind(ctx, p, node)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// Retriever searches an agent's knowledge bases (the knowledge feature implements it).
type Retriever interface {
	// SearchKnowledge searches refs (enabled entries) for query, cut to domain.MaxQueryLength
	// characters, within company. topK > 0
	// overrides every entry's top_k (the tool's argument). Knowledge bases that cannot be
	// searched (deleted, foreign, not yet ingested) are Problems, not an error; err is for
	// failures of the search itself (the index or the embedder unavailable).
	SearchKnowledge(ctx context.Context, company, query string, refs []domain.KnowledgeBaseRef, topK int) (*domain.RetrievalResult, error)
}

// Event kinds recorded for each execution.
const (
	EventNodeStarted  = "node_started"
	EventNodeFinished = "node_finished"
	EventModelCall    = "model_call"
	EventToolCall     = "tool_call"
	EventToolResult   = "tool_result"
	EventError        = "error"
	// EventRetrieval is one search of a node's knowledge bases: query, knowledge_bases (ids),
	// hits (passages given to the model), duration_ms, source ("prompt" or "tool") and, when
	// the query was embedded, embedding_tokens (the provider's count).
	EventRetrieval = "retrieval"
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
