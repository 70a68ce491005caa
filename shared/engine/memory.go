package engine

import (
	"context"
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
		sctx, span := c.startRetrieval(ctx, query, []string{memorySource}, s.run.Config.RecallTopK)
		blocks, err := s.m.Blocks(sctx, s.run.Scope)
		var hits []domain.MemoryHit
		tokens := 0
		if err == nil && s.run.Config.RecallTopK > 0 && query != "" {
			hits, tokens, err = s.m.Search(sctx, s.run.Scope, query, s.run.Config.RecallTopK)
		}
		c.endRecall(span, hits, err)
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
