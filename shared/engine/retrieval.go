package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// Retrieval limits and names.
const (
	// MaxPassages bounds the passages one search gives the model.
	MaxPassages = 20
	// MaxRetrievalBudget bounds, in estimated tokens, the passage text one search gives the model.
	MaxRetrievalBudget = 6000
	// SearchToolName is the tool a react_agent with knowledge bases is given.
	SearchToolName = domain.KnowledgeSearchTool
	// maxEventQuery bounds the query a retrieval event quotes, in characters.
	maxEventQuery = 500
)

// The knowledge base context an llm_agent's system prompt ends with (docs/knowledge.md: "Agents that answer
// from knowledge bases"). The passages follow contextIntro, each as "[n] <file> (knowledge base
// "<name>", chunk <i>)" and its text, separated by blank lines.
const (
	contextHeading = "# Knowledge base context"
	contextIntro   = "The passages below were retrieved from the knowledge bases for the user's latest message. " +
		"Answer from them where they are relevant and cite each passage you use by its number in square brackets, like [1]. " +
		"If they do not contain the answer, say so instead of guessing."
	contextNone = "The knowledge bases were searched for the user's latest message and no passage was found. " +
		"If the answer depends on them, say that you could not find it."
	contextFailed = "The knowledge bases were searched for the user's latest message and the search failed. " +
		"If the answer depends on them, say that you could not consult them."
	// searchFailed is what clients and the model are told of a search that failed internally:
	// the error itself may name hosts.
	searchFailed = "knowledge base search failed; the agent answered without it"
	// RetrievalDenied is what clients and the model are told when the run's caller may not read
	// knowledge bases: nothing is searched.
	RetrievalDenied = "knowledge base retrieval skipped: this API key lacks the knowledge:read scope"
	// MCPDenied is the error event of a node whose MCP tools were not bound for a caller
	// without agents:read.
	MCPDenied     = "MCP tools not bound: this API key lacks the agents:read scope"
	contextDenied = "The knowledge bases were not searched: the caller may not read them. " +
		"If the answer depends on them, say that you could not consult them."
)

// RetrievalBudget returns how many estimated tokens of passage text one search gives a
// provider's model: an eighth of its context window, at most MaxRetrievalBudget.
func RetrievalBudget(provider, model string) int {
	return min(MaxRetrievalBudget, ContextWindow(provider, model)/8)
}

// enabledKnowledgeBases returns the node's knowledge_bases entries that are enabled.
func enabledKnowledgeBases(n *Node) []domain.KnowledgeBaseRef {
	var out []domain.KnowledgeBaseRef
	for _, r := range n.KnowledgeBases {
		if r.Enabled {
			out = append(out, r)
		}
	}
	return out
}

// retrievalQuery is what an llm_agent searches for: the text parts of the new message joined
// by newlines and trimmed; "" when it has no text. (The retriever cuts a query to
// domain.MaxQueryLength characters.)
func retrievalQuery(input []domain.Part) string {
	var texts []string
	for _, p := range input {
		if p.Type == domain.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.TrimSpace(strings.Join(texts, "\n"))
}

// clipChars cuts s to n characters, marking a cut with "…".
func clipChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// selectPassages takes hits in rank order, at most MaxPassages of them, while their text fits
// budget estimated tokens: the first always goes in (its text cut to the budget when alone too
// large) and the first that does not fit ends the selection.
func selectPassages(hits []domain.Hit, budget int) []domain.Hit {
	var out []domain.Hit
	used := 0
	for _, h := range hits {
		if len(out) == MaxPassages {
			break
		}
		t := EstimateTokens(h.Text)
		if used+t > budget {
			if len(out) > 0 {
				break
			}
			h.Text = domain.Clip(h.Text, max(budget*4-len("…"), 0))
			t = EstimateTokens(h.Text)
		}
		used += t
		out = append(out, h)
	}
	return out
}

// passage is one retrieved chunk as the model was given it, under its number.
type passage struct {
	index  int
	hit    domain.Hit // Text as given (cut to the budget)
	kbName string     // the entry's name in the node's configuration
}

// retrieval is the retrieval state of one node run: its knowledge bases and the passages
// numbered so far. A react_agent's tool calls may run concurrently, hence the lock.
type retrieval struct {
	refs   []domain.KnowledgeBaseRef // enabled entries, in configuration order
	budget int
	denied bool // the caller may not read knowledge bases: no search runs

	mu       sync.Mutex
	searched bool           // a search ran, so the message gets citations (maybe none)
	byKey    map[string]int // hit → its number
	passages []passage      // passages[i] has number i+1
}

func newRetrieval(refs []domain.KnowledgeBaseRef, budget int) *retrieval {
	return &retrieval{refs: refs, budget: budget, byKey: map[string]int{}}
}

// hitKey identifies a chunk across searches.
func hitKey(h domain.Hit) string {
	if h.ID != "" {
		return h.ID
	}
	return fmt.Sprintf("%s/%s/%d", h.KBID, h.FileID, h.ChunkIndex)
}

// number selects the passages of one search's hits and numbers them: a chunk numbered by an
// earlier search of the run keeps its number, a new one gets the next.
func (r *retrieval) number(hits []domain.Hit) []passage {
	sel := selectPassages(hits, r.budget)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.searched = true
	out := make([]passage, 0, len(sel))
	for _, h := range sel {
		k := hitKey(h)
		if i, ok := r.byKey[k]; ok {
			out = append(out, r.passages[i-1])
			continue
		}
		p := passage{index: len(r.passages) + 1, hit: h, kbName: r.kbName(h.KBID)}
		r.passages = append(r.passages, p)
		r.byKey[k] = p.index
		out = append(out, p)
	}
	return out
}

// markSearched records a search that gave no passages (it failed).
func (r *retrieval) markSearched() {
	r.mu.Lock()
	r.searched = true
	r.mu.Unlock()
}

func (r *retrieval) kbName(id string) string {
	for _, ref := range r.refs {
		if ref.ID == id {
			return ref.Name
		}
	}
	return id
}

// citeRE matches a citation in an answer: "[2]", "[1, 3]" ("[1][3]" is two matches).
var citeRE = regexp.MustCompile(`\[(\d+(?:\s*,\s*\d+)*)\]`)

// citations are the citations of the node's message after answer: the passages numbered in the
// run, only those answer refers to by number when it refers to any, at most domain.MaxCitations.
// nil when no search ran, empty when the searches gave nothing.
func (r *retrieval) citations(answer string) []domain.Citation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.searched {
		return nil
	}
	cited := map[int]bool{}
	for _, m := range citeRE.FindAllStringSubmatch(answer, -1) {
		for _, f := range strings.Split(m[1], ",") {
			if i, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && i >= 1 && i <= len(r.passages) {
				cited[i] = true
			}
		}
	}
	out := []domain.Citation{}
	for _, p := range r.passages {
		if len(out) == domain.MaxCitations {
			break
		}
		if len(cited) > 0 && !cited[p.index] {
			continue
		}
		out = append(out, domain.Citation{Index: p.index, KnowledgeBaseID: p.hit.KBID, FileID: p.hit.FileID,
			FileName: p.hit.FileName, ChunkIndex: p.hit.ChunkIndex, Score: p.hit.Score,
			Text: clipChars(p.hit.Text, domain.CitationTextLength)})
	}
	return out
}

// denyRetrieval stops the node's searches before any runs, for a caller without
// knowledge:read, and says so in one error event: an llm_agent's prompt then says the knowledge
// bases were not searched and knowledge_base_search answers every call with RetrievalDenied.
// No search ran, so the node's message has no citations.
func (c *call) denyRetrieval() {
	c.retr.denied = true
	c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{
		"message": RetrievalDenied, "knowledge_bases": domain.KnowledgeBaseIDs(c.retr.refs),
	}})
}

// search runs one search of refs for the node, records it as a retrieval event (with extra
// fields) and each knowledge base left out as an error event, and numbers the passages found.
// A failed search gives no passages and a message safe for clients and the model; reporting it is
// the caller's.
func (c *call) search(ctx context.Context, query string, refs []domain.KnowledgeBaseRef, topK int, extra map[string]any) ([]passage, string) {
	if c.retr.denied {
		return nil, RetrievalDenied
	}
	start := time.Now()
	ids := domain.KnowledgeBaseIDs(refs)
	ctx, span := c.startRetrieval(ctx, query, ids, topK)
	res, err := c.e.retriever.SearchKnowledge(ctx, c.company, query, refs, topK)
	if err == nil && res == nil {
		err = errors.New("retriever returned no result")
	}
	var ps []passage
	if err == nil {
		ps = c.retr.number(res.Hits)
	} else {
		c.retr.markSearched()
	}
	c.endRetrieval(span, ps, err)
	data := map[string]any{"query": clipChars(query, maxEventQuery), "knowledge_bases": ids, "hits": len(ps),
		"duration_ms": time.Since(start).Milliseconds(), "chunks": chunkData(ps)}
	if err == nil && res.EmbeddingTokens > 0 {
		data["embedding_tokens"] = res.EmbeddingTokens // counted into the execute's usage
	}
	for k, v := range extra {
		data[k] = v
	}
	c.em.send(Event{Type: EventRetrieval, Node: c.node.Name, Data: data})
	if err != nil {
		return nil, safeSearchMessage(err)
	}
	for _, p := range res.Problems {
		c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{
			"message": p.Message, "knowledge_base_id": p.KnowledgeBaseID,
		}})
	}
	return ps, ""
}

// safeSearchMessage is what a failed search tells clients: a domain error's own message when it
// is the client's concern, else searchFailed.
func safeSearchMessage(err error) string {
	var de *domain.Error
	switch domain.KindOf(err) {
	case domain.KindInvalid, domain.KindNotFound, domain.KindConflict, domain.KindPermission:
		if errors.As(err, &de) && de.Message != "" {
			return de.Message
		}
	}
	return searchFailed
}

// retrieveForPrompt searches an llm_agent's knowledge bases for query and appends the knowledge
// base context to its system prompt. Retrieval never fails the run: a failed search is an error
// event and the model is told it failed.
func (c *call) retrieveForPrompt(ctx context.Context, query string) {
	if c.retr.denied {
		c.appendContext(contextDenied)
		return
	}
	ps, failed := c.search(ctx, query, c.retr.refs, 0, map[string]any{"source": "prompt"})
	if failed != "" && ctx.Err() == nil { // a cancelled run is reported as such, not as a failed search
		ids := domain.KnowledgeBaseIDs(c.retr.refs)
		c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{"message": failed, "knowledge_bases": ids}})
	}
	var b strings.Builder
	b.WriteString(contextHeading + "\n")
	switch {
	case failed != "":
		b.WriteString(contextFailed)
	case len(ps) == 0:
		b.WriteString(contextNone)
	default:
		b.WriteString(contextIntro)
		for _, p := range ps {
			fmt.Fprintf(&b, "\n\n[%d] %s (knowledge base %q, chunk %d)\n%s", p.index, p.hit.FileName, p.kbName, p.hit.ChunkIndex, p.hit.Text)
		}
	}
	c.appendContext(b.String())
}

// appendContext ends the system prompt with the knowledge base context.
func (c *call) appendContext(text string) {
	if !strings.HasPrefix(text, contextHeading) {
		text = contextHeading + "\n" + text
	}
	if c.req.System != "" {
		c.req.System += "\n\n"
	}
	c.req.System += text
}

// toolUseIDKey carries the id of the tool use a tool call answers (for the retrieval event).
type toolUseIDKey struct{}

// searchTool is knowledge_base_search, the tool a react_agent with knowledge bases is given:
// the model decides when to search and what for.
type searchTool struct{ c *call }

// Spec implements domain.Tool: the description names the knowledge bases.
func (t *searchTool) Spec() domain.ToolSpec {
	refs := t.c.retr.refs
	var kbs []string
	names := make([]any, len(refs))
	for i, r := range refs {
		names[i] = r.Name
		d := fmt.Sprintf("%q", r.Name)
		if r.Description != "" {
			d += ": " + r.Description
		}
		kbs = append(kbs, "- "+d)
	}
	return domain.ToolSpec{
		Name: SearchToolName,
		Description: "Search this agent's knowledge bases for passages relevant to a query. " +
			"Returns numbered passages with their sources; cite a passage you use by its number in square brackets, like [1]. " +
			"The knowledge bases:\n" + strings.Join(kbs, "\n"),
		Schema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "The text to search for."},
				"top_k": map[string]any{"type": "integer", "minimum": 1, "maximum": domain.MaxRetrievalTopK,
					"description": "How many passages to find in each knowledge base (default: each knowledge base's top_k)."},
				"knowledge_base": map[string]any{"type": "string", "enum": names,
					"description": "Search only this knowledge base (its name); all of them when omitted."},
			},
			"required": []any{"query"},
		},
	}
}

// Call implements domain.Tool: bad arguments and a failed search are errors (error results the
// model reads), a search that found nothing is a result saying so.
func (t *searchTool) Call(ctx context.Context, input map[string]any) (string, error) {
	query, refs, topK, err := t.args(input)
	if err != nil {
		return "", err
	}
	extra := map[string]any{"source": "tool"}
	if id, ok := ctx.Value(toolUseIDKey{}).(string); ok {
		extra["tool_use_id"] = id
	}
	ps, failed := t.c.search(ctx, query, refs, topK, extra)
	if failed != "" {
		return "", errors.New(failed)
	}
	q := clipChars(query, maxEventQuery)
	if len(ps) == 0 {
		return fmt.Sprintf("No passages found in the knowledge bases for %q.", q), nil
	}
	var b strings.Builder
	noun := "passages"
	if len(ps) == 1 {
		noun = "passage"
	}
	fmt.Fprintf(&b, "%d %s from the knowledge bases for %q. Cite a passage you use by its number in square brackets, like [1].", len(ps), noun, q)
	for _, p := range ps {
		fmt.Fprintf(&b, "\n\n[%d] %s (knowledge base %q, chunk %d, score %.3f)\n%s", p.index, p.hit.FileName, p.kbName, p.hit.ChunkIndex, p.hit.Score, p.hit.Text)
	}
	return b.String(), nil
}

// args checks the tool's arguments: query (required), top_k (1..MaxRetrievalTopK) and
// knowledge_base (an entry's name or id).
func (t *searchTool) args(input map[string]any) (string, []domain.KnowledgeBaseRef, int, error) {
	refs := t.c.retr.refs
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = fmt.Sprintf("%q", r.Name)
	}
	list := strings.Join(names, ", ")
	q, ok := input["query"].(string)
	q = strings.TrimSpace(q)
	if !ok || q == "" {
		return "", nil, 0, fmt.Errorf("%s: query is required: a non-empty string, the text to search for in the knowledge bases %s", SearchToolName, list)
	}
	topK := 0
	if x, ok := input["top_k"]; ok && x != nil {
		f, isNum := domain.Number(x)
		if !isNum || f != float64(int(f)) || f < 1 || f > domain.MaxRetrievalTopK {
			return "", nil, 0, fmt.Errorf("%s: top_k must be an integer from 1 to %d", SearchToolName, domain.MaxRetrievalTopK)
		}
		topK = int(f)
	}
	if x, ok := input["knowledge_base"]; ok && x != nil {
		s, _ := x.(string)
		i := slices.IndexFunc(refs, func(r domain.KnowledgeBaseRef) bool { return s != "" && (r.Name == s || r.ID == s) })
		if i < 0 {
			return "", nil, 0, fmt.Errorf("%s: knowledge_base %s is not one of this agent's knowledge bases; use one of %s, or omit it to search all",
				SearchToolName, quoteArg(x), list)
		}
		refs = refs[i : i+1]
	}
	return q, refs, topK, nil
}

// quoteArg quotes a tool argument of any type for an error message.
func quoteArg(x any) string {
	if s, ok := x.(string); ok {
		return strconv.Quote(domain.Clip(s, 60))
	}
	return domain.Clip(formatValue(x), 60)
}
