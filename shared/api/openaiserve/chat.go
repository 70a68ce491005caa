package openaiserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// chatRequest is a chat completion request; the sampling parameters OpenAI clients send
// (temperature, max_tokens …) are accepted and left to the agent's own llm_config.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []chatMessage  `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	Tools         []chatTool     `json:"tools"`
	ToolChoice    any            `json:"tool_choice"`
	// Inputs fill the agent's {{ variables.NAME }} (an extension of ours; OpenAI SDKs send it as
	// an extra body field).
	Inputs map[string]any `json:"inputs"`
	// User is OpenAI's identifier of the end user: the session's user_id (endUser).
	User any `json:"user"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	Index    *int             `json:"index,omitempty"` // in a chunk's delta
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// conversation reads the request into the terms both APIs share.
func (q *chatRequest) conversation() (*conversation, error) {
	c := &conversation{model: q.Model, inputs: q.Inputs, field: "messages"}
	var errs []domain.FieldError
	var bad *domain.FieldError
	if c.user, bad = endUser(q.User); bad != nil {
		errs = append(errs, *bad)
	}
	for i, m := range q.Messages {
		f := fmt.Sprintf("messages.%d", i)
		text, err := contentText(m.Content, f+".content", "text")
		if err != nil {
			errs = append(errs, *err)
		}
		cm := msg{role: m.Role, text: text, callID: m.ToolCallID}
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			for _, tc := range m.ToolCalls {
				cm.calls = append(cm.calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
			}
		case "tool":
			if m.ToolCallID == "" {
				errs = append(errs, domain.FieldError{Field: f + ".tool_call_id", Message: "is required in a tool message"})
			}
		default:
			errs = append(errs, domain.FieldError{Field: f + ".role", Message: `must be "system", "developer", "user", "assistant" or "tool"`})
		}
		c.msgs = append(c.msgs, cm)
	}
	if q.ToolChoice != "none" {
		for i, t := range q.Tools {
			if t.Type != "function" {
				errs = append(errs, domain.FieldError{Field: fmt.Sprintf("tools.%d.type", i), Message: `must be "function": the agent's own tools are its others`})
				continue
			}
			if !domain.ValidToolName(t.Function.Name) {
				errs = append(errs, domain.FieldError{Field: fmt.Sprintf("tools.%d.function.name", i), Message: "must be 1-64 letters, digits, _ or -"})
			}
			c.tools = append(c.tools, domain.FunctionTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return c, nil
}

// contentText is the text of a message's content: a string, or an array of parts of the given
// text types (joined by newlines); null is empty. Other parts (images, audio, files) are refused.
func contentText(raw json.RawMessage, field string, textTypes ...string) (string, *domain.FieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", &domain.FieldError{Field: field, Message: "must be a string or an array of content parts"}
	}
	var texts []string
	for i, p := range parts {
		ok := false
		for _, t := range textTypes {
			ok = ok || p.Type == t
		}
		if !ok {
			return "", &domain.FieldError{Field: fmt.Sprintf("%s.%d.type", field, i), Message: fmt.Sprintf("%q parts are not supported here: send text (%s)", domain.Clip(p.Type, 32), strings.Join(textTypes, ", "))}
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// chatCompletion is a chat completion, or one chunk of a streamed one.
type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint *string      `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *chatUsage   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int        `json:"index"`
	Message      *chatOut   `json:"message,omitempty"`
	Delta        *chatDelta `json:"delta,omitempty"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

// chatOut is a completion's assistant message: content null when it only calls tools.
type chatOut struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

// chatDelta is a chunk's part of the message.
type chatDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(o *outcome) *chatUsage {
	return &chatUsage{PromptTokens: o.in, CompletionTokens: o.out, TotalTokens: o.in + o.out}
}

func (o *outcome) toolCalls(indexed bool) []chatToolCall {
	var out []chatToolCall
	for i, c := range o.calls {
		tc := chatToolCall{ID: c.id, Type: "function", Function: chatFunctionCall{Name: c.name, Arguments: c.args}}
		if indexed {
			tc.Index = &i
		}
		out = append(out, tc)
	}
	return out
}

// chat answers POST /chat/completions: the agent named by model runs the conversation.
func (h *server) chat(w http.ResponseWriter, r *http.Request) error {
	var q chatRequest
	if err := h.decode(w, r, &q); err != nil {
		return err
	}
	c, err := q.conversation()
	if err != nil {
		return err
	}
	if q.Stream {
		return h.stream(w, r, c, &chatStream{model: q.Model, created: time.Now().Unix(), usage: q.StreamOptions != nil && q.StreamOptions.IncludeUsage})
	}
	res, err := h.run(r.Context(), r, c, noObserver)
	if err != nil {
		return err
	}
	o, err := outcomeOf(res)
	if err != nil {
		return err
	}
	out := &chatOut{Role: "assistant", ToolCalls: o.toolCalls(false)}
	if o.text != "" || len(o.calls) == 0 {
		out.Content = &o.text
	}
	writeJSON(w, http.StatusOK, chatCompletion{ID: "chatcmpl-" + o.executionID, Object: "chat.completion", Created: time.Now().Unix(), Model: q.Model,
		Choices: []chatChoice{{Message: out, FinishReason: &o.finish}}, Usage: usageOf(o)})
	return nil
}

// chatStream writes chat.completion.chunk events: the role first, the text as it comes, the
// tool calls, the finish reason, the usage when asked for, then [DONE].
type chatStream struct {
	model   string
	created int64
	usage   bool
	id      string
}

func (c *chatStream) chunk(s *sse, choices []chatChoice, usage *chatUsage) {
	s.json("", chatCompletion{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Choices: choices, Usage: usage})
}

func (c *chatStream) begin(s *sse, _, executionID string) {
	c.id = "chatcmpl-" + executionID
	empty := ""
	c.chunk(s, []chatChoice{{Delta: &chatDelta{Role: "assistant", Content: &empty}}}, nil)
}

func (c *chatStream) text(s *sse, delta string) {
	c.chunk(s, []chatChoice{{Delta: &chatDelta{Content: &delta}}}, nil)
}

func (c *chatStream) end(s *sse, o *outcome) {
	if calls := o.toolCalls(true); len(calls) > 0 {
		c.chunk(s, []chatChoice{{Delta: &chatDelta{ToolCalls: calls}}}, nil)
	}
	c.chunk(s, []chatChoice{{Delta: &chatDelta{}, FinishReason: &o.finish}}, nil)
	if c.usage {
		c.chunk(s, []chatChoice{}, usageOf(o))
	}
	s.send("", []byte("[DONE]"))
}

func (c *chatStream) fail(s *sse, e errorJSON) {
	s.json("", map[string]errorJSON{"error": e})
}
