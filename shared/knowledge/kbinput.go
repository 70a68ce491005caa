package knowledge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
)

// kbFields are the fields a knowledge base's body may have. save_as_collection (false only),
// new_collection_name, new_collection_description and llm_config are Atthene's, accepted so its
// clients work unchanged, and not used.
var kbFields = []string{"name", "description", "processing_engine", "selected_collections", "collection_ids",
	"selected_datasources", "chunking_strategy", "embedding_config", "save_as_collection", "new_collection_name",
	"new_collection_description", "llm_config"}

// Bounds of a knowledge base's body that keep one request from making work (or an error body)
// out of proportion to it.
const (
	// MaxSelectedDatasources bounds selected_datasources (a knowledge base holds at most 1,000
	// files by default, Limits.MaxDatasources).
	MaxSelectedDatasources = 1000
	// MaxFieldErrors is how many field errors a 400 lists; one more entry says how many more
	// were found.
	MaxFieldErrors = 20
)

// MinChunkSize is the smallest chunk_size of each split_by: about a sentence (a hundred
// characters of English) in every unit, so that a chunk means something on its own and a file
// makes at most about one chunk per sentence. A chunk_overlap is at most half the chunk_size, so
// that overlapping chunks at most double the text embedded.
var MinChunkSize = map[string]int{chunk.SplitChar: 100, chunk.SplitWord: 15, chunk.SplitToken: 25}

// kbInput is a knowledge base's body as parsed, with the field errors found on the way.
type kbInput struct {
	errs                      []domain.FieldError
	more                      int // field errors past MaxFieldErrors, counted in the last entry
	name, description         string
	collField                 string // how the body named the collections (selected_collections or collection_ids)
	collections, files        []string
	embedding                 domain.Embedding
	embeddingBad, chunkingBad bool // type errors already reported: no further checks
	// The chunking_strategy fields the body set (nil: the default).
	strategy, splitBy *string
	size, overlap     *int
	separators        []string
}

// add records a field error. Past MaxFieldErrors only their number is kept, in one last entry
// naming the first left out (10,000 unknown ids make a 400 of 21 entries, not of a megabyte).
func (in *kbInput) add(field, format string, args ...any) {
	if len(in.errs) < MaxFieldErrors {
		in.errs = append(in.errs, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
		return
	}
	in.more++
	msg := fmt.Sprintf("and %d more errors, not listed (a response lists the first %d)", in.more, MaxFieldErrors)
	if in.more == 1 {
		top, _, _ := strings.Cut(field, ".")
		in.errs = append(in.errs, domain.FieldError{Field: top, Message: msg})
		return
	}
	for i := len(in.errs) - 1; i >= 0; i-- {
		if strings.HasPrefix(in.errs[i].Message, "and ") && strings.Contains(in.errs[i].Message, " more errors, not listed") {
			in.errs[i].Message = msg
			return
		}
	}
}

// parseKB reads a knowledge base's body, checking types and shapes (no I/O).
func parseKB(body map[string]any) *kbInput {
	in := &kbInput{collField: "selected_collections"}
	for _, k := range sortedKeys(body) {
		if !slices.Contains(kbFields, k) {
			in.add(k, "unknown field; a knowledge base has %s", strings.Join(kbFields[:8], ", "))
		}
	}
	in.name = in.str(body, "name", "name", true)
	if in.name != "" && utf8.RuneCountInString(in.name) > domain.MaxNameLength {
		in.add("name", "must be at most %d characters", domain.MaxNameLength)
	}
	in.description = in.str(body, "description", "description", false)
	if utf8.RuneCountInString(in.description) > MaxKBDescriptionLength {
		in.add("description", "must be at most %d characters", MaxKBDescriptionLength)
	}
	if v, ok := body["processing_engine"]; ok {
		if e, isStr := v.(string); !isStr || e != domain.EngineOpenSearch {
			in.add("processing_engine", "must be %q, the one engine offered (got %s)", domain.EngineOpenSearch, describe(v))
		}
	}
	sel, alias := body["selected_collections"] != nil, body["collection_ids"] != nil
	switch {
	case sel && alias:
		in.add("collection_ids", "give selected_collections or its alias collection_ids, not both")
	case alias:
		in.collField = "collection_ids"
	}
	in.collections = in.ids(body[in.collField], in.collField, MaxKBCollections)
	in.files = in.ids(body["selected_datasources"], "selected_datasources", MaxSelectedDatasources)
	if len(in.collections) == 0 && len(in.files) == 0 && !in.has(in.collField) && !in.has("selected_datasources") {
		in.add(in.collField, "give at least one collection id in selected_collections or one file id in selected_datasources")
	}
	if v, ok := body["save_as_collection"]; ok {
		if b, isBool := v.(bool); !isBool {
			in.add("save_as_collection", "must be a boolean")
		} else if b {
			in.add("save_as_collection", "is not supported: create a collection with POST /api/v1/collections/ and select it")
		}
	}
	for _, k := range []string{"new_collection_name", "new_collection_description"} {
		if v, ok := body[k]; ok && v != nil {
			if _, isStr := v.(string); !isStr {
				in.add(k, "must be a string")
			}
		}
	}
	if v, ok := body["llm_config"]; ok && v != nil {
		if _, isObj := v.(map[string]any); !isObj {
			in.add("llm_config", "must be an object")
		}
	}
	in.parseEmbedding(body["embedding_config"])
	in.parseChunking(body["chunking_strategy"])
	return in
}

// has reports whether a field error names field or one of its items.
func (in *kbInput) has(field string) bool {
	for _, e := range in.errs {
		if e.Field == field || strings.HasPrefix(e.Field, field+".") {
			return true
		}
	}
	return false
}

func (in *kbInput) str(m map[string]any, key, field string, required bool) string {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			in.add(field, "is required")
		}
		return ""
	}
	s, isStr := v.(string)
	switch {
	case !isStr:
		in.add(field, "must be a string, not %s", domain.JSONType(v))
	case required && !domain.HasVisible(s):
		in.add(field, "must have a visible character")
	}
	return strings.TrimSpace(s)
}

// ids reads an array of ids (deduplicated, in order); max < 0 means no bound here.
func (in *kbInput) ids(v any, field string, max int) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		in.add(field, "must be an array of ids, not %s", domain.JSONType(v))
		return nil
	}
	if max >= 0 && len(list) > max {
		in.add(field, "must list at most %d ids (got %d)", max, len(list))
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, x := range list {
		s, isStr := x.(string)
		if !isStr || strings.TrimSpace(s) == "" {
			in.add(fmt.Sprintf("%s.%d", field, i), "must be an id (a non-empty string), not %s", describe(x))
			continue
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// parseEmbedding reads embedding_config's fields (the Embedders check their values).
func (in *kbInput) parseEmbedding(v any) {
	if v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		in.add("embedding_config", "must be an object, not %s", domain.JSONType(v))
		in.embeddingBad = true
		return
	}
	before := len(in.errs)
	for _, k := range sortedKeys(m) {
		if k != "provider" && k != "model" && k != "dimensions" {
			in.add("embedding_config."+k, "unknown field; embedding_config has provider, model and dimensions")
		}
	}
	in.embedding.Provider = in.str(m, "provider", "embedding_config.provider", false)
	in.embedding.Model = in.str(m, "model", "embedding_config.model", false)
	if d, ok := in.integer(m, "dimensions", "embedding_config.dimensions"); ok {
		in.embedding.Dimensions = d
	}
	in.embeddingBad = len(in.errs) > before
}

// parseChunking reads chunking_strategy's fields; their values are the splitter's to check.
func (in *kbInput) parseChunking(v any) {
	if v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		in.add("chunking_strategy", "must be an object, not %s", domain.JSONType(v))
		in.chunkingBad = true
		return
	}
	before := len(in.errs)
	known := []string{"strategy", "chunk_size", "chunk_overlap", "split_by", "recursive_separators"}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			in.add("chunking_strategy."+k, "unknown field; chunking_strategy has %s", strings.Join(known, ", "))
		}
	}
	if _, ok := m["strategy"]; ok {
		s := in.str(m, "strategy", "chunking_strategy.strategy", false)
		in.strategy = &s
	}
	if _, ok := m["split_by"]; ok {
		s := in.str(m, "split_by", "chunking_strategy.split_by", false)
		if s == chunk.SplitCharacter {
			s = chunk.SplitChar
		}
		in.splitBy = &s
	}
	if n, ok := in.integer(m, "chunk_size", "chunking_strategy.chunk_size"); ok {
		in.size = &n
	}
	if n, ok := in.integer(m, "chunk_overlap", "chunking_strategy.chunk_overlap"); ok {
		in.overlap = &n
	}
	if x, ok := m["recursive_separators"]; ok {
		list, isList := x.([]any)
		if !isList {
			in.add("chunking_strategy.recursive_separators", "must be an array of strings, not %s", domain.JSONType(x))
		}
		in.separators = []string{}
		for i, e := range list {
			s, isStr := e.(string)
			if !isStr {
				in.add(fmt.Sprintf("chunking_strategy.recursive_separators.%d", i), "must be a string, not %s", domain.JSONType(e))
				continue
			}
			in.separators = append(in.separators, s)
		}
	}
	in.chunkingBad = len(in.errs) > before
}

// integer reads an integral JSON number.
func (in *kbInput) integer(m map[string]any, key, field string) (int, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	f, isNum := domain.Number(v)
	if !isNum || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		in.add(field, "must be an integer, not %s", describe(v))
		return 0, false
	}
	return int(f), true
}

// chunking is the chunking_strategy: the body's fields over the default for an embedder that
// reads maxTokens tokens (0: unknown). An overlap left out is the default's, or a tenth of a
// chunk_size it would be more than half of, so that setting chunk_size alone never makes the
// overlap too large. A split_by given alone takes the default size of its unit. The bounds the
// splitter does not know (MinChunkSize, an overlap at most half the size) are checked here.
func (in *kbInput) chunking(maxTokens int) domain.Chunking {
	c := defaultChunking(maxTokens)
	if in.strategy != nil {
		c.Strategy = *in.strategy
	}
	if in.splitBy != nil && *in.splitBy != c.SplitBy {
		c.SplitBy = *in.splitBy
		c.ChunkSize, c.ChunkOverlap = unitDefault(c.SplitBy, maxTokens)
	}
	if in.size != nil {
		c.ChunkSize = *in.size
		if in.overlap == nil && c.ChunkOverlap > c.ChunkSize/2 {
			c.ChunkOverlap = max(c.ChunkSize/10, 0)
		}
	}
	if in.overlap != nil {
		c.ChunkOverlap = *in.overlap
	}
	if in.separators != nil {
		c.RecursiveSeparators = in.separators
	}
	if !in.chunkingBad {
		if least, ok := MinChunkSize[c.SplitBy]; ok && c.ChunkSize > 0 && c.ChunkSize < least {
			in.add("chunking_strategy.chunk_size", "must be at least %d when split_by is %q (got %d)", least, c.SplitBy, c.ChunkSize)
		} else if c.ChunkOverlap > c.ChunkSize/2 && c.ChunkOverlap < c.ChunkSize {
			in.add("chunking_strategy.chunk_overlap", "must be at most half of chunk_size (%d; got %d)", c.ChunkSize/2, c.ChunkOverlap)
		}
	}
	return c
}

// unitDefault is the default size and overlap in unit for an embedder that reads maxTokens
// tokens, taken when a body sets split_by alone: the default's where it counts in that unit;
// Atthene's 500 (50 overlapping) characters or words, or 60 (10) words for a small model; the
// size of chunk.DefaultTokens in tokens.
func unitDefault(unit string, maxTokens int) (size, overlap int) {
	small := maxTokens > 0 && maxTokens < 1024
	switch {
	case unit == chunk.SplitToken:
		c := chunk.DefaultTokens(maxTokens)
		return c.ChunkSize, c.ChunkOverlap
	case unit == chunk.SplitWord && small:
		c := chunk.DefaultLocal()
		return c.ChunkSize, c.ChunkOverlap
	}
	c := chunk.Default()
	return c.ChunkSize, c.ChunkOverlap
}

// defaultChunking is the chunking_strategy for an embedder that reads maxTokens tokens:
// Atthene's (500 words, 50 overlap) where that fits (1,024 tokens or more: a word is about 1.3
// to 1.6 tokens), and for smaller models chunks measured in the model's own tokens
// (chunk.DefaultTokens: 120 of the local model's 128), which need a second split only where the
// tokenizer counts a word differently alone and in context. Counted in words, text with many
// line breaks (a man page: every newline is a token of the local model) passed 128 tokens in
// most chunks. Whatever the default, a chunk over the model's limit is split before embedding.
func defaultChunking(maxTokens int) domain.Chunking {
	if maxTokens <= 0 || maxTokens >= 1024 {
		return chunk.Default()
	}
	return chunk.DefaultTokens(maxTokens)
}

// describe names a JSON value for a message: strings quoted (clipped), other values by type.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", domain.Clip(s, 40))
	}
	return domain.JSONType(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
