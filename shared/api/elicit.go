package api

import (
	"fmt"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// elicitationJSON is one elicitations entry: a person's answer to the question a pending MCP
// call's server asked.
type elicitationJSON struct {
	ToolCallID *string        `json:"tool_call_id"`
	Action     *string        `json:"action"`
	Content    map[string]any `json:"content"`
}

// elicitations adds the body's elicitations to out, or every error of their shape (the list,
// then each entry's: not an object, its unknown keys, its values); the feature checks the
// values against the pending calls.
func (a *answerBody) elicitations(out *sessions.Answer) error {
	out.HasElicitations = true
	var errs []domain.FieldError
	add := func(f, msg string) { errs = append(errs, domain.FieldError{Field: f, Message: msg}) }
	switch n := len(a.Elicitations); {
	case a.Elicitations == nil:
		add("elicitations", "must be an array of objects")
	case n == 0:
		add("elicitations", "must answer at least one tool call")
	case n > maxAnswerEntries:
		add("elicitations", fmt.Sprintf("must have at most %d entries", maxAnswerEntries))
	default:
		for i, e := range a.Elicitations {
			at := fmt.Sprintf("elicitations.%d", i)
			if e == nil {
				add(at, "must be an object")
				continue
			}
			for _, u := range a.unknown {
				if strings.HasPrefix(u.Field, at+".") {
					errs = append(errs, u)
				}
			}
			in := sessions.ElicitationInput{Content: e.Content}
			if e.ToolCallID == nil {
				add(at+".tool_call_id", "is required: a string")
			} else {
				in.ToolCallID = *e.ToolCallID
			}
			switch {
			case a.wrongAt(at + ".action"):
				add(at+".action", `must be "accept", "decline" or "cancel"`)
			case e.Action == nil:
				add(at+".action", `is required: "accept", "decline" or "cancel"`)
			default:
				in.Action = *e.Action
			}
			if a.wrongAt(at + ".content") {
				add(at+".content", "must be an object of the form's fields")
			}
			out.Elicitations = append(out.Elicitations, in)
		}
	}
	if len(errs) > 0 {
		return domain.Invalid(errs)
	}
	return nil
}
