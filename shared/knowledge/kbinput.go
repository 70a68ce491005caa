package knowledge

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
)

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

// KBInput is a knowledge base to create: POST /knowledge-bases/, its name and description, the
// collections and files it is built from, and how they are embedded and chunked (left out: the
// defaults). save_as_collection (false only), new_collection_name, new_collection_description
// and llm_config are Atthene's, accepted so its clients work unchanged, and not used.
type KBInput struct {
	Name             *string                 `json:"name" got:"not"`
	Description      *string                 `json:"description" got:"not"`
	ProcessingEngine domain.Optional[string] `json:"processing_engine"`
	// Collections are collection ids (selected_collections, or its alias CollectionIDs) and
	// Datasources file ids (selected_datasources); at least one of either. A null id is refused.
	Collections   []*string       `json:"selected_collections" want:"an array of ids" got:"not"`
	CollectionIDs []*string       `json:"collection_ids" want:"an array of ids" got:"not"`
	Datasources   []*string       `json:"selected_datasources" want:"an array of ids" got:"not"`
	Chunking      *ChunkingInput  `json:"chunking_strategy" got:"not"`
	Embedding     *EmbeddingInput `json:"embedding_config" got:"not"`

	SaveAsCollection         domain.Optional[bool]      `json:"save_as_collection"`
	NewCollectionName        *string                    `json:"new_collection_name"`
	NewCollectionDescription *string                    `json:"new_collection_description"`
	LLMConfig                map[string]json.RawMessage `json:"llm_config"`

	domain.Shape `json:"-"`     // the body's shape errors, not a key of it
	sent         map[string]any // the values of the wrong type, by path (WrongValue)
}

// EmbeddingInput is the embedding_config a body sets (the Embedders check its values).
type EmbeddingInput struct {
	Provider   *string  `json:"provider" got:"not"`
	Model      *string  `json:"model" got:"not"`
	Dimensions *float64 `json:"dimensions"`
}

// ChunkingInput is the chunking_strategy a body sets; a field left out takes the default that
// fits the embedder (one sent as null too, but for strategy and split_by, which are then "").
type ChunkingInput struct {
	Strategy            domain.Optional[string]    `json:"strategy" got:"not"`
	SplitBy             domain.Optional[string]    `json:"split_by" got:"not"`
	ChunkSize           *float64                   `json:"chunk_size"`
	Overlap             *float64                   `json:"chunk_overlap"`
	RecursiveSeparators domain.Optional[[]*string] `json:"recursive_separators" want:"an array of strings" got:"not"`
	// ContextualHeaders embeds each chunk after a header naming its file and section (default
	// false; see domain.Chunking).
	ContextualHeaders domain.Optional[bool] `json:"contextual_headers" got:"not"`
}

// UnclippedKeys has the decoder name a knowledge base's unknown keys whole, as it always has.
func (*KBInput) UnclippedKeys() {}

// WrongValue keeps a value of the wrong type, for its error to describe it.
func (in *KBInput) WrongValue(path string, v any) {
	if in.sent == nil {
		in.sent = map[string]any{}
	}
	in.sent[path] = v
}

// UnknownField words what a knowledge base's body and its sections have.
func (*KBInput) UnknownField(object, _ string) string {
	switch object {
	case "embedding_config":
		return "embedding_config has provider, model and dimensions"
	case "chunking_strategy":
		return "chunking_strategy has " + strings.Join(chunkingFields, ", ")
	}
	return "a knowledge base has name, description, processing_engine, selected_collections, collection_ids, selected_datasources, chunking_strategy, embedding_config"
}

// chunkingFields are the fields of a chunking_strategy, in the order its errors name them.
var chunkingFields = []string{"strategy", "chunk_size", "chunk_overlap", "split_by", "recursive_separators", "contextual_headers"}

// chunkSettings is a chunking_strategy as read: a nil field takes the default.
type chunkSettings struct {
	Strategy, SplitBy   *string
	ChunkSize, Overlap  *int
	RecursiveSeparators []string
	ContextualHeaders   bool
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
	chunk                     chunkSettings
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

// parseKB checks a knowledge base's input (no I/O): the errors of its body's shape and of its
// values, field by field.
func parseKB(kb KBInput) *kbInput {
	in := &kbInput{collField: "selected_collections"}
	in.addAll(kb.UnknownIn(""))
	switch e := kb.WrongAt("name"); {
	case e != nil:
		in.addAll([]domain.FieldError{*e})
	case kb.Name == nil:
		in.add("name", "is required")
	case !domain.HasVisible(*kb.Name):
		in.add("name", "must have a visible character")
	}
	if kb.Name != nil {
		in.name = strings.TrimSpace(*kb.Name)
	}
	if in.name != "" && utf8.RuneCountInString(in.name) > domain.MaxNameLength {
		in.add("name", "must be at most %d characters", domain.MaxNameLength)
	}
	if e := kb.WrongAt("description"); e != nil {
		in.addAll([]domain.FieldError{*e})
	} else if kb.Description != nil {
		in.description = strings.TrimSpace(*kb.Description)
	}
	if utf8.RuneCountInString(in.description) > MaxKBDescriptionLength {
		in.add("description", "must be at most %d characters", MaxKBDescriptionLength)
	}
	if e := kb.ProcessingEngine; e.Set && (e.Null || kb.sent["processing_engine"] != nil || e.Value != domain.EngineOpenSearch) {
		got := kb.sent["processing_engine"]
		if got == nil && !e.Null {
			got = e.Value
		}
		in.add("processing_engine", "must be %q, the one engine offered (got %s)", domain.EngineOpenSearch, describe(got))
	}
	list := kb.Collections
	sel := kb.Collections != nil || kb.sent["selected_collections"] != nil
	switch alias := kb.CollectionIDs != nil || kb.sent["collection_ids"] != nil; {
	case sel && alias:
		in.add("collection_ids", "give selected_collections or its alias collection_ids, not both")
	case alias:
		in.collField, list = "collection_ids", kb.CollectionIDs
	}
	in.collections = in.ids(kb, list, in.collField, MaxKBCollections)
	in.files = in.ids(kb, kb.Datasources, "selected_datasources", MaxSelectedDatasources)
	if len(in.collections) == 0 && len(in.files) == 0 && !in.has(in.collField) && !in.has("selected_datasources") {
		in.add(in.collField, "give at least one collection id in selected_collections or one file id in selected_datasources")
	}
	if s := kb.SaveAsCollection; s.Set && (s.Null || kb.WrongAt("save_as_collection") != nil) {
		in.add("save_as_collection", "must be a boolean")
	} else if s.Value {
		in.add("save_as_collection", "is not supported: create a collection with POST /api/v1/collections/ and select it")
	}
	for _, k := range []string{"new_collection_name", "new_collection_description"} {
		if kb.WrongAt(k) != nil {
			in.add(k, "must be a string")
		}
	}
	if kb.WrongAt("llm_config") != nil {
		in.add("llm_config", "must be an object")
	}
	// A section whose errors were recorded (or that was not an object) is checked no further.
	before := len(in.errs)
	in.embeddingSection(kb)
	in.embeddingBad = kb.WrongAt("embedding_config") != nil || len(in.errs) > before
	before = len(in.errs)
	in.chunkingSection(kb)
	in.chunkingBad = kb.WrongAt("chunking_strategy") != nil || len(in.errs) > before
	return in
}

// embeddingSection reads embedding_config's fields (the Embedders check their values).
func (in *kbInput) embeddingSection(kb KBInput) {
	if e := kb.WrongAt("embedding_config"); e != nil {
		in.addAll([]domain.FieldError{*e})
		return
	}
	e := kb.Embedding
	if e == nil {
		return
	}
	in.addAll(kb.UnknownIn("embedding_config"))
	in.embedding.Provider = in.str(kb, e.Provider, "embedding_config.provider")
	in.embedding.Model = in.str(kb, e.Model, "embedding_config.model")
	if n, ok := in.integer(kb, e.Dimensions, "embedding_config.dimensions"); ok {
		in.embedding.Dimensions = n
	}
}

// chunkingSection reads chunking_strategy's fields; their values are the splitter's to check.
func (in *kbInput) chunkingSection(kb KBInput) {
	const key = "chunking_strategy"
	if e := kb.WrongAt(key); e != nil {
		in.addAll([]domain.FieldError{*e})
		return
	}
	c := kb.Chunking
	if c == nil {
		return
	}
	in.addAll(kb.UnknownIn(key))
	for _, f := range []struct {
		name string
		v    domain.Optional[string]
		dst  **string
	}{{"strategy", c.Strategy, &in.chunk.Strategy}, {"split_by", c.SplitBy, &in.chunk.SplitBy}} {
		if f.v.Set {
			s := in.str(kb, &f.v.Value, key+"."+f.name)
			*f.dst = &s
		}
	}
	if n, ok := in.integer(kb, c.ChunkSize, key+".chunk_size"); ok {
		in.chunk.ChunkSize = &n
	}
	if n, ok := in.integer(kb, c.Overlap, key+".chunk_overlap"); ok {
		in.chunk.Overlap = &n
	}
	if rs := c.RecursiveSeparators; rs.Set {
		field := key + ".recursive_separators"
		switch e := kb.WrongAt(field); {
		case e != nil:
			in.addAll([]domain.FieldError{*e})
		case rs.Null:
			in.add(field, "must be an array of strings, not null")
		}
		in.chunk.RecursiveSeparators = []string{}
		for i, s := range rs.Value {
			if s == nil {
				f := fmt.Sprintf("%s.%d", field, i)
				in.add(f, "must be a string, not %s", domain.JSONType(kb.sent[f]))
				continue
			}
			in.chunk.RecursiveSeparators = append(in.chunk.RecursiveSeparators, *s)
		}
	}
	if h := c.ContextualHeaders; h.Set {
		if e := kb.WrongAt(key + ".contextual_headers"); e != nil {
			in.addAll([]domain.FieldError{*e})
		} else {
			in.chunk.ContextualHeaders = h.Value // null: the default, false
		}
	}
}

// str is a string field of a section, trimmed ("" when it is of the wrong type, its error
// recorded).
func (in *kbInput) str(kb KBInput, s *string, field string) string {
	if e := kb.WrongAt(field); e != nil {
		in.addAll([]domain.FieldError{*e})
		return ""
	}
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// integer reads an integral number of at most 1e9 in size (null or left out: none).
func (in *kbInput) integer(kb KBInput, f *float64, field string) (int, bool) {
	if v, wrong := kb.sent[field]; wrong {
		in.add(field, "must be an integer, not %s", describe(v))
		return 0, false
	}
	if f == nil {
		return 0, false
	}
	if *f != math.Trunc(*f) || math.Abs(*f) > 1e9 {
		in.add(field, "must be an integer, not a number")
		return 0, false
	}
	return int(*f), true
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

// ids checks a list of ids (deduplicated, in order); max < 0 means no bound here.
func (in *kbInput) ids(kb KBInput, list []*string, field string, max int) []string {
	if e := kb.WrongAt(field); e != nil {
		in.addAll([]domain.FieldError{*e})
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
		switch {
		case s == nil: // null, or a value of the wrong type
			in.add(f, "must be an id (a non-empty string), not %s", describe(kb.sent[f]))
		case strings.TrimSpace(*s) == "":
			in.add(f, "must be an id (a non-empty string), not %s", describe(*s))
		case !seen[*s]:
			seen[*s] = true
			out = append(out, *s)
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
	c.ContextualHeaders = ch.ContextualHeaders
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
