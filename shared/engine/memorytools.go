package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

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
	sctx, span := t.c.startRetrieval(ctx, q, []string{memorySource}, topK)
	hits, tokens, err := s.m.Search(sctx, s.run.Scope, q, topK)
	t.c.endRecall(span, hits, err)
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
