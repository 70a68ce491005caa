package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// An MCP server may ask a person for input in the middle of a call (elicitation). A run cannot
// hold the call open until the person answers (the answer comes in another request, perhaps to
// another process), so the question is recorded and the server is told "cancel"; whatever the
// server then answers is set aside, the run pauses (PauseElicitation) with the question, and on
// the person's answer the call is made again, its elicitor answering that same question (the
// same message and schema) with the person's answer at once. A run that cannot ask
// (Run.DeclineElicitations) declines every question and the call's result says so.

// PauseElicitation is the pause of MCP calls whose server asked a person for input.
const PauseElicitation = domain.PendingElicitation

// EventElicitation records a question of a server and what became of it: data action
// ("accept", "decline" or "cancel") and, when the run declined it itself, reason.
const EventElicitation = "elicitation"

// MaxElicitations bounds the questions one call may pause for; past them its server's
// questions are declined.
const MaxElicitations = 5

// elicitState is what one MCP call has of its server's questions: the one it waits on, and
// the answers given so far (a call made again may ask them again, and then more).
type elicitState struct {
	Asked *domain.Elicitation
	Given []givenAnswer
}

// givenAnswer is a person's answer to the question of key.
type givenAnswer struct {
	Key    string
	Answer domain.ElicitAnswer
}

// callElicitor answers the questions of one call: those answered before from the answers, the
// first new one by recording it (the call then waits for a person) and telling the server
// "cancel", any other by declining.
type callElicitor struct {
	given  []givenAnswer
	canAsk bool

	mu       sync.Mutex
	asked    *domain.Elicitation
	declined []string // messages of the questions declined because no one can answer
}

func (ce *callElicitor) Elicit(_ context.Context, q domain.Elicitation) domain.ElicitAnswer {
	key := q.Key()
	for _, g := range ce.given {
		if g.Key == key {
			return g.Answer
		}
	}
	ce.mu.Lock()
	defer ce.mu.Unlock()
	b, _ := json.Marshal(q.Schema)
	switch {
	case ce.asked != nil:
		return domain.ElicitAnswer{Action: domain.ElicitCancel} // the call is made again anyway
	case ce.canAsk && len(ce.given) < MaxElicitations && len(b) <= domain.MaxElicitSchemaBytes:
		q.Message = domain.Clip(q.Message, 2000)
		ce.asked = &q
		return domain.ElicitAnswer{Action: domain.ElicitCancel}
	}
	ce.declined = append(ce.declined, domain.Clip(q.Message, 200))
	return domain.ElicitAnswer{Action: domain.ElicitDecline}
}

// elicitor is the elicitor of call id of st.
func (c *call) elicitor(st *nodeState, id string) *callElicitor {
	ce := &callElicitor{canAsk: !c.em.declineAsk}
	if es := st.Elicit[id]; es != nil {
		ce.given = es.Given
	}
	return ce
}

// asked records, after call i ran, the question it waits on (true: its result is set aside);
// questions declined for want of a person are said in out, the result the model sees.
func (c *call) asked(st *nodeState, u *domain.ToolUse, ce *callElicitor, out string) (string, bool) {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	meta := c.meta(u.Name)
	if ce.asked != nil {
		if st.Elicit == nil {
			st.Elicit = map[string]*elicitState{}
		}
		es := st.Elicit[u.ID]
		if es == nil {
			es = &elicitState{}
			st.Elicit[u.ID] = es
		}
		es.Asked = ce.asked
		st.Waiting[u.ID] = PauseElicitation
		if st.Servers == nil {
			st.Servers = map[string]string{}
		}
		st.Servers[u.ID] = meta.Server
		return out, true
	}
	for _, m := range ce.declined {
		c.em.send(Event{Type: EventElicitation, Node: c.node.Name, Data: toolData(meta, map[string]any{
			"tool": u.Name, "tool_use_id": u.ID, "action": domain.ElicitDecline, "message": m,
			"reason": "no person can answer in this run",
		})})
		out += fmt.Sprintf("\n\n[The MCP server asked for input (%q); no person can answer in this run, so it was declined.]", m)
	}
	return out, false
}

// answerElicitation applies a person's answer to the question call u waits on: the call is
// made again with it.
func (c *call) answerElicitation(st *nodeState, u *domain.ToolUse, a domain.ElicitAnswer) {
	es := st.Elicit[u.ID]
	if es == nil || es.Asked == nil {
		return
	}
	if a.Action == domain.ElicitAccept {
		a.Content = domain.ElicitDefaults(es.Asked.Schema, a.Content)
	} else {
		a.Content = nil
	}
	es.Given = append(es.Given, givenAnswer{Key: es.Asked.Key(), Answer: a})
	es.Asked = nil
	c.em.send(Event{Type: EventElicitation, Node: c.node.Name, Data: toolData(c.meta(u.Name), map[string]any{
		"tool": u.Name, "tool_use_id": u.ID, "action": a.Action,
	})})
}

// elicitRecord is the stored form of an elicitState.
type elicitRecord struct {
	Asked *elicitationRecord `json:"asked,omitempty"`
	Given []givenRecord      `json:"given,omitempty"`
}

type elicitationRecord struct {
	Message string         `json:"message"`
	Schema  map[string]any `json:"schema,omitempty"`
}

type givenRecord struct {
	Key     string         `json:"key"`
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

func newElicitRecords(m map[string]*elicitState) map[string]elicitRecord {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]elicitRecord, len(m))
	for id, es := range m {
		r := elicitRecord{}
		if es.Asked != nil {
			r.Asked = &elicitationRecord{Message: es.Asked.Message, Schema: es.Asked.Schema}
		}
		for _, g := range es.Given {
			r.Given = append(r.Given, givenRecord{Key: g.Key, Action: g.Answer.Action, Content: g.Answer.Content})
		}
		out[id] = r
	}
	return out
}

func elicitStates(m map[string]elicitRecord) map[string]*elicitState {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*elicitState, len(m))
	for id, r := range m {
		es := &elicitState{}
		if r.Asked != nil {
			es.Asked = &domain.Elicitation{Message: r.Asked.Message, Schema: r.Asked.Schema}
		}
		for _, g := range r.Given {
			es.Given = append(es.Given, givenAnswer{Key: g.Key, Answer: domain.ElicitAnswer{Action: g.Action, Content: g.Content}})
		}
		out[id] = es
	}
	return out
}
