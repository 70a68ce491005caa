package openaiserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// responsesRequest is a Responses API request. instructions, like system messages, are not given
// to the agent (its prompts are its own); sampling parameters are left to its llm_config.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Stream             bool              `json:"stream"`
	Tools              []responsesTool   `json:"tools"`
	ToolChoice         any               `json:"tool_choice"`
	PreviousResponseID string            `json:"previous_response_id"`
	Metadata           map[string]string `json:"metadata"`
	Inputs             map[string]any    `json:"inputs"` // the agent's {{ variables.NAME }}, as in chat
	User               any               `json:"user"`   // the end user: the session's user_id (endUser)
}

type responsesTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      *bool          `json:"strict,omitempty"`
}

type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responseID names a response's session and execution, so that previous_response_id goes on in
// the session.
func responseID(sessionID, executionID string) string { return "resp_" + sessionID + "_" + executionID }

// conversation reads the request into the terms both APIs share.
func (q *responsesRequest) conversation() (*conversation, error) {
	c := &conversation{model: q.Model, inputs: q.Inputs, field: "input"}
	var errs []domain.FieldError
	var bad *domain.FieldError
	if c.user, bad = endUser(q.User); bad != nil {
		errs = append(errs, *bad)
	}
	if q.PreviousResponseID != "" {
		rest, _ := strings.CutPrefix(q.PreviousResponseID, "resp_")
		if len(rest) < 36 || !domain.IsID(rest[:36]) {
			return nil, domain.Invalid([]domain.FieldError{{Field: "previous_response_id", Message: fmt.Sprintf("%q is not a response of this API", domain.Clip(q.PreviousResponseID, 80))}})
		}
		c.session = rest[:36]
	}
	var s string
	var items []inputItem
	switch err := json.Unmarshal(q.Input, &s); {
	case len(q.Input) == 0 || string(q.Input) == "null":
	case err == nil:
		c.msgs = append(c.msgs, msg{role: "user", text: s})
	default:
		if err := json.Unmarshal(q.Input, &items); err != nil {
			return nil, domain.Invalid([]domain.FieldError{{Field: "input", Message: "must be a string or an array of input items"}})
		}
	}
	for i, it := range items {
		f := fmt.Sprintf("input.%d", i)
		switch it.Type {
		case "", "message":
			text, ferr := contentText(it.Content, f+".content", "input_text", "output_text", "text")
			if ferr != nil {
				errs = append(errs, *ferr)
			}
			switch it.Role {
			case "system", "developer", "user", "assistant":
			default:
				errs = append(errs, domain.FieldError{Field: f + ".role", Message: `must be "system", "developer", "user" or "assistant"`})
			}
			c.msgs = append(c.msgs, msg{role: it.Role, text: text})
		case "function_call":
			cl := call{id: it.CallID, name: it.Name, args: it.Arguments}
			if k := len(c.msgs) - 1; k >= 0 && c.msgs[k].role == "assistant" {
				c.msgs[k].calls = append(c.msgs[k].calls, cl)
			} else {
				c.msgs = append(c.msgs, msg{role: "assistant", calls: []call{cl}})
			}
		case "function_call_output":
			text, ferr := contentText(it.Output, f+".output", "input_text", "output_text", "text")
			if ferr != nil {
				errs = append(errs, *ferr)
			}
			if it.CallID == "" {
				errs = append(errs, domain.FieldError{Field: f + ".call_id", Message: "is required"})
			}
			c.msgs = append(c.msgs, msg{role: "tool", text: text, callID: it.CallID})
		case "reasoning", "item_reference":
			// Nothing the agent can be given.
		default:
			errs = append(errs, domain.FieldError{Field: f + ".type", Message: fmt.Sprintf("%q items are not supported: send messages, function_call and function_call_output items", domain.Clip(it.Type, 32))})
		}
	}
	if q.ToolChoice != "none" {
		for i, t := range q.Tools {
			if t.Type != "function" {
				errs = append(errs, domain.FieldError{Field: fmt.Sprintf("tools.%d.type", i), Message: `must be "function": the agent's own tools are its others`})
				continue
			}
			if !domain.ValidToolName(t.Name) {
				errs = append(errs, domain.FieldError{Field: fmt.Sprintf("tools.%d.name", i), Message: "must be 1-64 letters, digits, _ or -"})
			}
			c.tools = append(c.tools, domain.FunctionTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return c, nil
}

// responseJSON is a Responses API response object.
type responseJSON struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              *responseError    `json:"error"`
	IncompleteDetails  *incomplete       `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              bool              `json:"store"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []responsesTool   `json:"tools"`
	Truncation         string            `json:"truncation"`
	Text               any               `json:"text"`
	Usage              *responsesUsage   `json:"usage"`
	Metadata           map[string]string `json:"metadata"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incomplete struct {
	Reason string `json:"reason"`
}

type responsesUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

type messageItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type functionCallItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

func textPart(text string) outputText {
	return outputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

// shell is the response object of q before its run's outcome.
func (q *responsesRequest) shell(created int64) *responseJSON {
	tools := q.Tools
	if tools == nil {
		tools = []responsesTool{}
	}
	meta := q.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	var prev *string
	if q.PreviousResponseID != "" {
		prev = &q.PreviousResponseID
	}
	return &responseJSON{Object: "response", CreatedAt: created, Status: "in_progress", Model: q.Model, Output: []any{},
		ParallelToolCalls: true, PreviousResponseID: prev, Store: true, ToolChoice: "auto", Tools: tools, Truncation: "disabled",
		Text: map[string]any{"format": map[string]string{"type": "text"}}, Metadata: meta}
}

// finish fills in a response from its run's outcome and text.
func (r *responseJSON) finish(o *outcome, text string) {
	r.ID, r.Status = responseID(o.sessionID, o.executionID), "completed"
	r.Output = []any{}
	if text != "" {
		r.Output = append(r.Output, messageItem{Type: "message", ID: "msg_" + o.executionID, Status: "completed", Role: "assistant", Content: []outputText{textPart(text)}})
	}
	for i, c := range o.calls {
		r.Output = append(r.Output, functionCallItem{Type: "function_call", ID: fmt.Sprintf("fc_%s_%d", o.executionID, i), CallID: c.id, Name: c.name, Arguments: c.args, Status: "completed"})
	}
	switch o.finish {
	case "length":
		r.Status, r.IncompleteDetails = "incomplete", &incomplete{Reason: "max_output_tokens"}
	case "content_filter":
		r.Status, r.IncompleteDetails = "incomplete", &incomplete{Reason: "content_filter"}
	}
	r.Usage = &responsesUsage{InputTokens: o.in, OutputTokens: o.out, TotalTokens: o.in + o.out,
		InputTokensDetails: map[string]int{"cached_tokens": 0}, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}}
}

// responses answers POST /responses: the agent named by model runs the input.
func (h *server) responses(w http.ResponseWriter, r *http.Request) error {
	var q responsesRequest
	if err := h.decode(w, r, &q); err != nil {
		return err
	}
	c, err := q.conversation()
	if err != nil {
		return err
	}
	resp := q.shell(time.Now().Unix())
	if q.Stream {
		return h.stream(w, r, c, &responsesStream{resp: resp})
	}
	res, err := h.run(r.Context(), r, c, noObserver)
	if err != nil {
		return err
	}
	o, err := outcomeOf(res)
	if err != nil {
		return err
	}
	resp.finish(o, o.text)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// responsesStream writes the Responses API's typed events: response.created and .in_progress,
// the message's output_item, content_part and output_text events as its text comes, each
// function call's output_item and function_call_arguments events, then response.completed (or
// response.failed).
type responsesStream struct {
	resp   *responseJSON
	seq    int
	itemID string // the message item's
	opened bool   // the message item was announced (its text began)
	sofar  strings.Builder
}

func (st *responsesStream) event(s *sse, typ string, fields map[string]any) {
	fields["type"], fields["sequence_number"] = typ, st.seq
	st.seq++
	s.json(typ, fields)
}

func (st *responsesStream) begin(s *sse, sessionID, executionID string) {
	st.resp.ID, st.itemID = responseID(sessionID, executionID), "msg_"+executionID
	st.event(s, "response.created", map[string]any{"response": st.resp})
	st.event(s, "response.in_progress", map[string]any{"response": st.resp})
}

func (st *responsesStream) text(s *sse, delta string) {
	if !st.opened {
		st.opened = true
		st.event(s, "response.output_item.added", map[string]any{"output_index": 0,
			"item": messageItem{Type: "message", ID: st.itemID, Status: "in_progress", Role: "assistant", Content: []outputText{}}})
		st.event(s, "response.content_part.added", map[string]any{"item_id": st.itemID, "output_index": 0, "content_index": 0, "part": textPart("")})
	}
	st.sofar.WriteString(delta)
	st.event(s, "response.output_text.delta", map[string]any{"item_id": st.itemID, "output_index": 0, "content_index": 0, "delta": delta, "logprobs": []any{}})
}

func (st *responsesStream) end(s *sse, o *outcome) {
	text := st.sofar.String()
	st.resp.finish(o, text)
	index := 0
	if st.opened {
		item := st.resp.Output[0].(messageItem)
		st.event(s, "response.output_text.done", map[string]any{"item_id": st.itemID, "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
		st.event(s, "response.content_part.done", map[string]any{"item_id": st.itemID, "output_index": 0, "content_index": 0, "part": textPart(text)})
		st.event(s, "response.output_item.done", map[string]any{"output_index": 0, "item": item})
		index = 1
	}
	for _, x := range st.resp.Output[index:] {
		fc := x.(functionCallItem)
		added := fc
		added.Arguments, added.Status = "", "in_progress"
		st.event(s, "response.output_item.added", map[string]any{"output_index": index, "item": added})
		st.event(s, "response.function_call_arguments.delta", map[string]any{"item_id": fc.ID, "output_index": index, "delta": fc.Arguments})
		st.event(s, "response.function_call_arguments.done", map[string]any{"item_id": fc.ID, "output_index": index, "name": fc.Name, "arguments": fc.Arguments})
		st.event(s, "response.output_item.done", map[string]any{"output_index": index, "item": fc})
		index++
	}
	typ := "response.completed"
	if st.resp.Status == "incomplete" {
		typ = "response.incomplete"
	}
	st.event(s, typ, map[string]any{"response": st.resp})
}

func (st *responsesStream) fail(s *sse, e errorJSON) {
	st.resp.Status, st.resp.Error = "failed", &responseError{Code: e.Type, Message: e.Message}
	st.event(s, "response.failed", map[string]any{"response": st.resp})
}
