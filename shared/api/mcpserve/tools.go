package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
)

// agentTool is an agent as a tool: its MCP description and what a call needs.
type agentTool struct {
	tool  *mcp.Tool
	agent *domain.Agent
	// message is the user message of a call that gives none ("" when the call must give one).
	message string
	vars    map[string]bool // the prompt's variables, which are properties of the input
}

// agentTools are the agents as tools, in the order of agents. A tool is named by its agent's
// key, or by the agent's system_config.mcp.tool_name when that is a valid name that no other
// tool of the list (nor a name of reserved) takes: the keys are served first, so a chosen name
// never hides an agent, and of two agents choosing one name the older has it, so a new agent
// never takes a name from one that clients already call.
func agentTools(agents []*domain.Agent, reserved map[string]bool) []*agentTool {
	taken := map[string]bool{}
	maps.Copy(taken, reserved)
	for _, a := range agents {
		taken[a.AgentKey] = true
	}
	names := map[*domain.Agent]string{}
	byAge := slices.Clone(agents)
	slices.SortStableFunc(byAge, func(a, b *domain.Agent) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, a := range byAge {
		// An invalid name is refused when the configuration is saved; one stored before is ignored.
		if n := domain.MCPServeOf(a.SystemConfig).ToolName; n != a.AgentKey && domain.ValidToolName(n) && !taken[n] {
			names[a] = n
			taken[n] = true
		}
	}
	out := make([]*agentTool, 0, len(agents))
	for _, a := range agents {
		name := a.AgentKey
		if n, ok := names[a]; ok {
			name = n
		}
		t := &agentTool{agent: a, message: domain.MCPServeOf(a.SystemConfig).DefaultMessage, vars: map[string]bool{}}
		if g, errs := domain.ParseConfig(a.SystemConfig, nil, ""); len(errs) == 0 {
			for _, v := range engine.Variables(g) {
				t.vars[v] = true
			}
		}
		t.tool = &mcp.Tool{Name: name, Title: a.Name, Description: agentDescription(a), InputSchema: t.schema()}
		out = append(out, t)
	}
	return out
}

// Names of the inputs every agent's tool has; a prompt variable of one of these names is given
// in inputs.
const (
	argMessage   = "message"
	argSessionID = "session_id"
	argInputs    = "inputs"
	argUserID    = "user_id"
)

// schema is the tool's input: the message (optional when the agent has a default one), an
// optional session to go on in, the end user a new session serves, each of the prompt's
// variables, and inputs for them all.
func (t *agentTool) schema() map[string]any {
	msg := "The user message the agent answers."
	if t.message != "" {
		msg += fmt.Sprintf(" When absent: %q.", domain.Clip(t.message, 200))
	}
	props := map[string]any{
		argMessage:   map[string]any{"type": "string", "description": msg},
		argSessionID: map[string]any{"type": "string", "description": "A session of this agent to continue (from an earlier result's session_id); a new session when absent."},
		argInputs:    map[string]any{"type": "object", "description": "Values of the prompt's {{ variables.NAME }}, beside those given as their own properties."},
		argUserID:    map[string]any{"type": "string", "description": "The end user a new session serves (1 to 256 characters), whose memory an agent with memory keeps; a continued session must name its own user or none."},
	}
	if t.vars[argUserID] {
		u := props[argUserID].(map[string]any)
		u["description"] = u["description"].(string) + " Also the value of {{ variables.user_id }} in the agent's prompt."
	}
	var required []string
	if t.message == "" {
		required = append(required, argMessage)
	}
	for v := range t.vars {
		if _, ok := props[v]; !ok {
			props[v] = map[string]any{"description": fmt.Sprintf("Value of {{ variables.%s }} in the agent's prompt: a string as it is, any other JSON value as JSON. Needed unless the session already holds it.", v)}
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if required != nil {
		s["required"] = required
	}
	return s
}

func agentDescription(a *domain.Agent) string {
	if d, _ := a.SystemConfig["description"].(string); d != "" {
		return d
	}
	return fmt.Sprintf("Runs the agent %q and answers its reply.", a.Name)
}

// agentCall is a call's arguments.
type agentCall struct {
	message, sessionID string
	inputs             map[string]any
	userID             *string // the end user (nil none)
}

// args reads a call's arguments: message, session_id, user_id, inputs, and the prompt's
// variables as their own properties (which win over the same names in inputs). Other names are
// ignored. An empty user_id is none, as the OpenAI API's empty user is; a prompt variable named
// user_id is given it too, as before user_id named the end user.
func (t *agentTool) args(raw json.RawMessage) (agentCall, error) {
	c := agentCall{message: t.message}
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return c, domain.Invalid([]domain.FieldError{{Field: "arguments", Message: "must be an object"}})
		}
	}
	str := func(name string, into *string) error {
		v, ok := m[name]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, into); err != nil {
			return domain.Invalid([]domain.FieldError{{Field: name, Message: "must be a string"}})
		}
		return nil
	}
	if err := str(argMessage, &c.message); err != nil {
		return c, err
	}
	if err := str(argSessionID, &c.sessionID); err != nil {
		return c, err
	}
	var user string
	if err := str(argUserID, &user); err != nil {
		return c, err
	}
	if user != "" {
		if !domain.ValidUserID(user) {
			return c, domain.Invalid([]domain.FieldError{{Field: argUserID, Message: domain.UserIDRule}})
		}
		c.userID = &user
	}
	if strings.TrimSpace(c.message) == "" {
		c.message = t.message
	}
	if strings.TrimSpace(c.message) == "" {
		return c, domain.Invalid([]domain.FieldError{{Field: argMessage, Message: "is required"}})
	}
	if v, ok := m[argInputs]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &c.inputs); err != nil {
			return c, domain.Invalid([]domain.FieldError{{Field: argInputs, Message: "must be an object"}})
		}
	}
	for name, v := range m {
		if !t.vars[name] || name == argMessage || name == argSessionID || name == argInputs {
			continue
		}
		var x any
		_ = json.Unmarshal(v, &x) // a value of an object that decoded
		if c.inputs == nil {
			c.inputs = map[string]any{}
		}
		c.inputs[name] = x
	}
	return c, nil
}

// call runs an agent: on a new session from its stored configuration, or on to session_id. A
// failure is the tool's error result, in the API's error type and message. The run's progress
// goes to a client that asked for it.
func (h *mcpServe) call(ctx context.Context, r *http.Request, p domain.Principal, t *agentTool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var obs sessions.Observer
	if token := req.Params.GetProgressToken(); token != nil {
		pr := startProgress(ctx, req.Session, token)
		defer pr.stop() // every notification is sent before the answer
		obs = pr.observer()
	}
	res, err := h.run(ctx, p, t, req.Params.Arguments, obs)
	if err != nil {
		return errorResult(h.g, r, err)
	}
	var text []string
	for _, m := range res.Messages {
		text = append(text, m.Content)
	}
	out := map[string]any{"session_id": res.Session.ID, "execution_id": res.Execution.ID, "status": res.Execution.Status}
	if n := len(res.Messages); n > 0 && res.Messages[n-1].Citations != nil {
		out["citations"] = api.CitationsView(res.Messages[n-1].Citations)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(text, "\n\n")}}, StructuredContent: out}
}

// errorResult is a failed call's result: the API's error type and message.
func errorResult(g *api.Group, r *http.Request, err error) *mcp.CallToolResult {
	typ, msg := g.ErrorOf(r, err)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: typ + ": " + msg}},
		StructuredContent: map[string]any{"error": map[string]any{"type": typ, "message": msg}}}
}

func (h *mcpServe) run(ctx context.Context, p domain.Principal, t *agentTool, raw json.RawMessage, obs sessions.Observer) (*sessions.Result, error) {
	if !p.Can(domain.ScopeSessionsWrite) {
		return nil, domain.ErrPermission
	}
	in, err := t.args(raw)
	if err != nil {
		return nil, err
	}
	// A run spends the model: a spent monthly budget refuses it before anything is read.
	if err := h.g.CheckBudget(ctx, p); err != nil {
		return nil, err
	}
	sid := in.sessionID
	if sid == "" {
		sess, err := h.runs.OnAgentFor(ctx, p, t.agent, in.userID)
		if err != nil {
			return nil, err
		}
		sid = sess.ID
	}
	// As the execute does, the run is detached from the client and stops before the deadline.
	ctx, cancel := api.Detach(ctx)
	defer cancel()
	// A stateless MCP answer cannot carry a question back to the person: an MCP server's
	// question during the run (elicitation) is declined, not a pause no one could answer.
	// The tool runs its own agent: a session opened from another agent (or inline) is refused.
	req := sessions.ExecuteRequest{Content: sessions.TextContent(in.message), Inputs: in.inputs,
		DeclineElicitations: true, AgentID: t.agent.ID}
	if in.sessionID != "" && in.userID != nil {
		// A session's user never changes: a call naming another user than the session's is
		// refused, so that no one reaches a user's memory through a session of someone else.
		req.UserID, req.UserField = in.userID, argUserID
	}
	return h.runs.Execute(ctx, p, sid, req, obs)
}
