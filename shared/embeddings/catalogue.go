package embeddings

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The providers of embedding_config.provider.
const (
	ProviderLocal   = "local"
	ProviderBedrock = "bedrock"
	ProviderOpenAI  = "openai"
)

// Model IDs of the catalogue.
const (
	ModelUSELite     = "use-lite"
	ModelUSEGlove    = "use-lite-glove"
	ModelTitanV2     = "amazon.titan-embed-text-v2:0"
	ModelTitanV1     = "amazon.titan-embed-text-v1"
	ModelOpenAISmall = "text-embedding-3-small"
	ModelOpenAILarge = "text-embedding-3-large"
	ModelOpenAIAda   = "text-embedding-ada-002"
)

// Limits of models the catalogue does not know (any OpenAI-compatible server's own models).
const (
	// maxIndexDimensions is the largest knn_vector dimension OpenSearch accepts.
	maxIndexDimensions = 16000
	// unknownMaxTokens is the input limit assumed for a model we know nothing about: the
	// smallest common one (BERT-family models read 512 tokens), so that chunks are split rather
	// than silently cut by a server that truncates.
	unknownMaxTokens = 512
)

// model is what the catalogue knows of one embedding model.
type model struct {
	id   string
	slug string // for index names
	// dims lists the dimensions offered; with variable set, any value from 1 to dims[0]
	// (the model's native size, its default) is (Matryoshka models: OpenAI's text-embedding-3-*).
	dims        []int
	defaultDims int
	variable    bool
	maxTokens   int
}

func (m model) offers(d int) bool {
	if m.variable {
		return d >= 1 && d <= m.defaultDims
	}
	return slices.Contains(m.dims, d)
}

func (m model) offered() string {
	if m.variable {
		return fmt.Sprintf("1 to %d", m.defaultDims)
	}
	return joinInts(m.dims)
}

// provider is one embedding_config.provider and the models it offers; the first is its default.
type provider struct {
	name   string
	models []model
	// anyModel accepts model names the catalogue does not know (OpenAI-compatible servers).
	anyModel bool
}

func (p provider) model(id string) (model, bool) {
	for _, m := range p.models {
		if m.id == id {
			return m, true
		}
	}
	return model{}, false
}

func (p provider) modelIDs() string {
	ids := make([]string, len(p.models))
	for i, m := range p.models {
		ids[i] = m.id
	}
	return strings.Join(ids, ", ")
}

// catalogue lists every provider this service has, whether or not a deployment offers it.
var catalogue = []provider{
	{name: ProviderLocal, models: []model{
		// The default: use-lite's 512 dimensions joined with 100 of averaged GloVe word vectors
		// (shared/glove), one vector whose cosine is 0.3 use-lite's + 0.7 GloVe's; it reads 128
		// tokens as use-lite does (shared/embeddings/local).
		{id: ModelUSEGlove, slug: "use-lite-glove", dims: []int{612}, defaultDims: 612, maxTokens: 128},
		// Universal Sentence Encoder lite (shared/localembed): 512 dimensions, 128 tokens.
		{id: ModelUSELite, slug: "use-lite", dims: []int{512}, defaultDims: 512, maxTokens: 128},
	}},
	{name: ProviderBedrock, models: []model{
		// Titan Text Embeddings V2: 8,192 tokens or 50,000 characters, whichever comes first.
		{id: ModelTitanV2, slug: "titan-embed-text-v2", dims: []int{256, 512, 1024}, defaultDims: 1024, maxTokens: 8192},
		{id: ModelTitanV1, slug: "titan-embed-text-v1", dims: []int{1536}, defaultDims: 1536, maxTokens: 8192},
	}},
	{name: ProviderOpenAI, anyModel: true, models: []model{
		{id: ModelOpenAISmall, slug: "openai-text-embedding-3-small", defaultDims: 1536, variable: true, maxTokens: 8191},
		{id: ModelOpenAILarge, slug: "openai-text-embedding-3-large", defaultDims: 3072, variable: true, maxTokens: 8191},
		{id: ModelOpenAIAda, slug: "openai-text-embedding-ada-002", dims: []int{1536}, defaultDims: 1536, maxTokens: 8191},
	}},
}

// foreign are provider names Atthene clients send that this service does not offer.
var foreign = map[string]bool{"azure_openai": true, "azure": true, "mistral": true, "telekom_otc": true}

// unknownModel describes a model name an OpenAI-compatible server may know and we do not: the
// caller names its dimensions, and the first response checks them.
func unknownModel(id string, dims int) model {
	return model{id: id, slug: "openai-" + slug(id), dims: []int{dims}, defaultDims: dims, maxTokens: unknownMaxTokens}
}

// slug turns a model name into a part of an OpenSearch index name: lowercase letters, digits,
// '.', '_' and '-'. A name that had to change gets a short hash of the original, so that two
// names never share a slug because of the characters they lost.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	s = strings.Trim(s, "-._")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-._")
	}
	if s != name || s == "" {
		sum := sha256.Sum256([]byte(name))
		s = strings.TrimPrefix(s+"-"+hex.EncodeToString(sum[:4]), "-")
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
