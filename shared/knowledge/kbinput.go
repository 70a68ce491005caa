package knowledge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
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

// KBInput is a knowledge base to create: its name and description, the collections and files
// it is built from, and how they are embedded and chunked (zero values: the defaults).
type KBInput struct {
	Name        string
	Description string
	// Collections are collection ids (selected_collections, alias collection_ids) and
	// Datasources file ids (selected_datasources); at least one of either.
	Collections, Datasources []string
	Embedding                domain.Embedding
	Chunking                 ChunkingInput
	// collField is how the body named the collections ("": selected_collections).
	collField string
	// embeddingNotObject and chunkingNotObject are true when the body's embedding_config or
	// chunking_strategy was not an object.
	embeddingNotObject, chunkingNotObject bool
	shape                                 library.Shape
}

// ChunkingInput is the chunking_strategy a body sets; a nil field takes the default that fits
// the embedder.
type ChunkingInput struct {
	Strategy, SplitBy   *string
	ChunkSize, Overlap  *int
	RecursiveSeparators []string
}

// kbInput is a knowledge base's input as validated, with the field errors found on the way.
type kbInput struct {
	errs                      []domain.FieldError
	more                      int // field errors past MaxFieldErrors, counted in the last entry
	name, description         string
	collField                 string // how the body named the collections (selected_collections or collection_ids)
	collections, files        []string
	embedding                 domain.Embedding
	embeddingBad, chunkingBad bool // type errors already reported: no further checks
	chunk                     ChunkingInput
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

// UnmarshalJSON reads the body of POST /knowledge-bases/: the types and shapes of its fields
// (the values are checked by CreateKB).
func (in *KBInput) UnmarshalJSON(b []byte) error {
	body, err := domain.DecodeObject(b)
	if err != nil {
		return err
	}
	*in = KBInput{collField: "selected_collections"}
	d := &kbDecoder{s: &in.shape}
	for _, k := range sortedKeys(body) {
		if !slices.Contains(kbFields, k) {
			d.s.Add("", k, fmt.Sprintf("unknown field; a knowledge base has %s", strings.Join(kbFields[:8], ", ")))
		}
	}
	in.Name = d.str(body, "name", "name", true)
	in.Description = d.str(body, "description", "description", false)
	if v, ok := body["processing_engine"]; ok {
		if e, isStr := v.(string); !isStr || e != domain.EngineOpenSearch {
			d.s.Add("processing_engine", "processing_engine", fmt.Sprintf("must be %q, the one engine offered (got %s)", domain.EngineOpenSearch, describe(v)))
		}
	}
	sel, alias := body["selected_collections"] != nil, body["collection_ids"] != nil
	switch {
	case sel && alias:
		d.s.Add("alias", "collection_ids", "give selected_collections or its alias collection_ids, not both")
	case alias:
		in.collField = "collection_ids"
	}
	in.Collections = d.ids(body[in.collField], in.collField)
	in.Datasources = d.ids(body["selected_datasources"], "selected_datasources")
	if v, ok := body["save_as_collection"]; ok {
		if b, isBool := v.(bool); !isBool {
			d.s.Add("compat", "save_as_collection", "must be a boolean")
		} else if b {
			d.s.Add("compat", "save_as_collection", "is not supported: create a collection with POST /api/v1/collections/ and select it")
		}
	}
	for _, k := range []string{"new_collection_name", "new_collection_description"} {
		if v, ok := body[k]; ok && v != nil {
			if _, isStr := v.(string); !isStr {
				d.s.Add("compat", k, "must be a string")
			}
		}
	}
	if v, ok := body["llm_config"]; ok && v != nil {
		if _, isObj := v.(map[string]any); !isObj {
			d.s.Add("compat", "llm_config", "must be an object")
		}
	}
	in.Embedding, in.embeddingNotObject = d.embedding(body["embedding_config"])
	in.Chunking, in.chunkingNotObject = d.chunking(body["chunking_strategy"])
	return nil
}

// kbDecoder reads the fields of a knowledge base's body into a shape, each error under the key
// CreateKB reports it at.
type kbDecoder struct{ s *library.Shape }

// str reads a string field (trimmed); key is the shape's key of its errors.
func (d *kbDecoder) str(m map[string]any, key, field string, required bool) string {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			d.s.Add(field, field, "is required")
		}
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		d.s.Add(field, field, "must be a string, not "+domain.JSONType(v))
	}
	return s
}

// ids reads an array of ids as given, bad items as "" (their errors under field.N).
func (d *kbDecoder) ids(v any, field string) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		d.s.Add(field, field, "must be an array of ids, not "+domain.JSONType(v))
		return nil
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, isStr := x.(string)
		if !isStr {
			f := fmt.Sprintf("%s.%d", field, i)
			d.s.Add(f, f, "must be an id (a non-empty string), not "+describe(x))
		}
		out[i] = s
	}
	return out
}

// embedding reads embedding_config's fields (the Embedders check their values).
func (d *kbDecoder) embedding(v any) (e domain.Embedding, notObject bool) {
	if v == nil {
		return e, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.s.Add("embedding_config", "embedding_config", "must be an object, not "+domain.JSONType(v))
		return e, true
	}
	for _, k := range sortedKeys(m) {
		if k != "provider" && k != "model" && k != "dimensions" {
			d.s.Add("embedding_config", "embedding_config."+k, "unknown field; embedding_config has provider, model and dimensions")
		}
	}
	sub := &kbDecoder{s: &library.Shape{}}
	e.Provider = strings.TrimSpace(sub.str(m, "provider", "embedding_config.provider", false))
	e.Model = strings.TrimSpace(sub.str(m, "model", "embedding_config.model", false))
	d.s.AddAll("embedding_config", (*sub.s)["embedding_config.provider"])
	d.s.AddAll("embedding_config", (*sub.s)["embedding_config.model"])
	if n, ok := d.integer(m, "dimensions", "embedding_config", "embedding_config.dimensions"); ok {
		e.Dimensions = n
	}
	return e, false
}

// chunking reads chunking_strategy's fields; their values are the splitter's to check.
func (d *kbDecoder) chunking(v any) (c ChunkingInput, notObject bool) {
	if v == nil {
		return c, false
	}
	const key = "chunking_strategy"
	m, ok := v.(map[string]any)
	if !ok {
		d.s.Add(key, key, "must be an object, not "+domain.JSONType(v))
		return c, true
	}
	known := []string{"strategy", "chunk_size", "chunk_overlap", "split_by", "recursive_separators"}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			d.s.Add(key, key+"."+k, "unknown field; chunking_strategy has "+strings.Join(known, ", "))
		}
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"strategy", &c.Strategy}, {"split_by", &c.SplitBy}} {
		if x, ok := m[f.name]; ok {
			s, isStr := x.(string)
			if x != nil && !isStr {
				d.s.Add(key, key+"."+f.name, "must be a string, not "+domain.JSONType(x))
			}
			s = strings.TrimSpace(s)
			*f.dst = &s
		}
	}
	if n, ok := d.integer(m, "chunk_size", key, key+".chunk_size"); ok {
		c.ChunkSize = &n
	}
	if n, ok := d.integer(m, "chunk_overlap", key, key+".chunk_overlap"); ok {
		c.Overlap = &n
	}
	if x, ok := m["recursive_separators"]; ok {
		list, isList := x.([]any)
		if !isList {
			d.s.Add(key, key+".recursive_separators", "must be an array of strings, not "+domain.JSONType(x))
		}
		c.RecursiveSeparators = []string{}
		for i, e := range list {
			s, isStr := e.(string)
			if !isStr {
				d.s.Add(key, fmt.Sprintf("%s.recursive_separators.%d", key, i), "must be a string, not "+domain.JSONType(e))
				continue
			}
			c.RecursiveSeparators = append(c.RecursiveSeparators, s)
		}
	}
	return c, false
}

// integer reads an integral JSON number (its error under key).
func (d *kbDecoder) integer(m map[string]any, name, key, field string) (int, bool) {
	v, ok := m[name]
	if !ok || v == nil {
		return 0, false
	}
	f, isNum := domain.Number(v)
	if !isNum || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		d.s.Add(key, field, "must be an integer, not "+describe(v))
		return 0, false
	}
	return int(f), true
}

// parseKB checks a knowledge base's input (no I/O): the errors of its body's shape and of its
// values, field by field.
func parseKB(kb KBInput) *kbInput {
	in := &kbInput{collField: kb.collField, embedding: kb.Embedding, chunk: kb.Chunking}
	if in.collField == "" {
		in.collField = "selected_collections"
	}
	sh := kb.shape
	in.addAll(sh[""])
	if e := sh["name"]; len(e) > 0 {
		in.addAll(e)
	} else if !domain.HasVisible(kb.Name) {
		in.add("name", "must have a visible character")
	}
	if in.name = strings.TrimSpace(kb.Name); in.name != "" && utf8.RuneCountInString(in.name) > domain.MaxNameLength {
		in.add("name", "must be at most %d characters", domain.MaxNameLength)
	}
	in.addAll(sh["description"])
	if in.description = strings.TrimSpace(kb.Description); utf8.RuneCountInString(in.description) > MaxKBDescriptionLength {
		in.add("description", "must be at most %d characters", MaxKBDescriptionLength)
	}
	in.addAll(sh["processing_engine"])
	in.addAll(sh["alias"])
	in.collections = in.ids(kb.Collections, sh, in.collField, MaxKBCollections)
	in.files = in.ids(kb.Datasources, sh, "selected_datasources", MaxSelectedDatasources)
	if len(in.collections) == 0 && len(in.files) == 0 && !in.has(in.collField) && !in.has("selected_datasources") {
		in.add(in.collField, "give at least one collection id in selected_collections or one file id in selected_datasources")
	}
	in.addAll(sh["compat"])
	// A section whose errors were recorded (or that was not an object) is checked no further.
	before := len(in.errs)
	in.addAll(sh["embedding_config"])
	in.embeddingBad = kb.embeddingNotObject || len(in.errs) > before
	before = len(in.errs)
	in.addAll(sh["chunking_strategy"])
	in.chunkingBad = kb.chunkingNotObject || len(in.errs) > before
	return in
}

// addAll records field errors.
func (in *kbInput) addAll(errs []domain.FieldError) {
	for _, e := range errs {
		in.add(e.Field, "%s", e.Message)
	}
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

// ids checks a list of ids (deduplicated, in order; the errors of bad items are sh's under
// field.N); max < 0 means no bound here.
func (in *kbInput) ids(list []string, sh library.Shape, field string, max int) []string {
	if e := sh[field]; len(e) > 0 {
		in.addAll(e)
		return nil
	}
	if max >= 0 && len(list) > max {
		in.add(field, "must list at most %d ids (got %d)", max, len(list))
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, s := range list {
		f := fmt.Sprintf("%s.%d", field, i)
		if e := sh[f]; len(e) > 0 {
			in.addAll(e)
			continue
		}
		if strings.TrimSpace(s) == "" {
			in.add(f, "must be an id (a non-empty string), not %s", describe(s))
			continue
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// chunking is the chunking_strategy: the body's fields over the default for an embedder that
// reads maxTokens tokens (0: unknown). An overlap left out is the default's, or a tenth of a
// chunk_size it would be more than half of, so that setting chunk_size alone never makes the
// overlap too large. A split_by given alone takes the default size of its unit. The bounds the
// splitter does not know (MinChunkSize, an overlap at most half the size) are checked here.
func (in *kbInput) chunking(maxTokens int) domain.Chunking {
	c := defaultChunking(maxTokens)
	ch := in.chunk
	if ch.Strategy != nil {
		c.Strategy = *ch.Strategy
	}
	if ch.SplitBy != nil {
		splitBy := *ch.SplitBy
		if splitBy == chunk.SplitCharacter {
			splitBy = chunk.SplitChar
		}
		if splitBy != c.SplitBy {
			c.SplitBy = splitBy
			c.ChunkSize, c.ChunkOverlap = unitDefault(c.SplitBy, maxTokens)
		}
	}
	if ch.ChunkSize != nil {
		c.ChunkSize = *ch.ChunkSize
		if ch.Overlap == nil && c.ChunkOverlap > c.ChunkSize/2 {
			c.ChunkOverlap = max(c.ChunkSize/10, 0)
		}
	}
	if ch.Overlap != nil {
		c.ChunkOverlap = *ch.Overlap
	}
	if ch.RecursiveSeparators != nil {
		c.RecursiveSeparators = ch.RecursiveSeparators
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
