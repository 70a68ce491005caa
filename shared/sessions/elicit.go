package sessions

import (
	"encoding/json"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// MaxElicitContentBytes bounds the JSON of one accepted form.
const MaxElicitContentBytes = 16 << 10

// ElicitationInput is one elicitations entry: a person's answer to the question a pending MCP
// call's server asked (required_action.type "elicitation").
type ElicitationInput struct {
	ToolCallID string `json:"tool_call_id"`
	// Action is "accept" (the form is in Content), "decline" or "cancel".
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// answerList is the list of an execute body that answers a pending action of type typ.
func answerList(typ string) string {
	switch typ {
	case domain.PendingApproval:
		return "approvals"
	case domain.PendingElicitation:
		return "elicitations"
	}
	return "tool_results"
}

// checkElicitations validates the elicitations entries on their own; seen holds the call ids
// of the answer's other entries.
func (a *Answer) checkElicitations(seen map[string]bool) []domain.FieldError {
	var errs []domain.FieldError
	add := func(f, m string) { errs = append(errs, domain.FieldError{Field: f, Message: m}) }
	for i, e := range a.Elicitations {
		f := fmt.Sprintf("elicitations.%d", i)
		if m := callIDError(e.ToolCallID, seen); m != "" {
			add(f+".tool_call_id", m)
		}
		switch e.Action {
		case domain.ElicitAccept:
			if b, _ := json.Marshal(e.Content); len(b) > MaxElicitContentBytes {
				add(f+".content", fmt.Sprintf("must be at most %d bytes of JSON", MaxElicitContentBytes))
			}
		case domain.ElicitDecline, domain.ElicitCancel:
			if e.Content != nil {
				add(f+".content", "must be absent unless the action is accept")
			}
		default:
			add(f+".action", `must be "accept", "decline" or "cancel"`)
		}
	}
	return errs
}

// matchElicitations checks each accepted form against the schema its call's server requested,
// once the schema's defaults are applied (as they will be for the server).
func (a *Answer) matchElicitations(p *domain.PendingAction) []domain.FieldError {
	if !a.HasElicitations || p.Type != domain.PendingElicitation {
		return nil
	}
	schemas := map[string]map[string]any{}
	for _, c := range p.ToolCalls {
		if c.Elicitation != nil {
			schemas[c.ID] = c.Elicitation.Schema
		}
	}
	var errs []domain.FieldError
	for i, e := range a.Elicitations {
		schema, ok := schemas[e.ToolCallID]
		if !ok || e.Action != domain.ElicitAccept {
			continue
		}
		errs = append(errs, domain.CheckElicitContent(fmt.Sprintf("elicitations.%d.content", i), schema, domain.ElicitDefaults(schema, e.Content))...)
	}
	return errs
}
