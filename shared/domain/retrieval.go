package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Limits of the knowledge_bases entries of an agent and of the retrieval they configure.
const (
	// MaxKnowledgeBases bounds the knowledge_bases entries of one node.
	MaxKnowledgeBases = 10
	// DefaultRetrievalTopK is how many chunks a search returns when top_k is not given.
	DefaultRetrievalTopK = 5
	// MaxRetrievalTopK is the largest top_k (OpenAI's file_search allows 50 as well).
	MaxRetrievalTopK = 50
	// MaxRetrievalFilterValues bounds filter.file_ids and filter.tags.
	MaxRetrievalFilterValues = 100
	// MaxQueryLength bounds a search query in characters; an agent's retrieval query (the
	// user's message) is cut to it.
	MaxQueryLength = 8000
)

// RetrievalConfig is an agent's retrieval_config for one knowledge base: zero values are the
// defaults (top 5, dense, no threshold, no filter).
type RetrievalConfig struct {
	TopK           int
	ScoreThreshold *float64 // 0..1; dense and hybrid scores only
	Strategy       RetrievalStrategy
	FileIDs        []string // only these files, if any
	Tags           []string // only chunks with one of these tags, if any
	Rerank         *Rerank  // nil: the first stage's order
}

// Citation is one retrieved passage an assistant message drew on: Index is the number the
// model was given it under ([1], [2] …), Text the passage trimmed to CitationTextLength
// characters.
type Citation struct {
	Index           int
	KnowledgeBaseID string
	FileID          string
	FileName        string
	ChunkIndex      int
	Score           float64
	Text            string
}

// Citation limits: what one stored message keeps of its sources.
const (
	// CitationTextLength is how many characters of a passage a citation quotes ("…" marks a cut).
	CitationTextLength = 1000
	// MaxCitations bounds the citations of one message.
	MaxCitations = 50
)

// RetrievalResult is what a search of an agent's knowledge bases found: the chunks merged best
// first, and a problem for each knowledge base that could not be searched (deleted, not yet
// ingested) while the others were.
type RetrievalResult struct {
	Hits     []Hit
	Problems []RetrievalProblem
	// EmbeddingTokens is what embedding the query took (the provider's count): the execute
	// counts it into the company's usage.
	EmbeddingTokens int
}

// RetrievalProblem is one knowledge base a retrieval left out, and why (a message for the
// client: it becomes an error event).
type RetrievalProblem struct {
	KnowledgeBaseID string
	Message         string
}

// knowledgeBaseFields are the accepted keys of a knowledge_bases entry: the contract's, Atthene's
// (enabled, description, retrieval_config) and the newer revision's aliases id and config.
var knowledgeBaseFields = []string{"name", "knowledge_base_type", "knowledge_base_id", "id", "enabled", "description", "retrieval_config", "config"}

// retrievalFields are the accepted keys of retrieval_config, as unknown-field errors list them
// (rerankFields are accepted too, unlisted: the words are those from before them).
var retrievalFields = []string{"top_k", "score_threshold", "strategy", "filter"}

func (v *validator) knowledgeBases(x any, path string) {
	list, ok := x.([]any)
	if !ok {
		v.add(path, "must be an array of objects, not %s", JSONType(x))
		return
	}
	if len(list) > MaxKnowledgeBases {
		v.add(path, "must have at most %d knowledge bases", MaxKnowledgeBases)
	}
	names, ids := map[string]bool{}, map[string]bool{}
	for i, e := range list {
		p := fmt.Sprintf("%s.%d", path, i)
		m, ok := e.(map[string]any)
		if !ok {
			v.add(p, "must be an object with name, knowledge_base_type and knowledge_base_id, not %s", JSONType(e))
			continue
		}
		for _, k := range sortedKeys(m) {
			if !slices.Contains(knowledgeBaseFields, k) {
				v.add(p+"."+k, "unknown field; a knowledge base entry has %s", strings.Join(knowledgeBaseFields, ", "))
			}
		}
		if s, ok := m["name"]; !ok || s == nil {
			v.add(p+".name", "is required")
		} else if name, ok := v.str(s, p+".name", true); ok {
			switch {
			case len(name) > MaxNameLength:
				v.add(p+".name", "must be at most %d characters", MaxNameLength)
			case names[name]:
				v.add(p+".name", "duplicate knowledge base name %q: the knowledge_base_search tool tells them apart by name", Clip(name, 60))
			}
			names[name] = true
		}
		id, idOK := v.kbID(m, p)
		if idOK {
			if ids[id] {
				v.add(p+".knowledge_base_id", "knowledge base %s is listed twice", Clip(id, 60))
			}
			ids[id] = true
		}
		if t, ok := m["knowledge_base_type"]; ok {
			if s, ok := v.str(t, p+".knowledge_base_type", true); ok && s != VectorEngine {
				v.add(p+".knowledge_base_type", "must be %q (the one vector engine), not %q", VectorEngine, Clip(s, 40))
			}
		}
		if b, ok := m["enabled"]; ok {
			v.boolean(b, p+".enabled")
		}
		if d, ok := m["description"]; ok {
			if s, ok := v.str(d, p+".description", false); ok && len(s) > MaxPromptLength {
				v.add(p+".description", "must be at most %d characters", MaxPromptLength)
			}
		}
		key := "retrieval_config"
		rc, hasRC := m[key]
		if c, ok := m["config"]; ok {
			if hasRC {
				v.add(p+".config", "give retrieval_config or its alias config, not both")
			}
			key, rc, hasRC = "config", c, true
		}
		if hasRC && rc != nil {
			v.retrievalConfig(rc, p+"."+key)
		}
	}
}

// kbID reads knowledge_base_id or its alias id.
func (v *validator) kbID(m map[string]any, p string) (string, bool) {
	field := "knowledge_base_id"
	raw, ok := m[field]
	if alias, has := m["id"]; has {
		if a, isStr := alias.(string); ok && (!isStr || a != raw) {
			v.add(p+".id", "give knowledge_base_id or its alias id, not both")
			return "", false
		}
		field, raw, ok = "id", alias, true
	}
	if !ok || raw == nil {
		v.add(p+".knowledge_base_id", "is required: the id of one of your knowledge bases")
		return "", false
	}
	s, ok := v.str(raw, p+"."+field, true)
	if ok && len(s) > 128 {
		v.add(p+"."+field, "must be at most 128 characters")
		return "", false
	}
	return s, ok
}

// ParseRetrieval checks and reads retrieval options in m: an agent's retrieval_config, or the
// search endpoint's body beside its query. Keys other than top_k, score_threshold, strategy,
// filter and extra are unknown; errors are named under path ("" at the top level).
func ParseRetrieval(m map[string]any, path string, extra ...string) (RetrievalConfig, []FieldError) {
	v := &validator{}
	v.retrievalConfig(m, path, extra...)
	return readRetrieval(m), v.errs
}

// retrievalConfig checks retrieval options: top_k 1..MaxRetrievalTopK, score_threshold 0..1,
// strategy one of Strategies, filter {file_ids, tags}.
func (v *validator) retrievalConfig(x any, path string, extra ...string) {
	m, ok := x.(map[string]any)
	if !ok {
		v.add(path, "must be an object with top_k, score_threshold, strategy and filter, not %s", JSONType(x))
		return
	}
	known := append(slices.Clone(extra), retrievalFields...)
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) && !slices.Contains(rerankFields, k) {
			v.add(join(path, k), "unknown field; the fields are %s", strings.Join(known, ", "))
		}
	}
	v.rerank(m, path)
	if t, ok := m["top_k"]; ok && t != nil {
		f, isNum := Number(t)
		if !isNum || f != float64(int(f)) || f < 1 || f > MaxRetrievalTopK {
			v.add(join(path, "top_k"), "must be an integer from 1 to %d", MaxRetrievalTopK)
		}
	}
	if t, ok := m["score_threshold"]; ok && t != nil {
		if f, ok := v.number(t, join(path, "score_threshold")); ok && (f < 0 || f > 1) {
			v.add(join(path, "score_threshold"), "must be between 0 and 1")
		}
	}
	if t, ok := m["strategy"]; ok && t != nil {
		if s, ok := v.str(t, join(path, "strategy"), true); ok && !slices.Contains(Strategies, RetrievalStrategy(s)) {
			v.add(join(path, "strategy"), "must be one of %s, not %q", strategyNames(), Clip(s, 40))
		}
	}
	if f, ok := m["filter"]; ok && f != nil {
		fp := join(path, "filter")
		fm, ok := f.(map[string]any)
		if !ok {
			v.add(fp, "must be an object with file_ids and tags, not %s", JSONType(f))
			return
		}
		for _, k := range sortedKeys(fm) {
			if k != "file_ids" && k != "tags" {
				v.add(fp+"."+k, "unknown field; filter has file_ids and tags")
			}
		}
		for _, k := range []string{"file_ids", "tags"} {
			if l, ok := fm[k]; ok && l != nil {
				v.stringList(l, fp+"."+k, MaxRetrievalFilterValues)
			}
		}
	}
}

// readRetrieval reads retrieval options retrievalConfig accepted (nil m: the defaults).
func readRetrieval(m map[string]any) RetrievalConfig {
	var c RetrievalConfig
	if f, ok := Number(m["top_k"]); ok {
		c.TopK = int(f)
	}
	c.ScoreThreshold = numberPtr(m["score_threshold"])
	if s, ok := m["strategy"].(string); ok {
		c.Strategy = RetrievalStrategy(s)
	}
	if fm, ok := m["filter"].(map[string]any); ok {
		c.FileIDs = stringValues(fm["file_ids"])
		c.Tags = stringValues(fm["tags"])
	}
	c.Rerank = readRerank(m, "")
	return c
}

// stringList checks an array of at most max non-empty strings.
func (v *validator) stringList(x any, path string, max int) {
	list, ok := x.([]any)
	if !ok {
		v.add(path, "must be an array of strings, not %s", JSONType(x))
		return
	}
	if len(list) > max {
		v.add(path, "must have at most %d values", max)
	}
	for i, e := range list {
		v.str(e, fmt.Sprintf("%s.%d", path, i), true)
	}
}

// strategyNames lists the strategies for messages.
func strategyNames() string {
	names := make([]string, len(Strategies))
	for i, s := range Strategies {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// parseKnowledgeBase reads one knowledge_bases entry ValidateAgentConfig accepted.
func parseKnowledgeBase(km map[string]any, path string) KnowledgeBaseRef {
	ref := KnowledgeBaseRef{Type: VectorEngine, Enabled: boolOr(km["enabled"], true), Path: path}
	ref.Name, _ = km["name"].(string)
	if t, ok := km["knowledge_base_type"].(string); ok {
		ref.Type = t
	}
	ref.ID, _ = km["knowledge_base_id"].(string)
	if ref.ID == "" {
		ref.ID, _ = km["id"].(string)
	}
	ref.Description, _ = km["description"].(string)
	rc, ok := km["retrieval_config"].(map[string]any)
	if !ok {
		rc, _ = km["config"].(map[string]any)
	}
	ref.Retrieval = readRetrieval(rc)
	return ref
}

// stringValues reads an array of strings (validated), without repeats.
func stringValues(x any) []string {
	list, _ := x.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// KnowledgeBaseRefs returns the knowledge_bases entries of every node of c, in configuration
// order.
func (c *AgentConfig) KnowledgeBaseRefs() []KnowledgeBaseRef {
	var out []KnowledgeBaseRef
	for _, name := range c.Order {
		if n := c.Nodes[name]; n != nil {
			out = append(out, n.KnowledgeBases...)
		}
	}
	return out
}

// KnowledgeBaseIDs returns the ids of refs, in order.
func KnowledgeBaseIDs(refs []KnowledgeBaseRef) []string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return ids
}

// CheckKnowledgeBaseAccess checks that company may read every knowledge base refs name, given
// owners (knowledge base id → its company, for those that exist). allowMissing accepts ids
// that no longer exist (a stored agent whose knowledge base was deleted still runs; its
// retrieval reports the gap) while foreign ones are still refused. The errors name each entry's
// knowledge_base_id field.
func CheckKnowledgeBaseAccess(refs []KnowledgeBaseRef, owners map[string]string, company string, allowMissing bool) []FieldError {
	var errs []FieldError
	for _, r := range refs {
		owner, exists := owners[r.ID]
		switch {
		case exists && owner == company:
		case !exists && allowMissing:
		default:
			// A foreign knowledge base answers like an unknown one: ids of other companies
			// cannot be probed.
			errs = append(errs, FieldError{Field: r.Path + ".knowledge_base_id",
				Message: fmt.Sprintf("knowledge base %q not found: it must be one of your company's knowledge bases", Clip(r.ID, 60))})
		}
	}
	return errs
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
