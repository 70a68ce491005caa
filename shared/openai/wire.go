package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Tools       []tool    `json:"tools,omitempty"`
	ToolChoice  string    `json:"tool_choice,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	TopP        *float64  `json:"top_p,omitempty"`
	Stream      bool      `json:"stream"`
}

// message is one chat message; Content is a string, a []contentPart, or nil (JSON null) for an
// assistant message that only calls tools.
type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
	File     *file     `json:"file,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type file struct {
	Filename string `json:"filename"`
	FileData string `json:"file_data"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

// functionCall carries arguments as a JSON-encoded string; a few servers send an object instead,
// which parseArguments also accepts.
type functionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// chatResponse is the part of a chat completion the adapter reads.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"`
			Refusal   string          `json:"refusal"`
			ToolCalls []toolCall      `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// inlineDocs are the document formats sent as text, since chat completions take files only as PDF.
var inlineDocs = map[string]bool{"txt": true, "md": true, "csv": true, "html": true}

// buildRequest maps a runtime request to a chat completion request.
func buildRequest(req domain.ModelRequest, defaultModel string) (*chatRequest, error) {
	out := &chatRequest{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP}
	if out.Model == "" {
		out.Model = defaultModel
	}
	if req.System != "" {
		out.Messages = append(out.Messages, message{Role: "system", Content: req.System})
	}
	for i, t := range req.Turns {
		msgs, err := turnMessages(t)
		if err != nil {
			return nil, domain.Errorf(domain.KindInvalid, "turns[%d]: %s", i, err)
		}
		out.Messages = append(out.Messages, msgs...)
	}
	for _, t := range req.Tools {
		params := t.Schema
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out.Tools = append(out.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = "auto"
	}
	return out, nil
}

// turnMessages maps one turn. A user turn's tool results become tool messages placed first, as
// they must directly follow the assistant message that called the tools.
func turnMessages(t domain.Turn) ([]message, error) {
	switch t.Role {
	case domain.RoleAssistant:
		var text strings.Builder
		var calls []toolCall
		for _, p := range t.Parts {
			switch {
			case p.Type == domain.PartText:
				text.WriteString(p.Text)
			case p.Type == domain.PartToolUse && p.ToolUse != nil:
				args, err := json.Marshal(p.ToolUse.Input)
				if err != nil || p.ToolUse.Input == nil {
					args = []byte("{}")
				}
				raw, _ := json.Marshal(string(args)) // a string always encodes
				calls = append(calls, toolCall{ID: p.ToolUse.ID, Type: "function", Function: functionCall{Name: p.ToolUse.Name, Arguments: raw}})
			default:
				return nil, fmt.Errorf("assistant turns carry only text and tool_use parts, not %q", p.Type)
			}
		}
		m := message{Role: "assistant", ToolCalls: calls}
		if text.Len() > 0 || len(calls) == 0 {
			m.Content = text.String()
		}
		return []message{m}, nil
	case domain.RoleUser:
		var out []message
		var parts []contentPart
		for _, p := range t.Parts {
			if p.Type == domain.PartToolResult && p.ToolResult != nil {
				content := p.ToolResult.Content
				if p.ToolResult.IsError {
					content = "Error: " + content
				}
				out = append(out, message{Role: "tool", ToolCallID: p.ToolResult.ToolUseID, Content: content})
				continue
			}
			cp, err := userPart(p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, cp)
		}
		switch {
		case len(parts) == 1 && parts[0].Type == "text":
			out = append(out, message{Role: "user", Content: parts[0].Text})
		case len(parts) > 0:
			out = append(out, message{Role: "user", Content: parts})
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown role %q", t.Role)
}

// userPart maps a text, image or document part of a user turn.
func userPart(p domain.Part) (contentPart, error) {
	switch {
	case p.Type == domain.PartText:
		return contentPart{Type: "text", Text: p.Text}, nil
	case p.Type == domain.PartImage && p.Image != nil:
		mime, ok := domain.ImageMediaType(p.Image.Format)
		if !ok {
			return contentPart{}, fmt.Errorf("image format %q is not one of png, jpeg, gif, webp", p.Image.Format)
		}
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL(mime, p.Image.Data)}}, nil
	case p.Type == domain.PartDocument && p.Document != nil:
		format, name := strings.ToLower(p.Document.Format), p.Document.Name
		if name == "" {
			name = "document." + format
		}
		switch {
		case format == "pdf":
			return contentPart{Type: "file", File: &file{Filename: name, FileData: dataURL("application/pdf", p.Document.Data)}}, nil
		case inlineDocs[format] && utf8.Valid(p.Document.Data):
			return contentPart{Type: "text", Text: fmt.Sprintf("Document %s:\n%s", name, p.Document.Data)}, nil
		}
		return contentPart{}, fmt.Errorf("document format %q is not supported by OpenAI-compatible models", p.Document.Format)
	}
	return contentPart{}, fmt.Errorf("user turns cannot carry a %q part here", p.Type)
}

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// parseResponse maps the first choice of a chat completion to the runtime's response.
func parseResponse(body []byte) (*domain.ModelResponse, error) {
	var cr chatResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, fmt.Errorf("openai chat completions: decode response: %w", err)
	}
	if len(cr.Choices) == 0 {
		return nil, fmt.Errorf("openai chat completions: response has no choices")
	}
	choice := cr.Choices[0]
	resp := &domain.ModelResponse{Usage: domain.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}}
	text := contentText(choice.Message.Content)
	if text == "" {
		text = choice.Message.Refusal
	}
	if text != "" {
		resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartText, Text: text})
	}
	for _, c := range choice.Message.ToolCalls {
		input, err := parseArguments(c.Function.Arguments)
		if err != nil {
			return nil, domain.Wrap(domain.KindInternal, fmt.Errorf("openai chat completions: arguments of %s: %w", c.Function.Name, err),
				"The model produced malformed tool arguments")
		}
		resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: c.ID, Name: c.Function.Name, Input: input}})
	}
	switch {
	case len(choice.Message.ToolCalls) > 0:
		resp.StopReason = domain.StopToolUse // some servers report "stop" alongside tool calls
	case choice.FinishReason == "length":
		resp.StopReason = domain.StopMaxTokens
	case choice.FinishReason == "content_filter", choice.Message.Refusal != "":
		resp.StopReason = domain.StopFiltered
	default:
		resp.StopReason = domain.StopEndTurn
	}
	return resp, nil
}

// contentText reads message content given as a string, null, or an array of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// parseArguments decodes tool-call arguments: a JSON string holding an object (the standard),
// or an object itself. Empty arguments are an empty object.
func parseArguments(raw json.RawMessage) (map[string]any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return map[string]any{}, nil
	}
	var input map[string]any
	if err := json.Unmarshal(raw, &input); err != nil {
		return nil, err
	}
	if input == nil {
		input = map[string]any{}
	}
	return input, nil
}
