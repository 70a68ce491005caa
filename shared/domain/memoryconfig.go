package domain

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// The fields of a configuration's "memory" object and of its parts, as unknown-field errors
// list them.
var (
	memoryFields        = []string{"enabled", "shared", "blocks", "recall", "extract"}
	memoryBlockFields   = []string{"label", "description", "limit"}
	memoryRecallFields  = []string{"top_k"}
	memoryExtractFields = []string{"enabled", "llm_config", "instructions"}
	memoryLLMFields     = []string{"provider", "model"}
)

// MemoryConfigOf reads the "memory" object of a configuration ValidateAgentConfig accepted; a
// missing or null one is memory off. Given, the object turns memory on unless its enabled is
// false, as its extract object turns extraction on; recall.top_k defaults to DefaultRecallTopK
// and a block's limit to DefaultBlockLimit.
func MemoryConfigOf(cfg map[string]any) MemoryConfig {
	m, ok := cfg["memory"].(map[string]any)
	if !ok {
		return MemoryConfig{}
	}
	mc := MemoryConfig{Enabled: boolOr(m["enabled"], true), Shared: boolOr(m["shared"], false), RecallTopK: DefaultRecallTopK}
	blocks, _ := m["blocks"].([]any)
	for _, x := range blocks {
		b, _ := x.(map[string]any)
		spec := MemoryBlockSpec{Limit: DefaultBlockLimit}
		spec.Label, _ = b["label"].(string)
		spec.Description, _ = b["description"].(string)
		if f, ok := Number(b["limit"]); ok {
			spec.Limit = int(f)
		}
		mc.Blocks = append(mc.Blocks, spec)
	}
	if r, ok := m["recall"].(map[string]any); ok {
		if f, ok := Number(r["top_k"]); ok {
			mc.RecallTopK = int(f)
		}
	}
	if e, ok := m["extract"].(map[string]any); ok {
		mc.Extract.Enabled = boolOr(e["enabled"], true)
		mc.Extract.Instructions, _ = e["instructions"].(string)
		if l, ok := e["llm_config"].(map[string]any); ok {
			mc.Extract.Provider, _ = l["provider"].(string)
			mc.Extract.Model, _ = l["model"].(string)
		}
	}
	return mc
}

// memory checks a configuration's "memory" object (null is no memory): known fields only,
// booleans, blocks with valid unique labels and limits (at most MaxMemoryBlocks), recall.top_k
// 0..MaxRecallTopK, extract an object whose llm_config names a provider and model as a node's
// does (the provider is checked at run time, as nodes' are).
func (v *validator) memory(x any, path string) {
	if x == nil {
		return
	}
	m, ok := v.object(x, path)
	if !ok {
		return
	}
	v.knownFields(m, path, "memory", memoryFields)
	for _, k := range []string{"enabled", "shared"} {
		if b, ok := m[k]; ok {
			v.boolean(b, path+"."+k)
		}
	}
	if b, ok := m["blocks"]; ok && b != nil {
		v.memoryBlocks(b, path+".blocks")
	}
	if r, ok := m["recall"]; ok && r != nil {
		if rm, ok := v.object(r, path+".recall"); ok {
			v.knownFields(rm, path+".recall", "recall", memoryRecallFields)
			if k, ok := rm["top_k"]; ok {
				v.integer(k, path+".recall.top_k", 0, MaxRecallTopK)
			}
		}
	}
	if e, ok := m["extract"]; ok && e != nil {
		v.memoryExtract(e, path+".extract")
	}
}

func (v *validator) memoryBlocks(x any, path string) {
	list, ok := x.([]any)
	if !ok {
		v.add(path, "must be an array of objects")
		return
	}
	if len(list) > MaxMemoryBlocks {
		v.add(path, "must have at most %d blocks", MaxMemoryBlocks)
	}
	seen := map[string]bool{}
	for i, b := range list {
		p := fmt.Sprintf("%s.%d", path, i)
		m, ok := v.object(b, p)
		if !ok {
			continue
		}
		v.knownFields(m, p, "a block", memoryBlockFields)
		switch l, ok := m["label"]; {
		case !ok || l == nil:
			v.add(p+".label", "is required")
		default:
			s, ok := l.(string)
			switch {
			case !ok:
				v.add(p+".label", "must be a string")
			case !ValidBlockLabel(s):
				v.add(p+".label", BlockLabelRule)
			case seen[s]:
				v.add(p+".label", "duplicate block label %q", s)
			default:
				seen[s] = true
			}
		}
		if d, ok := m["description"]; ok && d != nil {
			if s, ok := v.str(d, p+".description", false); ok && utf8.RuneCountInString(s) > MaxBlockDescriptionLength {
				v.add(p+".description", "must be at most %d characters", MaxBlockDescriptionLength)
			}
		}
		if l, ok := m["limit"]; ok {
			v.integer(l, p+".limit", 1, MaxBlockLimit)
		}
	}
}

func (v *validator) memoryExtract(x any, path string) {
	m, ok := v.object(x, path)
	if !ok {
		return
	}
	v.knownFields(m, path, "extract", memoryExtractFields)
	if b, ok := m["enabled"]; ok {
		v.boolean(b, path+".enabled")
	}
	if l, ok := m["llm_config"]; ok && l != nil {
		if lm, ok := v.object(l, path+".llm_config"); ok {
			v.knownFields(lm, path+".llm_config", "llm_config", memoryLLMFields)
			for _, k := range memoryLLMFields {
				if s, ok := lm[k]; ok {
					v.str(s, path+".llm_config."+k, true)
				}
			}
		}
	}
	if s, ok := m["instructions"]; ok && s != nil {
		if s, ok := v.str(s, path+".instructions", false); ok && utf8.RuneCountInString(s) > MaxExtractInstructionsLength {
			v.add(path+".instructions", "must be at most %d characters", MaxExtractInstructionsLength)
		}
	}
}

// knownFields reports each key of m that is not one of fields, sorted.
func (v *validator) knownFields(m map[string]any, path, what string, fields []string) {
	var extra []string
	for k := range m {
		if !slices.Contains(fields, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		v.add(path+"."+Clip(k, 64), "is not a field of %s (fields: %s)", what, strings.Join(fields, ", "))
	}
}

// integer checks that x is an integer from lo to hi.
func (v *validator) integer(x any, path string, lo, hi int) {
	f, ok := Number(x)
	switch {
	case !ok || f != math.Trunc(f):
		v.add(path, "must be an integer")
	case f < float64(lo) || f > float64(hi):
		v.add(path, "must be from %d to %d", lo, hi)
	}
}

// memoryTool refuses a tools entry that names a memory tool (a built-in's name or a function's):
// the memory tools come with memory.enabled.
func (v *validator) memoryTool(name, path string) {
	if slices.Contains(MemoryTools, name) {
		v.add(path, "%q is a memory tool: react agents get it with memory.enabled, not in tools", name)
	}
}
