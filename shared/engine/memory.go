package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// Memory is the memory of the end users sessions serve (docs/memory.md), as the engine reads
// and writes it (the memory feature implements it). It trusts the scope it is given: the engine
// checks the caller's scopes.
type Memory interface {
	// Blocks reads every block of a scope (one Query).
	Blocks(ctx context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error)
	// Search finds the records of a scope nearest to query, best first, at most topK, and the
	// tokens embedding the query took (one k-NN search).
	Search(ctx context.Context, sc domain.MemoryScope, query string, topK int) ([]domain.MemoryHit, int, error)
	Save(ctx context.Context, sc domain.MemoryScope, text string, src domain.MemorySource) (*domain.MemoryRecord, error)
	// EditBlock rewrites (or creates) the block spec names with edit; a value over the block's
	// limit is an invalid-request error whose message tells to condense.
	EditBlock(ctx context.Context, sc domain.MemoryScope, spec domain.MemoryBlockSpec, src domain.MemorySource,
		edit func(old string) (string, error)) (*domain.MemoryBlock, error)
}

// MemoryRun is the memory of one run: whose (Scope) and how (Config), and the session and
// execution its writes name as their source.
type MemoryRun struct {
	Scope                  domain.MemoryScope
	Config                 domain.MemoryConfig
	SessionID, ExecutionID string
}

// Memory events and messages.
const (
	// EventMemoryRecall is what a run recalled: agent_id (null for the shared memory), blocks
	// (labels), records ({id, score, text}), query, duration_ms, source ("prompt", or "tool"
	// with tool_use_id for memory_search) and, when the query was embedded, embedding_tokens.
	EventMemoryRecall = "memory_recall"
	// EventMemoryWrite is one write of a memory tool: op (save, replace or append), record_id
	// or block_id and label, tool_use_id.
	EventMemoryWrite = "memory_write"
	// EventMemoryExtract is what became of the extraction after a turn (the sessions feature
	// records it): queued true, or queued false and the reason.
	EventMemoryExtract = "memory_extract"
	// MemoryRecallFailed is what clients are told of a recall that failed: the run goes on.
	MemoryRecallFailed = "memory recall failed; the agent answered without it"
	// MemoryReadDenied is the error event of a run whose caller lacks memory:read: nothing is
	// recalled and memory_search answers it.
	MemoryReadDenied = "memory not read: this API key lacks the memory:read scope"
	// MemoryWriteDenied answers the memory write tools of a caller without memory:write.
	MemoryWriteDenied = "memory not written: this API key lacks the memory:write scope"
	// MaxMemoryBudget bounds, in estimated tokens, what the memory section adds to a prompt.
	MaxMemoryBudget = 8000
	// memoryWriteFailed answers a write that failed internally (the error may name hosts).
	memoryWriteFailed  = "memory write failed; nothing was written"
	memorySearchFailed = "memory search failed"
	// maxRecallEventText bounds each recalled record's text in a memory_recall event.
	maxRecallEventText = 200
)

// The memory section a system prompt ends with.
const (
	memoryHeading = "# Memory"
	memoryIntro   = "What you remember of the user you are serving, from earlier conversations. " +
		"Use it where it helps; it may be out of date, and the user's latest message wins over it."
	memoryToolsIntro = "Keep it current: memory_replace and memory_append edit a block when you learn something " +
		"lasting about the user, memory_save saves one fact, memory_search searches the saved facts."
	memoryUnread = "Your memory of the user could not be read this turn."
	// memoryOmitted says how many blocks did not fit the prompt.
	memoryOmitted = "(%d more blocks left out: memory is over its room in the prompt)"
)

// MemoryBudget returns how many estimated tokens the memory section gives a provider's model:
// an eighth of its context window, at most MaxMemoryBudget.
func MemoryBudget(provider, model string) int {
	return min(MaxMemoryBudget, ContextWindow(provider, model)/8)
}

// WithMemory returns a copy of e whose runs with a MemoryRun (Run.Memory) recall the user's
// memory into their prompts and give react agents the memory tools.
func (e *Engine) WithMemory(m Memory) *Engine {
	cp := *e
	cp.memory = m
	return &cp
}

// memoryState is one run's memory: the recall its nodes share (loaded once, by the first node
// that runs) and the blocks as written since.
type memoryState struct {
	m              Memory
	run            MemoryRun
	canRead, write bool

	once     sync.Once
	mu       sync.Mutex
	blocks   []*domain.MemoryBlock // stored, as read and as written since
	hits     []domain.MemoryHit
	failed   bool
	recalled bool // the recall ran (and told of itself)
}

// newMemoryState is the memory of a run, nil when it has none.
func (e *Engine) newMemoryState(run Run) *memoryState {
	if e.memory == nil || run.Memory == nil || !run.Memory.Config.Enabled || run.Memory.Scope.UserID == "" {
		return nil
	}
	return &memoryState{m: e.memory, run: *run.Memory,
		canRead: run.Principal.Can(domain.ScopeMemoryRead), write: run.Principal.Can(domain.ScopeMemoryWrite)}
}

func (s *memoryState) agentID() any {
	if s.run.Scope.AgentID == "" {
		return nil
	}
	return s.run.Scope.AgentID
}

// recall loads the blocks and the records nearest query once per run; the node that loads it
// (the first to run) tells of it: a memory_recall event, or an error event when the caller may
// not read memory or the recall failed. Later nodes wait for it and use what it loaded.
func (s *memoryState) recall(ctx context.Context, c *call, query string) {
	s.once.Do(func() {
		if !s.canRead {
			s.failed = true
			c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{"message": MemoryReadDenied}})
			return
		}
		start := time.Now()
		blocks, err := s.m.Blocks(ctx, s.run.Scope)
		var hits []domain.MemoryHit
		tokens := 0
		if err == nil && s.run.Config.RecallTopK > 0 && query != "" {
			hits, tokens, err = s.m.Search(ctx, s.run.Scope, query, s.run.Config.RecallTopK)
		}
		if err != nil {
			s.failed = true
			if ctx.Err() == nil {
				c.em.send(Event{Type: EventError, Node: c.node.Name, Data: map[string]any{"message": MemoryRecallFailed}})
			}
			return
		}
		if len(hits) > s.run.Config.RecallTopK {
			hits = hits[:s.run.Config.RecallTopK]
		}
		s.mu.Lock()
		s.blocks, s.hits, s.recalled = blocks, hits, true
		s.mu.Unlock()
		labels := make([]string, len(blocks))
		for i, b := range blocks {
			labels[i] = b.Label
		}
		data := map[string]any{"agent_id": s.agentID(), "blocks": labels, "records": recordData(hits),
			"query": clipChars(query, maxEventQuery), "duration_ms": time.Since(start).Milliseconds(), "source": "prompt"}
		if tokens > 0 {
			data["embedding_tokens"] = tokens
		}
		c.em.send(Event{Type: EventMemoryRecall, Node: c.node.Name, Data: data})
	})
}

func recordData(hits []domain.MemoryHit) []any {
	out := make([]any, len(hits))
	for i, h := range hits {
		out[i] = map[string]any{"id": h.Record.ID, "score": h.Score, "text": clipChars(h.Record.Text, maxRecallEventText)}
	}
	return out
}

// section is the memory section of a node's system prompt within budget estimated tokens:
// the declared blocks in configuration order (empty ones too), then the other stored blocks by
// label, each with its description and how full it is; then the recalled records, best first,
// while they fit what the blocks left of the budget.
func (s *memoryState) section(react bool, budget int) string {
	var b strings.Builder
	b.WriteString(memoryHeading + "\n" + memoryIntro)
	if react && s.write {
		b.WriteString(" " + memoryToolsIntro)
	}
	if s.failed {
		b.WriteString("\n\n" + memoryUnread)
		return b.String()
	}
	s.mu.Lock()
	blocks, hits := s.blocksInOrder(), slices.Clone(s.hits)
	s.mu.Unlock()
	if len(blocks) > 0 {
		b.WriteString("\n\n## Blocks")
	}
	left := budget*4 - b.Len()     // in bytes, as EstimateTokens counts
	left -= len(memoryOmitted) + 8 // room to say that blocks were left out
	omitted := 0
	for _, blk := range blocks {
		head := fmt.Sprintf("\n\n### %s (%d/%d characters)", blk.Label, utf8.RuneCountInString(blk.Value), blk.Limit)
		if blk.Description != "" {
			head += "\n" + domain.Clip(blk.Description, 200)
		}
		value := blk.Value
		if value == "" {
			value = "(empty)"
		}
		if room := left - len(head) - len("\n…"); len(head)+1+len(value) > left {
			if room < 100 {
				omitted++
				continue
			}
			value = domain.Clip(value, room)
		}
		b.WriteString(head + "\n" + value)
		left -= len(head) + 1 + len(value)
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n\n"+memoryOmitted, omitted)
	}
	var facts []string
	for _, h := range hits {
		line := "- " + strings.ReplaceAll(strings.TrimSpace(h.Record.Text), "\n", " ")
		if len(line)+1 > left-len("\n\n## Recalled facts") {
			break
		}
		left -= len(line) + 1
		facts = append(facts, line)
	}
	if len(facts) > 0 {
		b.WriteString("\n\n## Recalled facts\n" + strings.Join(facts, "\n"))
	}
	return b.String()
}

// blocksInOrder are the declared blocks (stored or empty) in configuration order, then the
// other stored ones by label. s.mu is held.
func (s *memoryState) blocksInOrder() []*domain.MemoryBlock {
	var out []*domain.MemoryBlock
	for _, spec := range s.run.Config.Blocks {
		if b := s.stored(spec.Label); b != nil {
			out = append(out, b)
			continue
		}
		out = append(out, &domain.MemoryBlock{Label: spec.Label, Description: spec.Description, Limit: spec.Limit})
	}
	var rest []*domain.MemoryBlock
	for _, b := range s.blocks {
		if !slices.ContainsFunc(s.run.Config.Blocks, func(sp domain.MemoryBlockSpec) bool { return sp.Label == b.Label }) {
			rest = append(rest, b)
		}
	}
	slices.SortFunc(rest, func(a, b *domain.MemoryBlock) int { return strings.Compare(a.Label, b.Label) })
	return append(out, rest...)
}

// stored is the stored block label, nil when none. s.mu is held.
func (s *memoryState) stored(label string) *domain.MemoryBlock {
	for _, b := range s.blocks {
		if b.Label == label {
			return b
		}
	}
	return nil
}

// spec is the block a tool may write under label: a declared one, or one stored in the scope.
func (s *memoryState) spec(label string) (domain.MemoryBlockSpec, error) {
	for _, sp := range s.run.Config.Blocks {
		if sp.Label == label {
			return sp, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.stored(label); b != nil {
		return domain.MemoryBlockSpec{Label: b.Label, Description: b.Description, Limit: b.Limit}, nil
	}
	var labels []string
	for _, b := range s.blocksInOrder() {
		labels = append(labels, fmt.Sprintf("%q", b.Label))
	}
	if len(labels) == 0 {
		return domain.MemoryBlockSpec{}, fmt.Errorf("there is no memory block %q and this agent has none; save facts with %s instead", domain.Clip(label, 64), domain.MemorySaveTool)
	}
	return domain.MemoryBlockSpec{}, fmt.Errorf("there is no memory block %q; the blocks are %s", domain.Clip(label, 64), strings.Join(labels, ", "))
}

// wrote keeps a block a tool wrote, for the prompts of the run's later nodes.
func (s *memoryState) wrote(b *domain.MemoryBlock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, old := range s.blocks {
		if old.Label == b.Label {
			s.blocks[i] = b
			return
		}
	}
	s.blocks = append(s.blocks, b)
}

func (s *memoryState) source() domain.MemorySource {
	return domain.MemorySource{Type: domain.MemorySourceTool, ExecutionID: s.run.ExecutionID, SessionID: s.run.SessionID}
}

// recallForPrompt recalls the run's memory (once) and ends the node's system prompt with its
// section. A failing memory never fails the run.
func (c *call) recallForPrompt(ctx context.Context, query string) {
	c.mem.recall(ctx, c, query)
	text := c.mem.section(c.node.AgentType == domain.AgentTypeReact, MemoryBudget(c.node.Provider, c.node.Model))
	if c.req.System != "" {
		c.req.System += "\n\n"
	}
	c.req.System += text
}

// memoryTools are the tools of a react agent with memory.
func (c *call) memoryTools() []domain.Tool {
	return []domain.Tool{&memoryTool{c: c, name: domain.MemoryReplaceTool}, &memoryTool{c: c, name: domain.MemoryAppendTool},
		&memoryTool{c: c, name: domain.MemorySaveTool}, &memoryTool{c: c, name: domain.MemorySearchTool}}
}

// memoryTool is one of the memory tools.
type memoryTool struct {
	c    *call
	name string
}

// Spec implements domain.Tool.
func (t *memoryTool) Spec() domain.ToolSpec {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	obj := func(props map[string]any, req ...any) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": req}
	}
	label := str("The block's label" + t.labels() + ".")
	switch t.name {
	case domain.MemoryReplaceTool:
		return domain.ToolSpec{Name: t.name, Description: "Replace text in one of your memory blocks about the user: every occurrence of old_text " +
			"becomes new_text (an empty new_text deletes it). old_text must occur in the block.",
			Schema: obj(map[string]any{"label": label, "old_text": str("The exact text to replace."), "new_text": str("The text to put instead.")},
				"label", "old_text", "new_text")}
	case domain.MemoryAppendTool:
		return domain.ToolSpec{Name: t.name, Description: "Append text on a new line to one of your memory blocks about the user.",
			Schema: obj(map[string]any{"label": label, "text": str("The text to append.")}, "label", "text")}
	case domain.MemorySaveTool:
		return domain.ToolSpec{Name: t.name, Description: "Save one lasting fact about the user in your memory, to recall in later conversations.",
			Schema: obj(map[string]any{"text": str(fmt.Sprintf("The fact, one self-contained sentence (at most %d characters).", domain.MaxMemoryTextLength))}, "text")}
	default:
		return domain.ToolSpec{Name: t.name, Description: "Search the facts you saved about the user, by meaning.",
			Schema: obj(map[string]any{"query": str("What to look for."),
				"top_k": map[string]any{"type": "integer", "minimum": 1, "maximum": domain.MaxRecallTopK, "description": "How many facts to find."}}, "query")}
	}
}

func (t *memoryTool) labels() string {
	var labels []string
	for _, sp := range t.c.mem.run.Config.Blocks {
		labels = append(labels, fmt.Sprintf("%q", sp.Label))
	}
	if len(labels) == 0 {
		return ""
	}
	return ": " + strings.Join(labels, ", ") + " or another block already stored"
}

// Call implements domain.Tool: bad arguments, denials and failures are errors (error results
// the model reads).
func (t *memoryTool) Call(ctx context.Context, input map[string]any) (string, error) {
	s := t.c.mem
	id, _ := ctx.Value(toolUseIDKey{}).(string)
	if t.name == domain.MemorySearchTool {
		return t.search(ctx, input, id)
	}
	if !s.write {
		return "", errors.New(MemoryWriteDenied)
	}
	arg := func(k string, required bool) (string, error) {
		v, ok := input[k].(string)
		if !ok || required && strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("%s: %s is required: a non-empty string", t.name, k)
		}
		return v, nil
	}
	if t.name == domain.MemorySaveTool {
		text, err := arg("text", true)
		if err != nil {
			return "", err
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(text)); n > domain.MaxMemoryTextLength {
			return "", fmt.Errorf("%s: text is %d characters, over %d: save a shorter fact", t.name, n, domain.MaxMemoryTextLength)
		}
		r, err := s.m.Save(ctx, s.run.Scope, strings.TrimSpace(text), s.source())
		if err != nil {
			return "", writeError(err)
		}
		t.c.em.send(Event{Type: EventMemoryWrite, Node: t.c.node.Name, Data: map[string]any{"op": "save", "record_id": r.ID, "tool_use_id": id}})
		return "Saved.", nil
	}
	label, err := arg("label", true)
	if err != nil {
		return "", err
	}
	spec, err := s.spec(label)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.name, err)
	}
	var edit func(string) (string, error)
	op := "append"
	if t.name == domain.MemoryReplaceTool {
		op = "replace"
		old, err := arg("old_text", true)
		if err != nil {
			return "", err
		}
		repl, err := arg("new_text", false)
		if err != nil {
			return "", err
		}
		edit = func(v string) (string, error) {
			if !strings.Contains(v, old) {
				return "", editError{fmt.Errorf("%s: old_text does not occur in the block %q; quote the block's text exactly", t.name, label)}
			}
			return strings.ReplaceAll(v, old, repl), nil
		}
	} else {
		text, err := arg("text", true)
		if err != nil {
			return "", err
		}
		edit = func(v string) (string, error) {
			if v == "" {
				return text, nil
			}
			return v + "\n" + text, nil
		}
	}
	b, err := s.m.EditBlock(ctx, s.run.Scope, spec, s.source(), edit)
	if err != nil {
		return "", writeError(err)
	}
	s.wrote(b)
	t.c.em.send(Event{Type: EventMemoryWrite, Node: t.c.node.Name, Data: map[string]any{"op": op, "block_id": b.ID, "label": b.Label, "tool_use_id": id}})
	return fmt.Sprintf("The block %q now holds %d of its %d characters:\n%s", b.Label, utf8.RuneCountInString(b.Value), b.Limit, b.Value), nil
}

// search is memory_search: one search of the run's scope, told of as a memory_recall event.
func (t *memoryTool) search(ctx context.Context, input map[string]any, useID string) (string, error) {
	s := t.c.mem
	if !s.canRead {
		return "", errors.New(MemoryReadDenied)
	}
	q, _ := input["query"].(string)
	q = strings.TrimSpace(q)
	if q == "" {
		return "", fmt.Errorf("%s: query is required: a non-empty string", t.name)
	}
	topK := s.run.Config.RecallTopK
	if topK <= 0 {
		topK = domain.DefaultRecallTopK
	}
	if x, ok := input["top_k"]; ok && x != nil {
		f, isNum := domain.Number(x)
		if !isNum || f != float64(int(f)) || f < 1 || f > domain.MaxRecallTopK {
			return "", fmt.Errorf("%s: top_k must be an integer from 1 to %d", t.name, domain.MaxRecallTopK)
		}
		topK = int(f)
	}
	start := time.Now()
	hits, tokens, err := s.m.Search(ctx, s.run.Scope, q, topK)
	if err != nil {
		return "", errors.New(memorySearchFailed)
	}
	if len(hits) > topK {
		hits = hits[:topK]
	}
	data := map[string]any{"agent_id": s.agentID(), "blocks": []string{}, "records": recordData(hits),
		"query": clipChars(q, maxEventQuery), "duration_ms": time.Since(start).Milliseconds(), "source": "tool", "tool_use_id": useID}
	if tokens > 0 {
		data["embedding_tokens"] = tokens
	}
	t.c.em.send(Event{Type: EventMemoryRecall, Node: t.c.node.Name, Data: data})
	if len(hits) == 0 {
		return fmt.Sprintf("No saved facts found for %q.", clipChars(q, maxEventQuery)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d saved facts for %q, best first:", len(hits), clipChars(q, maxEventQuery))
	for _, h := range hits {
		fmt.Fprintf(&b, "\n- (score %.3f) %s", h.Score, strings.TrimSpace(h.Record.Text))
	}
	return b.String(), nil
}

// writeError is what a model is told of a failed write: the tool's own edit error (old_text
// not found), a domain error's own message when it is the caller's concern (a block over its
// limit, too many blocks), else memoryWriteFailed.
func writeError(err error) error {
	var ee editError
	if errors.As(err, &ee) {
		return ee.error
	}
	var de *domain.Error
	switch domain.KindOf(err) {
	case domain.KindInvalid, domain.KindConflict, domain.KindPermission, domain.KindNotFound:
		if errors.As(err, &de) && de.Message != "" {
			return errors.New(de.Message)
		}
	}
	return errors.New(memoryWriteFailed)
}

// editError is an error of a tool's own edit function (old_text not found), which EditBlock
// returns as it is.
type editError struct{ error }
