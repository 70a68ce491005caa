package openaiserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// How a stateless OpenAI request maps onto sessions (docs/openai-api.md):
//
//   - A conversation that ends with a user message opens a new session on the agent and runs
//     that message in it; the messages before it are the run's history (ExecuteRequest.History:
//     given to the model, not stored).
//   - The function tools of the request are the run's own client tools (ExecuteRequest.
//     Functions). When the model calls one, the run pauses and the answer is an assistant
//     message with tool_calls whose ids name the paused session: call_<session id>_<call id>.
//   - A conversation that ends with tool messages answers those calls: their ids name the
//     session, whose paused run continues with the results (and the same history and tools).
//
// System and developer messages are not given to the agent: its own prompts are its
// instructions.

// msg is one message of a request's conversation, in either API's terms.
type msg struct {
	role   string // system, developer, user, assistant or tool
	text   string
	calls  []call
	callID string // a tool message's
}

// call is one function call of an assistant message: our id, the function, its JSON arguments.
type call struct {
	id, name, args string
}

// conversation is a request in the terms both APIs share.
type conversation struct {
	model  string
	msgs   []msg
	tools  []domain.FunctionTool
	inputs map[string]any
	// session is the session a Responses request goes on in (previous_response_id); "" for none.
	session string
	field   string  // the conversation's field, for errors: messages or input
	user    *string // the end user (the user field; nil none) a new session serves (docs/memory.md)
}

// callID is the id a paused session's call is given: it names the session, so that the tool
// message that answers it finds the run.
func callID(sessionID, id string) string { return "call_" + sessionID + "_" + id }

// parseCallID is the session and the engine's call id a callID names.
func parseCallID(id string) (sessionID, callID string, ok bool) {
	rest, found := strings.CutPrefix(id, "call_")
	if !found || len(rest) < 38 || rest[36] != '_' || !domain.IsID(rest[:36]) {
		return "", "", false
	}
	return rest[:36], rest[37:], true
}

// plan is the session a conversation runs in ("" for a new one on the agent) and the request
// it runs there.
func (c *conversation) plan() (string, sessions.ExecuteRequest, error) {
	// OpenAI's API has no way to ask the person an MCP server's question (elicitation): declined.
	req := sessions.ExecuteRequest{Functions: c.tools, Inputs: c.inputs, DeclineElicitations: true}
	invalid := func(f, m string) error { return domain.Invalid([]domain.FieldError{{Field: f, Message: m}}) }
	n := len(c.msgs)
	if n == 0 {
		return "", req, invalid(c.field, "must hold at least one message")
	}
	tail := n
	for tail > 0 && c.msgs[tail-1].role == "tool" {
		tail--
	}
	if tail < n {
		// The tool messages answer the calls of a paused run.
		sid := ""
		ans := &sessions.Answer{HasResults: true}
		for i := tail; i < n; i++ {
			s, id, ok := parseCallID(c.msgs[i].callID)
			if !ok {
				return "", req, invalid(fmt.Sprintf("%s.%d.tool_call_id", c.field, i), fmt.Sprintf("%q is not a tool call this API made (its ids start with call_ and name the paused session)", domain.Clip(c.msgs[i].callID, 80)))
			}
			if sid != "" && s != sid {
				return "", req, invalid(fmt.Sprintf("%s.%d.tool_call_id", c.field, i), "answers a call of another run than the messages before it")
			}
			sid = s
			ans.ToolResults = append(ans.ToolResults, sessions.ToolResultInput{ToolCallID: id, Output: c.msgs[i].text})
		}
		req.Answer = ans
		// The paused run's history is what came before the user message it answers.
		user := tail - 1
		for user >= 0 && c.msgs[user].role != "user" {
			user--
		}
		req.History = history(c.msgs[:max(user, 0)])
		if c.session != "" {
			req.History = nil // the stored conversation of the session gone on in
		}
		return sid, req, nil
	}
	last := c.msgs[n-1]
	if last.role != "user" {
		return "", req, invalid(fmt.Sprintf("%s.%d.role", c.field, n-1), `the last message must be the user's (or tool results answering the assistant's tool calls)`)
	}
	if strings.TrimSpace(last.text) == "" {
		return "", req, invalid(fmt.Sprintf("%s.%d.content", c.field, n-1), "must hold text")
	}
	req.Content = sessions.TextContent(last.text)
	req.History = history(c.msgs[:n-1])
	if c.session != "" {
		req.History = nil
	}
	return c.session, req, nil
}

// history is the conversation before a run's message as the agent is given it: user and
// assistant text, an assistant's calls and their results told as text, consecutive messages of
// one role joined; system and developer messages left out.
func history(msgs []msg) []domain.Message {
	names := map[string]string{}
	out := []domain.Message{}
	add := func(role, text string) {
		if text == "" {
			return
		}
		if k := len(out) - 1; k >= 0 && out[k].Role == role {
			out[k].Content += "\n\n" + text
			return
		}
		out = append(out, domain.Message{Role: role, Content: text})
	}
	for _, m := range msgs {
		switch m.role {
		case "user":
			add(domain.RoleUser, m.text)
		case "assistant":
			lines := []string{}
			if m.text != "" {
				lines = append(lines, m.text)
			}
			for _, c := range m.calls {
				names[c.id] = c.name
				lines = append(lines, fmt.Sprintf("[called %s %s]", c.name, c.args))
			}
			add(domain.RoleAssistant, strings.Join(lines, "\n"))
		case "tool":
			name := names[m.callID]
			if name == "" {
				name = "a tool"
			}
			add(domain.RoleUser, fmt.Sprintf("[result of %s: %s]", name, m.text))
		}
	}
	return out
}

// outcome is a finished run as both APIs answer it.
type outcome struct {
	sessionID, executionID string
	text                   string // the visible messages' text, joined
	calls                  []call // the calls the run waits for (our ids)
	finish                 string // stop, length, content_filter or tool_calls
	in, out                int
}

// outcomeOf reads a run's result. A run that waits for a person's approval of MCP calls cannot
// be answered by an OpenAI client: it is a conflict that names the session.
func outcomeOf(res *sessions.Result) (*outcome, error) {
	o := &outcome{sessionID: res.Session.ID, executionID: res.Execution.ID, finish: "stop",
		in: res.Execution.InputTokens, out: res.Execution.OutputTokens}
	var texts []string
	for _, m := range res.Messages {
		if m.Content != "" {
			texts = append(texts, m.Content)
		}
	}
	o.text = strings.Join(texts, "\n\n")
	switch res.Execution.StopReason {
	case domain.StopMaxTokens:
		o.finish = "length"
	case domain.StopFiltered:
		o.finish = "content_filter"
	}
	if p := res.Pending; p != nil {
		if p.Type != domain.PendingToolCalls {
			return nil, domain.Errorf(domain.KindConflict, "The agent's run waits for a person's approval of its MCP tool calls (session %s, execution %s): approve or deny them with POST /api/v1/runtime/%s/execute/", o.sessionID, o.executionID, o.sessionID)
		}
		o.finish = "tool_calls"
		for _, c := range p.ToolCalls {
			b, _ := json.Marshal(c.Arguments) // decoded from JSON, so it encodes
			o.calls = append(o.calls, call{id: callID(o.sessionID, c.ID), name: c.Name, args: string(b)})
		}
	}
	return o, nil
}

// run runs a conversation for the caller: checks, the agent, the budget, then the run in its
// session (a new one on the agent when the conversation starts one). The run is detached from the
// client as the execute's is. obs.OnStart, when set, is told "<session id>/<execution id>".
func (h *server) run(ctx context.Context, r *http.Request, c *conversation, obs sessions.Observer) (*sessions.Result, error) {
	p := api.Principal(r)
	if !p.Can(domain.ScopeSessionsWrite) {
		return nil, domain.ErrPermission
	}
	sid, req, err := c.plan()
	if err != nil {
		return nil, err
	}
	a, err := h.agent(ctx, p, c.model)
	if err != nil {
		return nil, err
	}
	// A run spends the model: a spent monthly budget refuses it before anything is read.
	if err := h.g.CheckBudget(ctx, p); err != nil {
		return nil, err
	}
	if sid == "" {
		sess, err := h.runs.OnAgentFor(ctx, p, a, c.user)
		if err != nil {
			return nil, err
		}
		sid = sess.ID
	} else {
		req.AgentID = a.ID // a call id naming a session of another model's run is refused
		if c.user != nil { // as is one naming another end user than the session's
			req.UserID, req.UserField = c.user, "user"
		}
	}
	if onStart := obs.OnStart; onStart != nil {
		obs.OnStart = func(id string) { onStart(sid + "/" + id) }
	}
	if onText := obs.OnText; onText != nil {
		hidden := hiddenNodes(a.SystemConfig)
		obs.OnText = func(node, delta string) {
			if !hidden[node] {
				onText(node, delta)
			}
		}
	}
	ctx, cancel := api.Detach(ctx)
	defer cancel()
	return h.runs.Execute(ctx, p, sid, req, obs)
}

// hiddenNodes are the nodes of an agent's configuration whose output is not shown
// (streaming_config.show_output_to_user false): their text is not streamed.
func hiddenNodes(cfg map[string]any) map[string]bool {
	hidden := map[string]bool{}
	nodes := []any{cfg}
	if list, ok := cfg["agents"].([]any); ok {
		nodes = list
	}
	for _, x := range nodes {
		n, _ := x.(map[string]any)
		sc, _ := n["streaming_config"].(map[string]any)
		if show, ok := sc["show_output_to_user"].(bool); ok && !show {
			name, _ := n["name"].(string)
			hidden[name] = true
		}
	}
	return hidden
}

// noObserver is the observer of a run that is not streamed.
var noObserver = sessions.Observer{}

// endUser reads a request's user field: an OpenAI client's identifier of its end user, which
// names the user whose memory the agent keeps. Absent, null or empty is none.
func endUser(x any) (*string, *domain.FieldError) {
	switch u := x.(type) {
	case nil:
		return nil, nil
	case string:
		if u == "" {
			return nil, nil
		}
		if !domain.ValidUserID(u) {
			return nil, &domain.FieldError{Field: "user", Message: domain.UserIDRule}
		}
		return &u, nil
	}
	return nil, &domain.FieldError{Field: "user", Message: "must be a string"}
}
