package domain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Reranker orders passages by their relevance to a query with a cross-encoder model (Bedrock's
// Rerank API, shared/rerank): the port of the knowledge feature, declared here because the
// feature and the adapter may each import domain and neither the other.
type Reranker interface {
	// Rerank scores req.Texts against req.Query and returns at most req.TopN of them, best
	// first: each by its index in req.Texts, with the model's relevance score.
	Rerank(ctx context.Context, req RerankRequest) ([]Relevance, error)
	// Models are the models a request may name, the deployment's default first.
	Models() []string
}

// RerankRequest is one reranking: Model "" is the reranker's default.
type RerankRequest struct {
	Model string
	Query string
	Texts []string
	TopN  int
}

// Relevance is one reranked passage: its index in the request's texts and its score (higher is
// more relevant; Bedrock's models give 0..1).
type Relevance struct {
	Index int
	Score float64
}

// Rerank limits.
const (
	// MaxRerankCandidates bounds rerank.candidates: Bedrock bills a Rerank request per 100
	// documents, so more would cost a second query's price for each search.
	MaxRerankCandidates = 100
	// MinDefaultRerankCandidates is the fewest first-stage hits a rerank reads by default.
	MinDefaultRerankCandidates = 20
	// MaxRerankModelLength bounds a rerank model's name.
	MaxRerankModelLength = 200
)

// Rerank is a retrieval's rerank option: the first stage finds Candidates hits (0: the default,
// RerankCandidates) and the reranker's model (Model "" the deployment's default) orders them;
// the top_k best by its relevance score are returned, each with that score.
type Rerank struct {
	Model      string
	Candidates int
	// Field is where the option was given (rerank, or enable_rerank for Atthene's form), and
	// ModelField where its model was (rerank.model, rerank_model), for errors about them.
	Field, ModelField string
}

// RerankCandidates is how many first-stage hits a rerank reads for topK: Candidates when set (at
// least topK), else 4·topK, at least MinDefaultRerankCandidates and at most MaxRerankCandidates.
func (r *Rerank) RerankCandidates(topK int) int {
	if r.Candidates > 0 {
		return max(r.Candidates, topK)
	}
	return max(min(max(4*topK, MinDefaultRerankCandidates), MaxRerankCandidates), topK)
}

// Same reports whether two rerank options (nil: none) rerank alike.
func (r *Rerank) Same(o *Rerank) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.Model == o.Model && r.Candidates == o.Candidates
}

// rerankFields are the rerank keys of retrieval options: ours, then Atthene's pair (accepted
// beside it, not listed in messages).
var rerankFields = []string{"rerank", "enable_rerank", "rerank_model"}

// JSONValue is a request field that takes any JSON value as it was sent (numbers as
// json.Number), for the feature to check with the words retrieval_config's keys have.
type JSONValue struct{ V any }

// UnmarshalJSON keeps the value.
func (j *JSONValue) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(&j.V)
}

// ParseRerank checks and reads the rerank keys of retrieval options m (rerank, or Atthene's
// enable_rerank and rerank_model): nil when reranking is off. Errors are named under path.
func ParseRerank(m map[string]any, path string) (*Rerank, []FieldError) {
	v := &validator{}
	v.rerank(m, path)
	if len(v.errs) > 0 {
		return nil, v.errs
	}
	return readRerank(m, path), nil
}

// rerank checks the rerank keys of m: rerank true, false or {model, candidates}; or
// enable_rerank (a boolean) with rerank_model (a model name), not both forms.
func (v *validator) rerank(m map[string]any, path string) {
	r, hasR := m["rerank"]
	hasR = hasR && r != nil
	if hasR {
		for _, alias := range rerankFields[1:] {
			if x, ok := m[alias]; ok && x != nil {
				v.add(join(path, alias), "give rerank or Atthene's enable_rerank and rerank_model, not both")
			}
		}
	}
	switch x := r.(type) {
	case nil, bool:
	case map[string]any:
		p := join(path, "rerank")
		for _, k := range sortedKeys(x) {
			if k != "model" && k != "candidates" {
				v.add(p+"."+k, "unknown field; rerank has model and candidates")
			}
		}
		if s, ok := x["model"]; ok && s != nil {
			v.rerankModel(s, p+".model")
		}
		if c, ok := x["candidates"]; ok && c != nil {
			if f, isNum := Number(c); !isNum || f != float64(int(f)) || f < 1 || f > MaxRerankCandidates {
				v.add(p+".candidates", "must be an integer from 1 to %d (first-stage hits the reranker reads; at least top_k are)", MaxRerankCandidates)
			}
		}
	default:
		v.add(join(path, "rerank"), "must be true, false or an object with model and candidates, not %s", JSONType(r))
	}
	if e, ok := m["enable_rerank"]; ok && e != nil {
		v.boolean(e, join(path, "enable_rerank"))
	}
	if s, ok := m["rerank_model"]; ok && s != nil {
		v.rerankModel(s, join(path, "rerank_model"))
	}
}

// rerankModel checks a rerank model's name (which models the deployment has is the feature's
// to check).
func (v *validator) rerankModel(x any, path string) {
	if s, ok := v.str(x, path, true); ok && len(s) > MaxRerankModelLength {
		v.add(path, "must be at most %d characters", MaxRerankModelLength)
	}
}

// readRerank reads the rerank option rerank accepted: nil when off (rerank false or absent,
// enable_rerank not true; rerank_model alone does not turn reranking on, as in Atthene).
func readRerank(m map[string]any, path string) *Rerank {
	switch r := m["rerank"].(type) {
	case bool:
		if r {
			return &Rerank{Field: join(path, "rerank"), ModelField: join(path, "rerank.model")}
		}
		return nil
	case map[string]any:
		out := &Rerank{Field: join(path, "rerank"), ModelField: join(path, "rerank.model")}
		out.Model, _ = r["model"].(string)
		if f, ok := Number(r["candidates"]); ok {
			out.Candidates = int(f)
		}
		return out
	}
	if on, _ := m["enable_rerank"].(bool); on {
		out := &Rerank{Field: join(path, "enable_rerank"), ModelField: join(path, "rerank_model")}
		out.Model, _ = m["rerank_model"].(string)
		return out
	}
	return nil
}

// RerankNotConfigured is the message of a rerank on a deployment without a reranker.
const RerankNotConfigured = "reranking is not available on this deployment: it needs a Bedrock rerank model (set RERANK_MODEL_ID, e.g. cohere.rerank-v3-5:0 or amazon.rerank-v1:0, and give the functions bedrock:Rerank; see docs/knowledge.md)"

// CheckRerankModel checks that a rerank option's model is one of models (nil: no reranker):
// a field error, or nil.
func CheckRerankModel(r *Rerank, models []string) *FieldError {
	switch {
	case r == nil:
		return nil
	case len(models) == 0:
		return &FieldError{Field: r.Field, Message: RerankNotConfigured}
	case r.Model != "" && !slices.Contains(models, r.Model):
		return &FieldError{Field: r.ModelField, Message: fmt.Sprintf("must be one of %s, not %q", strings.Join(models, ", "), Clip(r.Model, 60))}
	}
	return nil
}
