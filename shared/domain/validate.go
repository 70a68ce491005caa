package domain

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Reserved graph node names.
const (
	NodeStart = "__start__"
	NodeEnd   = "__end__"
)

// Limits on configuration values.
const (
	MaxNameLength   = 200
	MaxPromptLength = 100_000
	MaxTools        = 64
	// MaxConfigBytes bounds a configuration's JSON: agents store it twice (explicit and
	// effective) in one DynamoDB item of at most 400 KB.
	MaxConfigBytes = 128 << 10
)

// ValidateAgentConfig checks an agent configuration (the flat shape or the multi-node shape) and
// names every bad field by its dotted path under prefix ("" or "system_config").
func ValidateAgentConfig(cfg map[string]any, prefix string) []FieldError {
	v := &validator{}
	if b, err := json.Marshal(cfg); err != nil || len(b) > MaxConfigBytes {
		field := prefix
		if field == "" {
			field = "config"
		}
		v.add(field, "must be at most %d bytes of JSON", MaxConfigBytes)
		return v.errs
	}
	v.node(cfg, prefix, true)
	if nodes, ok := cfg["agents"]; ok {
		if v.graph(cfg, nodes, prefix) {
			_, errs := buildFlow(cfg, prefix)
			v.errs = append(v.errs, errs...)
		}
	} else if edges, ok := cfg["edges"]; ok {
		v.edges(edges, join(prefix, "edges"), nil)
	}
	for _, k := range []string{"save_messages", "persistent_state"} {
		if x, ok := cfg[k]; ok {
			v.boolean(x, join(prefix, k))
		}
	}
	if x, ok := cfg["entry_point"]; ok {
		v.str(x, join(prefix, "entry_point"), false)
	}
	if x, ok := cfg["mcp"]; ok && x != nil {
		v.mcpServe(x, join(prefix, "mcp"))
	}
	if x, ok := cfg["memory"]; ok {
		v.memory(x, join(prefix, "memory"))
	}
	return v.errs
}

type validator struct{ errs []FieldError }

func (v *validator) add(field, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// node validates the fields shared by a flat configuration and one graph node.
func (v *validator) node(cfg map[string]any, prefix string, top bool) {
	name, ok := cfg["name"]
	switch {
	case !ok || name == nil:
		v.add(join(prefix, "name"), "is required")
	default:
		if s, ok := v.str(name, join(prefix, "name"), true); ok && len(s) > MaxNameLength {
			v.add(join(prefix, "name"), "must be at most %d characters", MaxNameLength)
		} else if ok && !HasVisible(s) {
			v.add(join(prefix, "name"), "must have a visible character, not only spaces, zero-width or other invisible characters")
		}
	}
	if t, ok := cfg["agent_type"]; ok {
		if s, ok := v.str(t, join(prefix, "agent_type"), true); ok && s != AgentTypeLLM && s != AgentTypeReact {
			v.add(join(prefix, "agent_type"), "must be one of %q, %q (got %q)", AgentTypeLLM, AgentTypeReact, s)
		}
	}
	for _, k := range []string{"system_prompt", "description"} {
		if x, ok := cfg[k]; ok {
			if s, ok := v.str(x, join(prefix, k), false); ok && len(s) > MaxPromptLength {
				v.add(join(prefix, k), "must be at most %d characters", MaxPromptLength)
			}
		}
	}
	if x, ok := cfg["prompt_config"]; ok {
		if m, ok := v.object(x, join(prefix, "prompt_config")); ok {
			if sp, ok := m["system_prompt"]; ok {
				v.str(sp, join(prefix, "prompt_config.system_prompt"), false)
			}
		}
	}
	if x, ok := cfg["llm_config"]; ok {
		v.llmConfig(x, join(prefix, "llm_config"))
	}
	if x, ok := cfg["tools"]; ok {
		v.tools(x, join(prefix, "tools"))
	}
	if x, ok := cfg["knowledge_bases"]; ok {
		v.knowledgeBases(x, join(prefix, "knowledge_bases"))
	}
	if x, ok := cfg["streaming_config"]; ok {
		if m, ok := v.object(x, join(prefix, "streaming_config")); ok {
			if b, ok := m["show_output_to_user"]; ok {
				v.boolean(b, join(prefix, "streaming_config.show_output_to_user"))
			}
		}
	}
}

func (v *validator) llmConfig(x any, path string) {
	m, ok := v.object(x, path)
	if !ok {
		return
	}
	if s, ok := m["model"]; ok {
		v.str(s, path+".model", true)
	}
	if s, ok := m["provider"]; ok {
		v.str(s, path+".provider", true)
	}
	if t, ok := m["temperature"]; ok {
		if f, ok := v.number(t, path+".temperature"); ok && (f < 0 || f > 2) {
			v.add(path+".temperature", "must be between 0 and 2")
		}
	}
	if t, ok := m["top_p"]; ok {
		if f, ok := v.number(t, path+".top_p"); ok && (f < 0 || f > 1) {
			v.add(path+".top_p", "must be between 0 and 1")
		}
	}
	if t, ok := m["max_tokens"]; ok {
		f, isNum := Number(t)
		if !isNum || f != math.Trunc(f) {
			v.add(path+".max_tokens", "must be an integer")
		} else if f <= 0 || f > 1_000_000 {
			v.add(path+".max_tokens", "must be a positive integer of at most 1000000")
		}
	}
}

func (v *validator) tools(x any, path string) {
	list, ok := x.([]any)
	if !ok {
		v.add(path, "must be an array of built-in tool names and tool objects")
		return
	}
	if len(list) > MaxTools {
		v.add(path, "must have at most %d tools", MaxTools)
	}
	for i, t := range list {
		v.toolEntry(t, fmt.Sprintf("%s.%d", path, i))
	}
}

// graph validates the multi-node shape: the nodes, their unique names and the edges between them.
// It reports whether the names and edges are well formed, so that the graph's structure can be
// checked.
func (v *validator) graph(cfg map[string]any, nodes any, prefix string) bool {
	path := join(prefix, "agents")
	list, ok := nodes.([]any)
	if !ok {
		v.add(path, "must be an array of objects")
		return false
	}
	wellFormed := true
	switch {
	case len(list) == 0:
		v.add(path, "must have at least one agent")
		wellFormed = false
	case len(list) > MaxAgents:
		v.add(path, "must have at most %d agents: one execution stores the messages of at most %d agent runs", MaxAgents, MaxNodeRuns)
		wellFormed = false
	}
	names := map[string]bool{}
	for i, n := range list {
		p := fmt.Sprintf("%s.%d", path, i)
		m, ok := v.object(n, p)
		if !ok {
			wellFormed = false
			continue
		}
		v.node(m, p, false)
		s, ok := m["name"].(string)
		switch {
		case !ok || !HasVisible(s):
			wellFormed = false // reported by node
		case s == NodeStart || s == NodeEnd:
			v.add(p+".name", "%q is reserved", s)
			wellFormed = false
		case names[s]:
			v.add(p+".name", "duplicate node name %q", s)
			wellFormed = false
		}
		if ok {
			names[s] = true
		}
	}
	if ep, ok := cfg["entry_point"].(string); ok && ep != "" && !names[ep] {
		v.add(join(prefix, "entry_point"), "names no agent: %q", ep)
		wellFormed = false
	}
	if edges, ok := cfg["edges"]; ok && !v.edges(edges, join(prefix, "edges"), names) {
		wellFormed = false
	}
	return wellFormed
}

// edges validates edge objects; with names set, each end must name a node or a reserved node.
// It reports whether every edge is well formed.
func (v *validator) edges(edges any, path string, names map[string]bool) bool {
	elist, ok := edges.([]any)
	if !ok {
		v.add(path, "must be an array of objects")
		return false
	}
	before := len(v.errs)
	for i, e := range elist {
		p := fmt.Sprintf("%s.%d", path, i)
		m, ok := v.object(e, p)
		if !ok {
			continue
		}
		for _, k := range []string{"from", "to"} {
			x, ok := m[k]
			if !ok {
				v.add(p+"."+k, "is required")
				continue
			}
			s, ok := v.str(x, p+"."+k, true)
			if ok && names != nil && !names[s] && s != NodeStart && s != NodeEnd {
				v.add(p+"."+k, "names no agent: %q", s)
			}
		}
	}
	return len(v.errs) == before
}

func (v *validator) str(x any, path string, nonEmpty bool) (string, bool) {
	s, ok := x.(string)
	if !ok {
		v.add(path, "must be a string")
		return "", false
	}
	if nonEmpty && strings.TrimSpace(s) == "" {
		v.add(path, "must not be empty")
		return "", false
	}
	return s, true
}

func (v *validator) boolean(x any, path string) {
	if _, ok := x.(bool); !ok {
		v.add(path, "must be a boolean")
	}
}

func (v *validator) number(x any, path string) (float64, bool) {
	f, ok := Number(x)
	if !ok {
		v.add(path, "must be a number")
	}
	return f, ok
}

func (v *validator) object(x any, path string) (map[string]any, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		v.add(path, "must be an object")
	}
	return m, ok
}

// Number reads a JSON number decoded with UseNumber (or a Go number) as a float64.
func Number(x any) (float64, bool) {
	switch n := x.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}
