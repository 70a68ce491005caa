package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// executeBody is an execute body's top level, in the first-error form of the API's first
// endpoints. Its content and its answer are read on their own by the one decoder (readExecute):
// their errors name every item by its index, and the feature reports the content's in turn with
// those of its values.
type executeBody struct {
	firstError
	Content        json.RawMessage `json:"content"`
	CorrelationID  *string         `json:"correlation_id"`
	Inputs         map[string]any  `json:"inputs" want:"an object of variable names to values"`
	ResponseFormat string          `json:"response_format"`
	Stream         bool            `json:"stream"`
	Async          bool            `json:"async"`
	// tool_results, approvals and elicitations continue a paused execution (answerBody).
	ToolResults  json.RawMessage `json:"tool_results"`
	Approvals    json.RawMessage `json:"approvals"`
	Elicitations json.RawMessage `json:"elicitations"`
}

// readExecute reads an execute body: its top level, then the answer to a paused execution it
// may carry, then (when it answers nothing) its content.
func readExecute(w http.ResponseWriter, r *http.Request, limit int64) (executeBody, sessions.ExecuteRequest, error) {
	var b executeBody
	body, raw, err := readObject(w, r, limit)
	if err != nil {
		return b, sessions.ExecuteRequest{}, err
	}
	if err := decodeJSON(body, raw, &b); err != nil {
		return b, sessions.ExecuteRequest{}, err
	}
	req := sessions.ExecuteRequest{CorrelationID: b.CorrelationID, Inputs: b.Inputs}
	if b.ToolResults != nil || b.Approvals != nil || b.Elicitations != nil {
		var a answerBody
		if err := decodeJSON(body, raw, &a); err != nil {
			return b, req, err
		}
		req.Answer, err = a.answer(b.ToolResults != nil, b.Approvals != nil)
		if err == nil && b.Elicitations != nil {
			err = a.elicitations(req.Answer)
		}
		return b, req, err
	}
	var c sessions.ContentInput
	if err := decodeMembers(body, &c, member{"content", b.Content}); err != nil {
		return b, req, err
	}
	req.Content = c.Content
	return b, req, nil
}

// sent says whether a raw member was sent with a value other than null.
func sent(raw json.RawMessage) bool { return raw != nil && !bytes.Equal(raw, []byte("null")) }

// member is a member of a body: its name and its JSON as the body had it (nil: absent).
type member struct {
	name string
	raw  json.RawMessage
}

// decodeMembers decodes members of the body m (as readObject read it) into dst with the one
// decoder, as a body of their own; their JSON is taken as it is, not written again.
func decodeMembers(m map[string]any, dst any, members ...member) error {
	part := make(map[string]any, len(members))
	b := []byte{'{'}
	for _, mb := range members {
		if mb.raw == nil {
			continue
		}
		part[mb.name] = m[mb.name]
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(strconv.AppendQuote(b, mb.name), ':')
		b = append(b, mb.raw...)
	}
	return decodeJSON(part, append(b, '}'), dst)
}

// maxAnswerEntries bounds the entries of an answer's list.
const maxAnswerEntries = 128

// answerBody is an execute body that answers a paused execution: tool_results or approvals.
// Its other members executeBody has checked (content and inputs must be absent). Its shape
// errors are reported with its values' (answer), entry by entry, as the API always has.
type answerBody struct {
	Content        json.RawMessage    `json:"content"`
	CorrelationID  json.RawMessage    `json:"correlation_id"`
	Inputs         json.RawMessage    `json:"inputs"`
	ResponseFormat json.RawMessage    `json:"response_format"`
	Stream         json.RawMessage    `json:"stream"`
	Async          json.RawMessage    `json:"async"`
	ToolResults    []*toolResultJSON  `json:"tool_results"`
	Approvals      []*approvalJSON    `json:"approvals"`
	Elicitations   []*elicitationJSON `json:"elicitations"`
	unknown, wrong []domain.FieldError
}

// toolResultJSON is one tool_results entry: output is any JSON value, given to the model as
// its JSON when it is not a string.
type toolResultJSON struct {
	ToolCallID *string         `json:"tool_call_id"`
	Output     json.RawMessage `json:"output"`
	IsError    bool            `json:"is_error"`
}

// approvalJSON is one approvals entry.
type approvalJSON struct {
	ToolCallID *string `json:"tool_call_id"`
	Approve    *bool   `json:"approve"`
	Reason     string  `json:"reason"`
}

// TakeShape keeps the errors of the answer's shape for answer.
func (a *answerBody) TakeShape(unknown, wrong []domain.FieldError) {
	a.unknown, a.wrong = unknown, wrong
}

// answer is the answer the feature takes, or every error of the body's answer: by list (sent
// as hasResults and hasApprovals say, null or not an array when nil), then by entry (not an
// object; its unknown keys; its values), then content and inputs, which must be absent.
func (a *answerBody) answer(hasResults, hasApprovals bool) (*sessions.Answer, error) {
	out := &sessions.Answer{HasResults: hasResults, HasApprovals: hasApprovals}
	var errs []domain.FieldError
	add := func(f, msg string) { errs = append(errs, domain.FieldError{Field: f, Message: msg}) }
	// entries reports what is wrong with a list (false: its entries are not looked at), entry
	// what is wrong with an entry's shape (false: not an object).
	entries := func(name string, n int, null bool) bool {
		switch {
		case null:
			add(name, "must be an array of objects")
			return false
		case n == 0:
			add(name, "must answer at least one tool call")
		case n > maxAnswerEntries:
			add(name, fmt.Sprintf("must have at most %d entries", maxAnswerEntries))
			return false
		}
		return true
	}
	entry := func(at string, isObject bool) bool {
		if !isObject {
			add(at, "must be an object")
			return false
		}
		for _, e := range a.unknown {
			if strings.HasPrefix(e.Field, at+".") {
				errs = append(errs, e)
			}
		}
		return true
	}
	id := func(at string, s *string) string {
		if s == nil {
			add(at+".tool_call_id", "is required: a string")
			return ""
		}
		return *s
	}
	if hasResults && entries("tool_results", len(a.ToolResults), a.ToolResults == nil) {
		for i, e := range a.ToolResults {
			at := fmt.Sprintf("tool_results.%d", i)
			if !entry(at, e != nil) {
				continue
			}
			r := sessions.ToolResultInput{ToolCallID: id(at, e.ToolCallID), Output: outputText(e.Output), IsError: e.IsError}
			if a.wrongAt(at + ".is_error") {
				add(at+".is_error", "must be a boolean")
			}
			out.ToolResults = append(out.ToolResults, r)
		}
	}
	if hasApprovals && entries("approvals", len(a.Approvals), a.Approvals == nil) {
		for i, e := range a.Approvals {
			at := fmt.Sprintf("approvals.%d", i)
			if !entry(at, e != nil) {
				continue
			}
			d := sessions.ApprovalInput{ToolCallID: id(at, e.ToolCallID), Reason: e.Reason}
			if e.Approve == nil {
				add(at+".approve", "is required: true or false")
			} else {
				d.Approve = *e.Approve
			}
			if a.wrongAt(at + ".reason") {
				add(at+".reason", "must be a string")
			}
			out.Approvals = append(out.Approvals, d)
		}
	}
	if sent(a.Content) {
		add("content", "must be absent when the body answers pending tool calls")
	}
	if sent(a.Inputs) {
		add("inputs", "must be absent when the body answers pending tool calls: the waiting execution keeps the variables it started with")
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return out, nil
}

// wrongAt says whether the value at path was of the wrong JSON type (it is left out then).
func (a *answerBody) wrongAt(path string) bool {
	return slices.ContainsFunc(a.wrong, func(e domain.FieldError) bool { return e.Field == path })
}

// outputText is a tool result's output as the model is given it: a string as it is, any other
// value as its JSON (keys sorted, numbers as sent), null as "null", none as "".
func outputText(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil { // not reached: the decoder read it as JSON
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v) // a value decoded from JSON always encodes
	return string(b)
}
