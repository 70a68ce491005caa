package engine

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// The stored form of a checkpoint: the JSON an execution item keeps while its run waits. Its
// keys are the ones checkpoints were first written with (a hit's are its Go field names, as
// domain.Hit was encoded untagged); TestCheckpointFormat holds them to testdata/checkpoint.json,
// so that a run paused before a deploy resumes after it.

type checkpointRecord struct {
	Steps      int                    `json:"steps"`
	Runs       int                    `json:"runs"`
	Frontier   []string               `json:"frontier"`
	Messages   []messageRecord        `json:"messages"`
	Usage      usageRecord            `json:"usage"`
	StopReason string                 `json:"stop_reason"`
	Done       map[string]*doneRecord `json:"done,omitempty"`
	Paused     map[string]*nodeRecord `json:"paused"`
	Query      string                 `json:"query,omitempty"`
	Stored     int                    `json:"stored,omitempty"`
}

type messageRecord struct {
	ID        string           `json:"id"`
	Node      string           `json:"node"`
	Content   string           `json:"content"`
	Visible   bool             `json:"visible"`
	CreatedAt time.Time        `json:"created_at"`
	Citations []citationRecord `json:"citations,omitempty"`
	Retrieved bool             `json:"retrieved,omitempty"`
}

type doneRecord struct {
	Text       string           `json:"text"`
	StopReason string           `json:"stop_reason"`
	Usage      usageRecord      `json:"usage"`
	Finished   time.Time        `json:"finished"`
	Citations  []citationRecord `json:"citations,omitempty"`
	Retrieved  bool             `json:"retrieved,omitempty"`
}

type nodeRecord struct {
	Turns     []turnRecord            `json:"turns"`
	Asked     []partRecord            `json:"asked"`
	Results   []*toolResultRecord     `json:"results"`
	Checked   []bool                  `json:"checked"`
	Approved  map[string]bool         `json:"approved"`
	Waiting   map[string]string       `json:"waiting"`
	Servers   map[string]string       `json:"servers,omitempty"`
	ServerIDs map[string]string       `json:"server_ids,omitempty"`
	External  map[string]string       `json:"external,omitempty"`
	Iteration int                     `json:"iteration"`
	Last      string                  `json:"last"`
	Usage     usageRecord             `json:"usage"`
	Retrieval *retrievalRecord        `json:"retrieval,omitempty"`
	Elicit    map[string]elicitRecord `json:"elicit,omitempty"`
}

type retrievalRecord struct {
	Searched bool            `json:"searched"`
	Passages []passageRecord `json:"passages"`
}

type passageRecord struct {
	Index  int       `json:"index"`
	Hit    hitRecord `json:"hit"`
	KBName string    `json:"kb_name"`
}

// hitRecord keeps domain.Hit's Go field names: the keys it was first stored with.
type hitRecord struct {
	ID         string   `json:"ID"`
	KBID       string   `json:"KBID"`
	FileID     string   `json:"FileID"`
	FileName   string   `json:"FileName"`
	ChunkIndex int      `json:"ChunkIndex"`
	Text       string   `json:"Text"`
	Tags       []string `json:"Tags"`
	Score      float64  `json:"Score"`
}

type citationRecord struct {
	Index           int     `json:"index"`
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	FileID          string  `json:"file_id"`
	FileName        string  `json:"file_name"`
	ChunkIndex      int     `json:"chunk_index"`
	Score           float64 `json:"score"`
	Text            string  `json:"text"`
}

type usageRecord struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type turnRecord struct {
	Role  string       `json:"role"`
	Parts []partRecord `json:"parts"`
}

type partRecord struct {
	Type       string            `json:"type"`
	Text       string            `json:"text,omitempty"`
	Image      *mediaRecord      `json:"image,omitempty"`
	Document   *mediaRecord      `json:"document,omitempty"`
	ToolUse    *toolUseRecord    `json:"tool_use,omitempty"`
	ToolResult *toolResultRecord `json:"tool_result,omitempty"`
}

type mediaRecord struct {
	Format string `json:"format"`
	Name   string `json:"name,omitempty"`
	Data   []byte `json:"data"`
}

type toolUseRecord struct {
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

type toolResultRecord struct {
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// mapSlice converts each element of s with f, keeping nil apart from empty (they encode as
// null and [] respectively).
func mapSlice[T, U any](s []T, f func(T) U) []U {
	if s == nil {
		return nil
	}
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// mapValues converts each value of m with f, keeping nil apart from empty.
func mapValues[T, U any](m map[string]T, f func(T) U) map[string]U {
	if m == nil {
		return nil
	}
	out := make(map[string]U, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// optional converts *T with f, keeping nil.
func optional[T, U any](p *T, f func(T) U) *U {
	if p == nil {
		return nil
	}
	u := f(*p)
	return &u
}

func newCheckpointRecord(cp *checkpoint) *checkpointRecord {
	return &checkpointRecord{Steps: cp.Steps, Runs: cp.Runs, Frontier: cp.Frontier,
		Messages: mapSlice(cp.Messages, newMessageRecord), Usage: usageRecord(cp.Usage), StopReason: cp.StopReason,
		Done:   mapValues(cp.Done, func(d *savedDone) *doneRecord { return optional(d, newDoneRecord) }),
		Paused: mapValues(cp.Paused, func(n *nodeState) *nodeRecord { return optional(n, newNodeRecord) }),
		Query:  cp.Query, Stored: cp.Stored}
}

func (r *checkpointRecord) checkpoint() *checkpoint {
	return &checkpoint{Steps: r.Steps, Runs: r.Runs, Frontier: r.Frontier,
		Messages: mapSlice(r.Messages, messageRecord.message), Usage: domain.Usage(r.Usage), StopReason: r.StopReason,
		Done:   mapValues(r.Done, func(d *doneRecord) *savedDone { return optional(d, doneRecord.done) }),
		Paused: mapValues(r.Paused, func(n *nodeRecord) *nodeState { return optional(n, nodeRecord.state) }),
		Query:  r.Query, Stored: r.Stored}
}

func newMessageRecord(m savedMessage) messageRecord {
	return messageRecord{ID: m.ID, Node: m.Node, Content: m.Content, Visible: m.Visible, CreatedAt: m.CreatedAt,
		Citations: mapSlice(m.Citations, newCitationRecord), Retrieved: m.Retrieved}
}

func (r messageRecord) message() savedMessage {
	return savedMessage{ID: r.ID, Node: r.Node, Content: r.Content, Visible: r.Visible, CreatedAt: r.CreatedAt,
		Citations: mapSlice(r.Citations, citationRecord.citation), Retrieved: r.Retrieved}
}

func newDoneRecord(d savedDone) doneRecord {
	return doneRecord{Text: d.Text, StopReason: d.StopReason, Usage: usageRecord(d.Usage), Finished: d.Finished,
		Citations: mapSlice(d.Citations, newCitationRecord), Retrieved: d.Retrieved}
}

func (r doneRecord) done() savedDone {
	return savedDone{Text: r.Text, StopReason: r.StopReason, Usage: domain.Usage(r.Usage), Finished: r.Finished,
		Citations: mapSlice(r.Citations, citationRecord.citation), Retrieved: r.Retrieved}
}

func newNodeRecord(s nodeState) nodeRecord {
	return nodeRecord{Turns: mapSlice(s.Turns, newTurnRecord), Asked: mapSlice(s.Asked, newPartRecord),
		Results: mapSlice(s.Results, func(r *domain.ToolResult) *toolResultRecord {
			return optional(r, func(r domain.ToolResult) toolResultRecord { return toolResultRecord(r) })
		}),
		Checked: s.Checked, Approved: s.Approved, Waiting: s.Waiting, Servers: s.Servers, ServerIDs: s.ServerIDs,
		External: s.External, Iteration: s.Iteration, Last: s.Last, Usage: usageRecord(s.Usage),
		Retrieval: optional(s.Retrieval, newRetrievalRecord), Elicit: newElicitRecords(s.Elicit)}
}

func (r nodeRecord) state() nodeState {
	return nodeState{Turns: mapSlice(r.Turns, turnRecord.turn), Asked: mapSlice(r.Asked, partRecord.part),
		Results: mapSlice(r.Results, func(r *toolResultRecord) *domain.ToolResult {
			return optional(r, func(r toolResultRecord) domain.ToolResult { return domain.ToolResult(r) })
		}),
		Checked: r.Checked, Approved: r.Approved, Waiting: r.Waiting, Servers: r.Servers, ServerIDs: r.ServerIDs,
		External: r.External, Iteration: r.Iteration, Last: r.Last, Usage: domain.Usage(r.Usage),
		Retrieval: optional(r.Retrieval, retrievalRecord.retrieval), Elicit: elicitStates(r.Elicit)}
}

func newRetrievalRecord(s savedRetrieval) retrievalRecord {
	return retrievalRecord{Searched: s.Searched, Passages: mapSlice(s.Passages, func(p savedPassage) passageRecord {
		return passageRecord{Index: p.Index, Hit: hitRecord(p.Hit), KBName: p.KBName}
	})}
}

func (r retrievalRecord) retrieval() savedRetrieval {
	return savedRetrieval{Searched: r.Searched, Passages: mapSlice(r.Passages, func(p passageRecord) savedPassage {
		return savedPassage{Index: p.Index, Hit: domain.Hit(p.Hit), KBName: p.KBName}
	})}
}

func newCitationRecord(c domain.Citation) citationRecord { return citationRecord(c) }
func (r citationRecord) citation() domain.Citation       { return domain.Citation(r) }

func newTurnRecord(t domain.Turn) turnRecord {
	return turnRecord{Role: t.Role, Parts: mapSlice(t.Parts, newPartRecord)}
}

func (r turnRecord) turn() domain.Turn {
	return domain.Turn{Role: r.Role, Parts: mapSlice(r.Parts, partRecord.part)}
}

func newPartRecord(p domain.Part) partRecord {
	media := func(m domain.Media) mediaRecord { return mediaRecord(m) }
	return partRecord{Type: p.Type, Text: p.Text, Image: optional(p.Image, media), Document: optional(p.Document, media),
		ToolUse:    optional(p.ToolUse, func(u domain.ToolUse) toolUseRecord { return toolUseRecord(u) }),
		ToolResult: optional(p.ToolResult, func(r domain.ToolResult) toolResultRecord { return toolResultRecord(r) })}
}

func (r partRecord) part() domain.Part {
	media := func(m mediaRecord) domain.Media { return domain.Media(m) }
	return domain.Part{Type: r.Type, Text: r.Text, Image: optional(r.Image, media), Document: optional(r.Document, media),
		ToolUse:    optional(r.ToolUse, func(u toolUseRecord) domain.ToolUse { return domain.ToolUse(u) }),
		ToolResult: optional(r.ToolResult, func(t toolResultRecord) domain.ToolResult { return domain.ToolResult(t) })}
}
