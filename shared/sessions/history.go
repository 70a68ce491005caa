package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
)

// Limits on the assistant messages one execution stores. Its commit is one DynamoDB transaction
// (at most 4 MB) of items of at most 400 KB each: at most domain.MaxNodeRuns assistant messages,
// the user message (MaxTextBytes of text, and the labels of attachments), the execution record
// (MaxEventsBytes of events) and the session (a configuration of domain.MaxConfigBytes and
// MaxVariablesBytes of variables).
const (
	// MaxStoredMessageBytes bounds one stored assistant message.
	MaxStoredMessageBytes = 350_000
	// MaxStoredRunBytes bounds the user and assistant messages of one execution together.
	MaxStoredRunBytes = 2_800_000
)

// history reads the most recent stored messages whose estimated tokens fit budget: whole
// messages, the oldest dropped first, starting with a user message because providers refuse a
// conversation that opens with an assistant turn. Reading stops at the first message that does
// not fit, so a long session costs no more than its budget. The messages of the execution skip
// (a paused one, whose checkpoint holds them; "" for none) are left out.
func (s *Service) history(ctx context.Context, sessionID string, budget int, skip string) ([]engine.Message, error) {
	used := 0
	msgs, err := s.store.History(ctx, sessionID, func(m domain.Message) bool {
		if skip != "" && m.ExecutionID == skip {
			return true
		}
		used += engine.EstimateTokens(m.Content)
		return used <= budget
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", sessionID, err)
	}
	if skip != "" {
		msgs = slices.DeleteFunc(msgs, func(m domain.Message) bool { return m.ExecutionID == skip })
	}
	for len(msgs) > 0 && msgs[0].Role != domain.RoleUser {
		msgs = msgs[1:]
	}
	out := make([]engine.Message, len(msgs))
	for i, m := range msgs {
		out[i] = engine.Message{ID: m.ID, Role: m.Role, Node: m.Node, Content: m.Content, Visible: m.Visible, CreatedAt: m.CreatedAt}
	}
	return out, nil
}

// clipStored shortens assistant messages so that each has at most MaxStoredMessageBytes and
// all together at most budget bytes: the longest are cut to one common length, the largest that
// fits, so short messages stay whole. A cut message ends with a note of what it kept.
func clipStored(msgs []domain.Message, budget int) {
	// A message's citations share its item: its content gets what they leave.
	caps := make([]int, len(msgs))
	lengths := make([]int, len(msgs))
	total := 0
	for i, m := range msgs {
		cites := citationBytes(m.Citations)
		budget -= cites
		caps[i] = max(MaxStoredMessageBytes-cites, 0)
		lengths[i] = min(len(m.Content), caps[i])
		total += lengths[i]
	}
	budget = max(budget, 0)
	limit := MaxStoredMessageBytes
	if total > budget {
		// Water-fill: with the lengths sorted, find the common length c of the longest ones such
		// that the shorter ones whole and the rest at c fit.
		sorted := slices.Clone(lengths)
		slices.Sort(sorted)
		rest := budget
		for i, n := range sorted {
			c := rest / (len(sorted) - i)
			if n > c {
				limit = c
				break
			}
			rest -= n
		}
	}
	for i := range msgs {
		if l := min(limit, caps[i]); len(msgs[i].Content) > l {
			msgs[i].Content = truncateStored(msgs[i].Content, l)
		}
	}
}

// citationBytes bounds from above the bytes citations take in a stored message's JSON.
func citationBytes(c []domain.Citation) int {
	if c == nil {
		return 0
	}
	stored := make([]storedCitation, len(c))
	for i, x := range c {
		stored[i] = storedCitation(x)
	}
	b, _ := json.Marshal(stored) // plain structs always encode
	return len(b)
}

// storedCitation is a citation in the JSON the store keeps it as (dynamo's citationRecord),
// which citationBytes measures.
type storedCitation struct {
	Index           int     `json:"index"`
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	FileID          string  `json:"file_id"`
	FileName        string  `json:"file_name"`
	ChunkIndex      int     `json:"chunk_index"`
	Score           float64 `json:"score"`
	Text            string  `json:"text"`
}

// truncateStored cuts text to at most limit bytes at a character boundary, ending with a note.
func truncateStored(text string, limit int) string {
	note := fmt.Sprintf("\n[truncated for storage: the message had %d bytes]", len(text))
	keep := max(limit-len(note), 0)
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	return text[:keep] + note
}
