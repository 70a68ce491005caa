// Package bedrockrerank is a stand-in for Amazon Bedrock's Rerank API (bedrock-agent-runtime
// `POST /rerank`), a test double of an outside service: it speaks the wire format
// docs/wire-formats/bedrock-rerank.md records and refuses, as Bedrock does, what the service
// model's constraints refuse (400 ValidationException), so that the adapter (shared/rerank) is
// tested over HTTP with the real SDK client.
//
// It is not a reranker. Its relevance score is the share of the query's distinct words (runs of
// letters and digits, lower-cased) that a source's text holds: 1 when it holds them all, 0 when
// none; equal scores keep the sources' order. That is enough to tell a request's sources apart
// and to check that results are mapped back by index; it says nothing about ranking quality.
//
// What it checks: the method and path, a SigV4 Authorization header (its form only: the
// signature is not verified; none at all is a 403 MissingAuthenticationTokenException), the
// JSON body against the service model (one TEXT query of 1 to 32,000 characters, 1 to 1,000
// INLINE sources, TEXT with a text of 1 to 32,000 characters or JSON with a jsonDocument,
// type BEDROCK_RERANKING_MODEL, a model ARN of the ARN pattern naming a rerank model this
// Region offers, numberOfResults 1 to 1,000, nextToken 1 to 2,048 characters without spaces).
// Faults can be injected (Fail) to test the client's error handling.
package bedrockrerank

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Limits of the service model (botocore bedrock-agent-runtime 2023-07-26 service-2.json).
const (
	MaxSources    = 1000
	MaxTextLength = 32000
	MaxResults    = 1000
)

// regionModels are the rerank models each Region offers (Bedrock user guide, "Supported Regions
// and models for reranking").
var regionModels = map[string][]string{
	"ap-northeast-1": {"amazon.rerank-v1:0", "cohere.rerank-v3-5:0"},
	"ca-central-1":   {"amazon.rerank-v1:0", "cohere.rerank-v3-5:0"},
	"eu-central-1":   {"amazon.rerank-v1:0", "cohere.rerank-v3-5:0"},
	"us-west-2":      {"amazon.rerank-v1:0", "cohere.rerank-v3-5:0"},
	"us-east-1":      {"cohere.rerank-v3-5:0"},
}

// modelARN is the service model's BedrockModelArn pattern.
var modelARN = regexp.MustCompile(`^(arn:aws(-[^:]+)?:(bedrock|sagemaker):[a-z0-9-]{1,20}:([0-9]{12})?:([a-z-]+/)?)?([a-z0-9.-]{1,63}){0,2}(([:][a-z0-9-]{1,63}){0,2})?(/[a-z0-9]{1,12})?$`)

// Fault is an error answer: the HTTP status, the x-amzn-ErrorType and the message.
type Fault struct {
	Status  int
	Type    string
	Message string
}

// Options configure a Server.
type Options struct {
	// Region is the Region the stand-in plays (its models are that Region's); us-west-2 when empty.
	Region string
}

// Server is the stand-in, an http.Handler. It is safe for concurrent use.
type Server struct {
	region string
	mu     sync.Mutex
	faults []Fault
	calls  int
	last   Request
}

// New returns a stand-in for opts.Region.
func New(opts Options) *Server {
	if opts.Region == "" {
		opts.Region = "us-west-2"
	}
	return &Server{region: opts.Region}
}

// Fail makes the next len(faults) well-formed requests answer with these faults, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Calls is how many requests reached POST /rerank, answered or not.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Last is the last well-formed request.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Request is a Rerank request as the service model has it.
type Request struct {
	Queries []struct {
		Type      string        `json:"type"`
		TextQuery *textDocument `json:"textQuery"`
	} `json:"queries"`
	Sources []struct {
		Type                 string `json:"type"`
		InlineDocumentSource *struct {
			Type         string          `json:"type"`
			TextDocument *textDocument   `json:"textDocument"`
			JSONDocument json.RawMessage `json:"jsonDocument"`
		} `json:"inlineDocumentSource"`
	} `json:"sources"`
	RerankingConfiguration *struct {
		Type                          string `json:"type"`
		BedrockRerankingConfiguration *struct {
			NumberOfResults    *int `json:"numberOfResults"`
			ModelConfiguration *struct {
				ModelARN                     *string                    `json:"modelArn"`
				AdditionalModelRequestFields map[string]json.RawMessage `json:"additionalModelRequestFields"`
			} `json:"modelConfiguration"`
		} `json:"bedrockRerankingConfiguration"`
	} `json:"rerankingConfiguration"`
	NextToken *string `json:"nextToken"`
}

type textDocument struct {
	Text *string `json:"text"`
}

// result is one item of the answer's results.
type result struct {
	Index          int     `json:"index"`
	RelevanceScore float64 `json:"relevanceScore"`
}

// ServeHTTP answers POST /rerank.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/rerank" {
		writeFault(w, Fault{http.StatusNotFound, "UnknownOperationException", "Unknown operation"})
		return
	}
	if r.Method != http.MethodPost {
		writeFault(w, Fault{http.StatusMethodNotAllowed, "UnknownOperationException", "Unknown operation"})
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=") ||
		!strings.Contains(auth, "SignedHeaders=") || !strings.Contains(auth, "Signature=") || r.Header.Get("X-Amz-Date") == "" {
		writeFault(w, Fault{http.StatusForbidden, "MissingAuthenticationTokenException", "Missing Authentication Token"})
		return
	}
	var req Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20))
	if err := dec.Decode(&req); err != nil {
		writeFault(w, validation("The request body is not a valid JSON object of the Rerank request: "+err.Error()))
		return
	}
	if msg := s.check(&req); msg != "" {
		writeFault(w, validation(msg))
		return
	}
	s.mu.Lock()
	s.last = req
	var fault *Fault
	if len(s.faults) > 0 {
		fault = &s.faults[0]
		s.faults = s.faults[1:]
	}
	s.mu.Unlock()
	if fault != nil {
		writeFault(w, *fault)
		return
	}
	query := words(*req.Queries[0].TextQuery.Text)
	results := make([]result, len(req.Sources))
	for i, src := range req.Sources {
		doc := src.InlineDocumentSource
		text := string(doc.JSONDocument)
		if doc.TextDocument != nil {
			text = *doc.TextDocument.Text
		}
		results[i] = result{Index: i, RelevanceScore: overlap(query, words(text))}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].RelevanceScore > results[j].RelevanceScore })
	if n := req.RerankingConfiguration.BedrockRerankingConfiguration.NumberOfResults; n != nil && *n < len(results) {
		results = results[:*n]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("stand-in-%d", s.Calls()))
	_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
}

// check validates a request as the service model does; it returns what is wrong in the words of
// AWS's validation errors, or "".
func (s *Server) check(req *Request) string {
	bad := func(value, at, constraint string) string {
		return fmt.Sprintf("1 validation error detected: Value %s at '%s' failed to satisfy constraint: %s", value, at, constraint)
	}
	textOK := func(d *textDocument) bool {
		return d != nil && d.Text != nil && *d.Text != "" && utf8.RuneCountInString(*d.Text) <= MaxTextLength
	}
	switch {
	case len(req.Queries) != 1:
		return bad(fmt.Sprintf("with %d members", len(req.Queries)), "queries", "Member must have length less than or equal to 1 and greater than or equal to 1")
	case req.Queries[0].Type != "TEXT":
		return bad(fmt.Sprintf("'%s'", req.Queries[0].Type), "queries.1.member.type", "Member must satisfy enum value set: [TEXT]")
	case !textOK(req.Queries[0].TextQuery):
		return bad("of the query", "queries.1.member.textQuery.text", "Member must have length less than or equal to 32000 and greater than or equal to 1")
	case len(req.Sources) < 1 || len(req.Sources) > MaxSources:
		return bad(fmt.Sprintf("with %d members", len(req.Sources)), "sources", "Member must have length less than or equal to 1000 and greater than or equal to 1")
	case req.NextToken != nil && (*req.NextToken == "" || len(*req.NextToken) > 2048 || strings.ContainsFunc(*req.NextToken, unicode.IsSpace)):
		return bad("of nextToken", "nextToken", "Member must have length between 1 and 2048 and satisfy regular expression pattern: \\S*")
	}
	for i, src := range req.Sources {
		at := fmt.Sprintf("sources.%d.member", i+1)
		doc := src.InlineDocumentSource
		switch {
		case src.Type != "INLINE":
			return bad(fmt.Sprintf("'%s'", src.Type), at+".type", "Member must satisfy enum value set: [INLINE]")
		case doc == nil:
			return bad("null", at+".inlineDocumentSource", "Member must not be null")
		case doc.Type == "TEXT" && !textOK(doc.TextDocument):
			return bad("of the source", at+".inlineDocumentSource.textDocument.text", "Member must have length less than or equal to 32000 and greater than or equal to 1")
		case doc.Type == "JSON" && (len(doc.JSONDocument) == 0 || string(doc.JSONDocument) == "null"):
			return bad("null", at+".inlineDocumentSource.jsonDocument", "Member must not be null for a JSON document")
		case doc.Type != "TEXT" && doc.Type != "JSON":
			return bad(fmt.Sprintf("'%s'", doc.Type), at+".inlineDocumentSource.type", "Member must satisfy enum value set: [TEXT, JSON]")
		}
	}
	rc := req.RerankingConfiguration
	switch {
	case rc == nil:
		return bad("null", "rerankingConfiguration", "Member must not be null")
	case rc.Type != "BEDROCK_RERANKING_MODEL":
		return bad(fmt.Sprintf("'%s'", rc.Type), "rerankingConfiguration.type", "Member must satisfy enum value set: [BEDROCK_RERANKING_MODEL]")
	case rc.BedrockRerankingConfiguration == nil:
		return bad("null", "rerankingConfiguration.bedrockRerankingConfiguration", "Member must not be null")
	}
	brc := rc.BedrockRerankingConfiguration
	if n := brc.NumberOfResults; n != nil && (*n < 1 || *n > MaxResults) {
		return bad(fmt.Sprintf("'%d'", *n), "rerankingConfiguration.bedrockRerankingConfiguration.numberOfResults", "Member must have value less than or equal to 1000 and greater than or equal to 1")
	}
	mc := brc.ModelConfiguration
	if mc == nil || mc.ModelARN == nil {
		return bad("null", "rerankingConfiguration.bedrockRerankingConfiguration.modelConfiguration.modelArn", "Member must not be null")
	}
	arn := *mc.ModelARN
	if arn == "" || len(arn) > 2048 || !modelARN.MatchString(arn) {
		return bad(fmt.Sprintf("'%s'", arn), "rerankingConfiguration.bedrockRerankingConfiguration.modelConfiguration.modelArn", "Member must satisfy regular expression pattern")
	}
	prefix := "arn:aws:bedrock:" + s.region + "::foundation-model/"
	id, ok := strings.CutPrefix(arn, prefix)
	if !ok {
		return "The provided model identifier is invalid."
	}
	for _, m := range regionModels[s.region] {
		if m == id {
			return ""
		}
	}
	return "The provided model identifier is invalid."
}

// validation is a 400 ValidationException.
func validation(msg string) Fault {
	return Fault{http.StatusBadRequest, "ValidationException", msg}
}

// writeFault answers with an error as the rest-json protocol has it: the type in the
// x-amzn-ErrorType header, {"message": …} in the body.
func writeFault(w http.ResponseWriter, f Fault) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", f.Type+":http://internal.amazon.com/coral/com.amazon.bedrock.agent.runtime/")
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": f.Message})
}

// words are the distinct lower-cased runs of letters and digits of s.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

// overlap is the share of query's words that doc holds.
func overlap(query, doc map[string]bool) float64 {
	if len(query) == 0 {
		return 0
	}
	n := 0
	for w := range query {
		if doc[w] {
			n++
		}
	}
	return float64(n) / float64(len(query))
}
