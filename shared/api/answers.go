package api

import (
	"encoding/json"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// readAnswer reads the tool_results or approvals of an execute body that continues a paused
// execution; nil when the body has neither. Each entry's fields are checked by their dotted
// path; an output that is not a string is given to the model as its JSON.
func readAnswer(body map[string]any) (*sessions.Answer, error) {
	tr, hasResults := body["tool_results"]
	ap, hasApprovals := body["approvals"]
	if !hasResults && !hasApprovals {
		return nil, nil
	}
	a := &sessions.Answer{HasResults: hasResults, HasApprovals: hasApprovals}
	var errs []domain.FieldError
	add := func(f, format string, args ...any) {
		errs = append(errs, domain.FieldError{Field: f, Message: fmt.Sprintf(format, args...)})
	}
	entries := func(x any, name string, known ...string) []map[string]any {
		list, ok := x.([]any)
		if !ok {
			add(name, "must be an array of objects")
			return nil
		}
		if len(list) == 0 {
			add(name, "must answer at least one tool call")
		}
		if len(list) > 128 {
			add(name, "must have at most 128 entries")
			return nil
		}
		out := make([]map[string]any, 0, len(list))
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				add(fmt.Sprintf("%s.%d", name, i), "must be an object")
				out = append(out, nil)
				continue
			}
			for _, fe := range unknownFields(m, known) {
				fe.Field = fmt.Sprintf("%s.%d.%s", name, i, fe.Field)
				errs = append(errs, fe)
			}
			out = append(out, m)
		}
		return out
	}
	id := func(m map[string]any, f string) string {
		s, ok := m["tool_call_id"].(string)
		if !ok {
			add(f+".tool_call_id", "is required: a string")
		}
		return s
	}
	if hasResults {
		for i, m := range entries(tr, "tool_results", "tool_call_id", "output", "is_error") {
			if m == nil {
				continue
			}
			f := fmt.Sprintf("tool_results.%d", i)
			r := sessions.ToolResultInput{ToolCallID: id(m, f)}
			switch o := m["output"].(type) {
			case string:
				r.Output = o
			case nil:
				if _, present := m["output"]; present {
					r.Output = "null"
				}
			default:
				b, err := json.Marshal(o)
				if err != nil {
					add(f+".output", "must be a string or JSON value")
				}
				r.Output = string(b)
			}
			if x, ok := m["is_error"]; ok && x != nil {
				b, ok := x.(bool)
				if !ok {
					add(f+".is_error", "must be a boolean")
				}
				r.IsError = b
			}
			a.ToolResults = append(a.ToolResults, r)
		}
	}
	if hasApprovals {
		for i, m := range entries(ap, "approvals", "tool_call_id", "approve", "reason") {
			if m == nil {
				continue
			}
			f := fmt.Sprintf("approvals.%d", i)
			d := sessions.ApprovalInput{ToolCallID: id(m, f)}
			b, ok := m["approve"].(bool)
			if !ok {
				add(f+".approve", "is required: true or false")
			}
			d.Approve = b
			if x, ok := m["reason"]; ok && x != nil {
				s, ok := x.(string)
				if !ok {
					add(f+".reason", "must be a string")
				}
				d.Reason = s
			}
			a.Approvals = append(a.Approvals, d)
		}
	}
	if c, ok := body["content"]; ok && c != nil {
		add("content", "must be absent when the body answers pending tool calls")
	}
	if in, ok := body["inputs"]; ok && in != nil {
		add("inputs", "must be absent when the body answers pending tool calls: the waiting execution keeps the variables it started with")
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	return a, nil
}
