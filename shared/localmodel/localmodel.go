// Package localmodel is the offline development model, the default provider of the local stack.
//
// It is NOT a language model and understands nothing. It answers deterministically from the
// request so that agents, tools, sessions and graphs can be exercised end to end without network
// access, credentials or cost, and so that tests can predict every answer:
//
//   - When the last turn carries tool results, it replies with each result ("Tool result: …"),
//     the latest user text and history=N.
//   - When the latest user text names a tool of the request followed by a JSON object
//     (`search_docs {"query":"refunds"}` or `search_docs: {…}`), it asks for that tool call.
//   - When the system prompt begins with domain.MemoryExtractHeading (a memory extraction,
//     shared/memory), it answers {"memories":[…]} with the first-person statements ("I …",
//     "I'm …", "My …"; not questions) of the user's message: the text between <user_message>
//     and </user_message> of the latest user text, or all of it.
//   - Otherwise it echoes the latest user text, the system prompt and history=N.
//
// The latest user text is the text of the last user turn that has any text (turns carrying only
// tool results do not count); N is the number of turns before that turn. Token usage is counted
// in words (strings.Fields), which is all an offline stand-in can honestly claim.
package localmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// Model is the offline development model; the zero value is ready to use and safe for
// concurrent use.
type Model struct{}

// Converse answers req as the package documentation describes. It fails only when ctx is done.
func (Model) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	history, user := latestUser(req.Turns)
	text := userText(user)
	resp := &domain.ModelResponse{Usage: domain.Usage{InputTokens: inputWords(req)}}

	if strings.HasPrefix(req.System, domain.MemoryExtractHeading) {
		b, _ := json.Marshal(map[string][]string{"memories": firstPerson(text)}) // strings always encode
		return reply(req, resp, string(b)), nil
	}

	if results := lastToolResults(req.Turns); len(results) > 0 {
		lines := make([]string, 0, len(results)+2)
		for _, r := range results {
			line := "Tool result: " + r.Content
			if r.IsError {
				line += " [error]"
			}
			lines = append(lines, line)
		}
		lines = append(lines, "You said: "+text, fmt.Sprintf("history=%d", history))
		return reply(req, resp, "[local model] "+strings.Join(lines, "\n")), nil
	}

	if calls := toolCalls(text, req.Tools); len(calls) > 0 {
		for _, c := range calls {
			resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &c})
			b, _ := json.Marshal(c.Input) // a map decoded from JSON always encodes
			resp.Usage.OutputTokens += len(strings.Fields(string(b)))
		}
		resp.StopReason = domain.StopToolUse
		return resp, nil
	}

	lines := []string{"You said: " + text}
	if a := attachments(user); a != "" {
		lines = append(lines, "Attachments: "+a)
	}
	lines = append(lines, "System prompt: "+req.System, fmt.Sprintf("history=%d", history))
	return reply(req, resp, "[local model] "+strings.Join(lines, "\n")), nil
}

// reply completes resp as a single text answer and hands the text to req.OnText.
func reply(req domain.ModelRequest, resp *domain.ModelResponse, text string) *domain.ModelResponse {
	resp.Parts = []domain.Part{{Type: domain.PartText, Text: text}}
	resp.StopReason = domain.StopEndTurn
	resp.Usage.OutputTokens = len(strings.Fields(text))
	if req.OnText != nil {
		req.OnText(text)
	}
	return resp
}

// latestUser finds the last user turn with at least one text part and the number of turns
// before it. Without one, every turn counts as history and the turn is nil.
func latestUser(turns []domain.Turn) (int, *domain.Turn) {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role != domain.RoleUser {
			continue
		}
		for _, p := range turns[i].Parts {
			if p.Type == domain.PartText {
				return i, &turns[i]
			}
		}
	}
	return len(turns), nil
}

// userText joins the text parts of t, one per line.
func userText(t *domain.Turn) string {
	if t == nil {
		return ""
	}
	var texts []string
	for _, p := range t.Parts {
		if p.Type == domain.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// lastToolResults returns the tool results the last turn carries.
func lastToolResults(turns []domain.Turn) []domain.ToolResult {
	if len(turns) == 0 {
		return nil
	}
	var out []domain.ToolResult
	for _, p := range turns[len(turns)-1].Parts {
		if p.Type == domain.PartToolResult && p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

// attachments acknowledges the images and documents of t without reading them: "[1 image]".
func attachments(t *domain.Turn) string {
	if t == nil {
		return ""
	}
	var images, docs int
	for _, p := range t.Parts {
		switch p.Type {
		case domain.PartImage:
			images++
		case domain.PartDocument:
			docs++
		}
	}
	var out []string
	if images > 0 {
		out = append(out, count(images, "image"))
	}
	if docs > 0 {
		out = append(out, count(docs, "document"))
	}
	return strings.Join(out, " ")
}

func count(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return fmt.Sprintf("[%d %s]", n, noun)
}

// inputWords counts the words of the system prompt, every text part and every tool result.
func inputWords(req domain.ModelRequest) int {
	n := len(strings.Fields(req.System))
	for _, t := range req.Turns {
		for _, p := range t.Parts {
			switch {
			case p.Type == domain.PartText:
				n += len(strings.Fields(p.Text))
			case p.Type == domain.PartToolResult && p.ToolResult != nil:
				n += len(strings.Fields(p.ToolResult.Content))
			}
		}
	}
	return n
}

// toolCalls finds, left to right, each tool name of tools in text that is followed (after
// optional whitespace and an optional ':') by a valid JSON object. Where names overlap at one
// position ("search" and "search_docs"), the longest wins.
func toolCalls(text string, tools []domain.ToolSpec) []domain.ToolUse {
	var calls []domain.ToolUse
	for i := 0; i < len(text); {
		name := longestNameAt(text[i:], tools)
		if name == "" {
			i++
			continue
		}
		input, n, ok := objectAfter(text[i+len(name):])
		if !ok {
			i++
			continue
		}
		calls = append(calls, domain.ToolUse{
			ID:    fmt.Sprintf("local-%d", len(calls)+1),
			Name:  name,
			Input: input,
		})
		i += len(name) + n
	}
	return calls
}

func longestNameAt(s string, tools []domain.ToolSpec) string {
	var best string
	for _, t := range tools {
		if t.Name != "" && len(t.Name) > len(best) && strings.HasPrefix(s, t.Name) {
			best = t.Name
		}
	}
	return best
}

// objectAfter parses the JSON object that s starts with, after optional whitespace and an
// optional ':'. It returns the object and the number of bytes of s up to its closing brace.
func objectAfter(s string) (map[string]any, int, bool) {
	i := skipSpace(s, 0)
	if i < len(s) && s[i] == ':' {
		i = skipSpace(s, i+1)
	}
	if i >= len(s) || s[i] != '{' {
		return nil, 0, false
	}
	end := balancedEnd(s[i:])
	if end < 0 {
		return nil, 0, false
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(s[i:i+end]), &obj); err != nil {
		return nil, 0, false
	}
	return obj, i + end, true
}

func skipSpace(s string, i int) int {
	for i < len(s) && unicode.IsSpace(rune(s[i])) {
		i++
	}
	return i
}

// balancedEnd returns the length of the brace-balanced prefix of s (which starts with '{'),
// skipping braces inside JSON strings, or -1 when the braces never balance.
func balancedEnd(s string) int {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// firstPerson is the first-person statements of the user's message in text (a memory
// extraction's turn): its sentences that begin "I ", "I'" or "My " and are no questions, in
// order, never nil.
func firstPerson(text string) []string {
	if _, rest, ok := strings.Cut(text, "<user_message>"); ok {
		text, _, _ = strings.Cut(rest, "</user_message>")
	}
	out := []string{}
	start := 0
	for i, r := range text {
		end := -1
		switch r {
		case '.', '!', '?':
			if i+1 == len(text) || unicode.IsSpace(rune(text[i+1])) {
				end = i + 1
			}
		case '\n':
			end = i
		}
		if end < 0 {
			continue
		}
		out = appendStatement(out, text[start:end])
		start = end
	}
	return appendStatement(out, text[start:])
}

// appendStatement appends s, trimmed, if it is a first-person statement.
func appendStatement(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "?") {
		return out
	}
	for _, p := range []string{"I ", "I'", "I’", "My "} {
		if strings.HasPrefix(s, p) {
			return append(out, s)
		}
	}
	return out
}
