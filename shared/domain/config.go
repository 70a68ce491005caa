package domain

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// AgentConfig is an agent or session configuration parsed into types: what the engine runs. The
// client's map is kept beside it only to echo what was sent and for config_hash.
type AgentConfig struct {
	Name  string
	Nodes map[string]*NodeConfig
	// Order lists the node names in configuration order; nodes that run in the same step
	// contribute their messages in this order.
	Order []string
	Edges []Edge
	// Entry is the first node __start__ leads to.
	Entry string
	// SaveMessages and PersistentState are the configuration's flags (both default true).
	SaveMessages, PersistentState bool
	// Memory is the configuration's memory (its top-level "memory"), for every node.
	Memory MemoryConfig
}

// Successors returns the distinct targets of the edges leaving name, in edge order.
func (c *AgentConfig) Successors(name string) []string {
	var out []string
	for _, e := range c.Edges {
		if e.From == name && !slices.Contains(out, e.To) {
			out = append(out, e.To)
		}
	}
	return out
}

// NodeConfig is one agent of a configuration.
type NodeConfig struct {
	Name         string
	AgentType    string // AgentTypeLLM or AgentTypeReact
	Description  string
	SystemPrompt string // may hold {{ variables.name }} placeholders
	Provider     string // llm_config.provider; empty means the deployment default
	Model        string
	MaxTokens    int
	Temperature  *float64
	TopP         *float64
	Tools        []string // built-in tools by name
	// MCP binds tools of the company's MCP servers; Functions declares tools the client runs.
	MCP       []MCPBinding
	Functions []FunctionTool
	// KnowledgeBases are the node's knowledge_bases entries.
	KnowledgeBases []KnowledgeBaseRef
	// ShowOutput is streaming_config.show_output_to_user (default true): whether the node's
	// messages are shown to the user.
	ShowOutput bool
}

// KnowledgeBaseRef is one knowledge_bases entry of an agent.
type KnowledgeBaseRef struct {
	Name        string
	Type        string // knowledge_base_type: VectorEngine
	ID          string // knowledge_base_id (or its alias id)
	Enabled     bool   // default true
	Description string
	Retrieval   RetrievalConfig // retrieval_config (or its alias config)
	// Path is the entry's field path in the configuration ("system_config.knowledge_bases.0"),
	// for errors found after parsing (a knowledge base the caller may not read).
	Path string
}

// ScopesNeeded lists the scopes a caller needs to name what the node refers to, beyond the
// scope of the operation itself: naming a resource in a configuration reaches it as reading it
// does (an agent retrieves from its knowledge bases), so it needs the scope that reads it.
// knowledge_bases entries need ScopeKnowledgeRead, enabled or not; MCP bindings ScopeAgentsRead. A resource a configuration
// may name in future adds its scope here, and every check follows.
func (n *NodeConfig) ScopesNeeded() []string {
	var out []string
	if len(n.KnowledgeBases) > 0 {
		out = append(out, ScopeKnowledgeRead)
	}
	if len(n.MCP) > 0 {
		out = append(out, ScopeAgentsRead) // MCP servers are read with agents:read
	}
	return out
}

// ScopesNeeded lists the scopes the nodes of c need (NodeConfig.ScopesNeeded), each once, in
// configuration order, then ScopeMemoryRead when memory is on (the agent reads the user's
// memory into its prompts).
func (c *AgentConfig) ScopesNeeded() []string {
	var out []string
	for _, name := range c.Order {
		if n := c.Nodes[name]; n != nil {
			for _, s := range n.ScopesNeeded() {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	if c.Memory.Enabled {
		out = append(out, ScopeMemoryRead)
	}
	return out
}

// Permit refuses p (ErrPermission's kind and message, 403) a configuration naming a resource
// it may not read: session creation, from-agent and agent create, update and validate all ask
// it, so that a key cannot reach through a configuration what it may not read directly.
func (c *AgentConfig) Permit(p Principal) error {
	for _, s := range c.ScopesNeeded() {
		if !p.Can(s) {
			return &Error{Kind: KindPermission, Message: MsgNoPermission,
				Err: fmt.Errorf("the configuration names resources that need the %s scope", s)}
		}
	}
	return nil
}

// ToolCatalog names the tools a deployment offers, for the check that a configuration names
// only tools that exist.
type ToolCatalog interface {
	Has(name string) bool
	Names() []string
	// CheckSchema says why schema is not a JSON Schema a function tool's arguments can be
	// checked against, or nil.
	CheckSchema(schema map[string]any) error
}

// ParseConfig validates a configuration of either shape (ValidateAgentConfig, plus every tool
// name against tools) and returns it typed. Errors name fields by dotted path under prefix ("" or
// "system_config"); when there are any the configuration is nil.
func ParseConfig(cfg map[string]any, tools ToolCatalog, prefix string) (*AgentConfig, []FieldError) {
	if errs := ValidateAgentConfig(cfg, prefix); len(errs) > 0 {
		return nil, errs
	}
	flow := FlowOf(cfg)
	c := &AgentConfig{
		Nodes:           map[string]*NodeConfig{},
		Order:           flow.Order,
		Edges:           flow.Edges,
		Entry:           flow.Entry,
		SaveMessages:    boolOr(cfg["save_messages"], true),
		PersistentState: boolOr(cfg["persistent_state"], true),
		Memory:          MemoryConfigOf(cfg),
	}
	c.Name, _ = cfg["name"].(string)
	var errs []FieldError
	agents, multi := cfg["agents"].([]any)
	if !multi {
		n := parseNode(cfg, prefix, tools, &errs)
		c.Nodes[n.Name] = n
	}
	for i, a := range agents {
		n := parseNode(a.(map[string]any), join(prefix, fmt.Sprintf("agents.%d", i)), tools, &errs) // validated: an object
		c.Nodes[n.Name] = n
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// parseNode reads one node of a configuration ValidateAgentConfig accepted, so the types are right
// where the fields are present.
func parseNode(m map[string]any, path string, tools ToolCatalog, errs *[]FieldError) *NodeConfig {
	n := &NodeConfig{AgentType: AgentTypeLLM, MaxTokens: DefaultMaxTokens, ShowOutput: true}
	n.Name, _ = m["name"].(string)
	if t, ok := m["agent_type"].(string); ok {
		n.AgentType = t
	}
	n.Description, _ = m["description"].(string)
	n.SystemPrompt, _ = m["system_prompt"].(string)
	if pc, ok := m["prompt_config"].(map[string]any); ok {
		if s, ok := pc["system_prompt"].(string); ok && s != "" {
			n.SystemPrompt = s
		}
	}
	if llm, ok := m["llm_config"].(map[string]any); ok {
		n.Provider, _ = llm["provider"].(string)
		n.Model, _ = llm["model"].(string)
		if f, ok := Number(llm["max_tokens"]); ok {
			n.MaxTokens = int(math.Trunc(f))
		}
		n.Temperature = numberPtr(llm["temperature"])
		n.TopP = numberPtr(llm["top_p"])
	}
	if sc, ok := m["streaming_config"].(map[string]any); ok {
		n.ShowOutput = boolOr(sc["show_output_to_user"], true)
	}
	list, _ := m["tools"].([]any)
	for i, t := range list {
		parseToolEntry(n, t, join(path, fmt.Sprintf("tools.%d", i)), tools, errs)
	}
	kbs, _ := m["knowledge_bases"].([]any)
	for i, e := range kbs {
		n.KnowledgeBases = append(n.KnowledgeBases, parseKnowledgeBase(e.(map[string]any), join(path, fmt.Sprintf("knowledge_bases.%d", i))))
	}
	return n
}

func available(tools ToolCatalog) string {
	if tools == nil {
		return "none"
	}
	names := slices.Sorted(slices.Values(tools.Names()))
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func boolOr(x any, def bool) bool {
	if b, ok := x.(bool); ok {
		return b
	}
	return def
}

func numberPtr(x any) *float64 {
	if f, ok := Number(x); ok {
		return &f
	}
	return nil
}
