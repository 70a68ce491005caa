package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// A run pauses when a react_agent's model calls a tool the client runs (a function tool) or an
// MCP tool that needs a person's approval. The run's state is then a Checkpoint the caller
// stores; Resume continues it with the answers. Nothing of a paused run is lost: the nodes of
// the step that finished keep their outcome, and a paused node continues its loop where it
// stopped, with the results of the calls that already ran.

// Kinds of pause (required_action.type).
const (
	PauseToolCalls = domain.PendingToolCalls // function tools: the client runs them
	PauseApproval  = domain.PendingApproval  // MCP calls that need a person's approval
)

// EventRequiresAction ends the events of a run that paused; EventApproval records a person's
// answer to an approval, EventClientResult a client's result of a function call.
const (
	EventRequiresAction = "requires_action"
	EventApproval       = "approval"
)

// Pending is what a paused run waits for.
type Pending struct {
	Type  string        // PauseToolCalls or PauseApproval
	Calls []PendingCall // the calls to answer, every one of them
	// Text holds, by node, the text the model wrote before the calls it is waiting on.
	Text map[string]string
	// Checkpoint is the run's state for Resume, opaque to the caller.
	Checkpoint []byte
}

// PendingCall is one tool call a paused run waits on.
type PendingCall = domain.PendingToolCall

// Answers continue a paused run: a result for each function call, a decision for each approval,
// an answer to each call's question (elicitation).
type Answers struct {
	Results      map[string]domain.ToolResult   // by tool call id
	Approvals    map[string]Decision            // by tool call id
	Elicitations map[string]domain.ElicitAnswer // by tool call id
}

// Decision is a person's answer to an approval.
type Decision struct {
	Approve bool
	Reason  string
}

// checkpoint is a paused run's state; checkpointRecord (checkpoint.go) is the form it is stored in.
type checkpoint struct {
	Steps      int
	Runs       int
	Frontier   []string
	Messages   []savedMessage // of the steps before the paused one
	Usage      domain.Usage
	StopReason string
	Done       map[string]*savedDone // nodes of the step that finished
	Paused     map[string]*nodeState // nodes of the step that wait
	Query      string                // what an llm_agent searches for
	Stored     int                   // messages the caller already stored
}

type savedMessage struct {
	ID        string
	Node      string
	Content   string
	Visible   bool
	CreatedAt time.Time
	Citations []domain.Citation
	Retrieved bool // Citations non-nil
}

type savedDone struct {
	Text       string
	StopReason string
	Usage      domain.Usage
	Finished   time.Time
	Citations  []domain.Citation
	Retrieved  bool
}

// nodeState is a paused react node: its own turns after the step's shared ones, the turn whose
// calls wait, and what each call has so far.
type nodeState struct {
	Turns    []domain.Turn // the node's exchanges before the waiting turn
	Asked    []domain.Part // the assistant turn that made the calls
	Results  []*domain.ToolResult
	Checked  []bool            // tool_call events sent, arguments checked
	Approved map[string]bool   // approvals given so far
	Waiting  map[string]string // call id → PauseToolCalls or PauseApproval
	Servers  map[string]string // call id → MCP server, for approvals
	// ServerIDs maps a call waiting for approval to its server's record (ToolMeta.ServerID): the
	// approval is for that record, not for whatever server bears its name when it is given.
	ServerIDs map[string]string
	// External maps a call id to the id the client answers, when it differs: "<node>/<id>" for
	// an id that another paused node of the step also used.
	External  map[string]string
	Iteration int    // the model call that asked
	Last      string // the last text the model wrote
	Usage     domain.Usage
	Retrieval *savedRetrieval
	// Elicit holds, by call id, the questions of MCP calls' servers: the one a call waits on,
	// the answers given so far.
	Elicit map[string]*elicitState
}

type savedRetrieval struct {
	Searched bool
	Passages []savedPassage
}

type savedPassage struct {
	Index  int
	Hit    domain.Hit
	KBName string
}

// waitApproval records that call id waits for a person's approval of a call of the tool meta
// describes, made to meta's server record.
func (s *nodeState) waitApproval(id string, meta domain.ToolMeta) {
	s.Waiting[id] = PauseApproval
	if s.Servers == nil {
		s.Servers = map[string]string{}
	}
	s.Servers[id] = meta.Server
	if s.ServerIDs == nil {
		s.ServerIDs = map[string]string{}
	}
	s.ServerIDs[id] = meta.ServerID
}

// replaced reports whether the tool now bound for call id (meta) is not the one its approval was
// asked for: its MCP server was deleted (the tool is gone), or deleted and registered again
// under the same name (another record). A checkpoint written before approvals recorded the
// record knows the server by name only.
func (s *nodeState) replaced(id string, meta domain.ToolMeta) bool {
	if meta.Kind != domain.ToolKindMCP {
		return true
	}
	if want, ok := s.ServerIDs[id]; ok {
		return meta.ServerID != want
	}
	return meta.Server != s.Servers[id]
}

// goneTools stand in, in a resumed node, for the tools of the calls waiting for approval that
// are no longer bound: their MCP server was deleted since the pause, or (denied) the answering
// key may not bind MCP servers. The conversation still holds those calls, and a provider may
// refuse tool calls in it when no tool is offered (Bedrock's Converse does). Calling one is an
// error result. bound reports whether a name is bound.
func (s *nodeState) goneTools(bound func(name string) bool, denied bool) []domain.Tool {
	var out []domain.Tool
	seen := map[string]bool{}
	for _, u := range s.uses() {
		server, asked := s.Servers[u.ID]
		if !asked || seen[u.Name] || bound(u.Name) {
			continue
		}
		seen[u.Name] = true
		out = append(out, &goneTool{name: u.Name, server: server, denied: denied})
	}
	return out
}

// goneTool is the tool of a call that waited for approval, in a resumed run that can no longer
// bind it.
type goneTool struct {
	name, server string
	denied       bool // the answering key may not bind MCP servers; else the server was deleted
}

func (t *goneTool) Spec() domain.ToolSpec {
	return domain.ToolSpec{Name: t.name, Description: "Unavailable: " + t.why() + ". Do not call it.",
		Schema: map[string]any{"type": "object"}}
}

func (t *goneTool) Meta() domain.ToolMeta {
	return domain.ToolMeta{Kind: domain.ToolKindMCP, Server: t.server}
}

func (t *goneTool) Call(context.Context, map[string]any) (string, error) {
	return "", fmt.Errorf("tool %q is unavailable: %s", t.name, t.why())
}

func (t *goneTool) why() string {
	if t.denied {
		return MCPDenied
	}
	return fmt.Sprintf("its MCP server %q was deleted", t.server)
}

// notMade is the error result of an approved call that is not made (replaced): its server was
// deleted or replaced since the approval was asked, or the answering key may not bind MCP
// servers.
func (c *call) notMade(st *nodeState, u *domain.ToolUse) string {
	if g, ok := c.tools[u.Name].(*goneTool); ok && g.denied {
		return "The call was not made: " + MCPDenied
	}
	return fmt.Sprintf("The MCP server %q was deleted or replaced since the approval was asked; the call was not made.", st.Servers[u.ID])
}

// external is the id the client answers call id with.
func (s *nodeState) external(id string) string {
	if e, ok := s.External[id]; ok {
		return e
	}
	return id
}

// uses returns the tool uses of the waiting turn, in order.
func (s *nodeState) uses() []*domain.ToolUse {
	var out []*domain.ToolUse
	for _, p := range s.Asked {
		if p.Type == domain.PartToolUse && p.ToolUse != nil {
			out = append(out, p.ToolUse)
		}
	}
	return out
}

// text is what the model wrote in the waiting turn besides its calls.
func (s *nodeState) text() string {
	var t string
	for _, p := range s.Asked {
		if p.Type == domain.PartText {
			t += p.Text
		}
	}
	return t
}

// maxSavedResult bounds each tool result kept in a checkpoint: a checkpoint is stored in one
// DynamoDB item beside the execution's events.
const maxSavedResult = 16 << 10

// MaxCheckpointBytes bounds a checkpoint's JSON.
const MaxCheckpointBytes = 96 << 10

// encode strips what a checkpoint must not carry (media bytes, long tool outputs) and encodes it.
func (cp *checkpoint) encode() ([]byte, error) {
	for _, ns := range cp.Paused {
		for i := range ns.Turns {
			ns.Turns[i].Parts = slimParts(ns.Turns[i].Parts)
		}
		for _, r := range ns.Results {
			if r != nil {
				r.Content = domain.Clip(r.Content, maxSavedResult)
			}
		}
	}
	b, err := json.Marshal(newCheckpointRecord(cp))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(b) > MaxCheckpointBytes {
		return nil, domain.Errorf(domain.KindTooLarge, "The run cannot pause: its state is over %d bytes (tool outputs too large)", MaxCheckpointBytes)
	}
	return b, nil
}

func slimParts(parts []domain.Part) []domain.Part {
	out := make([]domain.Part, 0, len(parts))
	for _, p := range parts {
		switch {
		case p.Type == domain.PartImage || p.Type == domain.PartDocument:
			out = append(out, domain.Part{Type: domain.PartText, Text: "[an attachment, not kept while the run waited]"})
		case p.Type == domain.PartToolResult && p.ToolResult != nil:
			r := *p.ToolResult
			r.Content = domain.Clip(r.Content, maxSavedResult)
			p.ToolResult = &r
			out = append(out, p)
		default:
			out = append(out, p)
		}
	}
	return out
}

func decodeCheckpoint(b []byte) (*checkpoint, error) {
	var r checkpointRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(r.Paused) == 0 {
		return nil, fmt.Errorf("checkpoint: no paused node")
	}
	return r.checkpoint(), nil
}

func (r *retrieval) save() *savedRetrieval {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &savedRetrieval{Searched: r.searched}
	for _, p := range r.passages {
		s.Passages = append(s.Passages, savedPassage{Index: p.index, Hit: p.hit, KBName: p.kbName})
	}
	return s
}

func (r *retrieval) restore(s *savedRetrieval) {
	if r == nil || s == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.searched = s.Searched
	for _, p := range s.Passages {
		r.passages = append(r.passages, passage{index: p.Index, hit: p.Hit, kbName: p.KBName})
		r.byKey[hitKey(p.Hit)] = p.Index
	}
}

func (d *savedDone) outcome() *outcome {
	cites := d.Citations
	if d.Retrieved && cites == nil {
		cites = []domain.Citation{}
	}
	return &outcome{text: d.Text, stopReason: d.StopReason, usage: d.Usage, finished: d.Finished, citations: cites}
}
