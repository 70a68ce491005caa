package a2aserve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

const (
	testSession = "0b6f1d2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
	testExec    = "019a0000-0000-7000-8000-000000000001"
)

func run(t *testing.T, items ...any) (events []a2a.Event, final bool, err error) {
	t.Helper()
	s := &streamer{sessionID: testSession, user: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hi"})}
	errorOf := func(err error) (string, string) { return "api_error", err.Error() }
	for _, it := range items {
		evs, f, err := s.event(it, errorOf)
		events = append(events, evs...)
		if f || err != nil {
			return events, f, err
		}
	}
	return events, false, nil
}

// TestStreamerChunks: the reply's deltas are the "response" artifact's chunks, the first not
// appended, the last (held back until the run ends) marked lastChunk, then the final status.
func TestStreamerChunks(t *testing.T) {
	now := time.Now()
	res := &sessions.Result{Execution: &domain.Execution{ID: testExec, Status: domain.ExecCompleted, CreatedAt: now, CompletedAt: &now},
		Messages: []domain.Message{{ID: "m1", Content: "Hello there."}}}
	begun := now.Add(-time.Second)
	evs, final, err := run(t, started{testExec, begun}, "Hel", "lo ", "there.", ended{res: res})
	if err != nil || !final || len(evs) != 5 {
		t.Fatalf("%d events, final %v, %v", len(evs), final, err)
	}
	if task, ok := evs[0].(*a2a.Task); !ok || task.ID != taskID(testSession, testExec) || task.Status.State != a2a.TaskStateWorking || !task.Status.Timestamp.Equal(begun) ||
		task.History[0].TaskID != task.ID || task.History[0].ContextID != testSession {
		t.Errorf("first event = %+v", evs[0])
	}
	var text []string
	for i, ev := range evs[1:4] {
		c, ok := ev.(*a2a.TaskArtifactUpdateEvent)
		if !ok || c.Append != (i > 0) || c.LastChunk != (i == 2) || c.Artifact.ID != ResponseArtifact {
			t.Fatalf("chunk %d = %+v", i, ev)
		}
		text = append(text, c.Artifact.Parts[0].(a2a.TextPart).Text)
	}
	if got := strings.Join(text, ""); got != "Hello there." {
		t.Errorf("chunks make %q", got)
	}
	if st, ok := evs[4].(*a2a.TaskStatusUpdateEvent); !ok || !st.Final || st.Status.State != a2a.TaskStateCompleted {
		t.Errorf("last event = %+v", evs[4])
	}
}

// TestStreamerEnds: a run that fails before it starts ends the stream with its error; one that
// fails after ends it with the failed status; a paused one with input-required and what it
// waits for; a reply that came in no delta is sent whole.
func TestStreamerEnds(t *testing.T) {
	boom := errors.New("boom")
	if evs, final, err := run(t, ended{err: boom}); !errors.Is(err, boom) || !final || len(evs) != 0 {
		t.Errorf("failed before start: %v %v %v", evs, final, err)
	}
	evs, _, err := run(t, started{testExec, time.Now()}, ended{err: boom})
	if st, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent); err != nil || !ok || st.Status.State != a2a.TaskStateFailed ||
		st.Status.Message.Parts[0].(a2a.TextPart).Text != "api_error: boom" {
		t.Errorf("failed after start: %+v %v", evs, err)
	}
	now := time.Now()
	pending := &domain.PendingAction{Type: domain.PendingToolCalls, ExecutionID: testExec, ToolCalls: []domain.PendingToolCall{{ID: "c1", Name: "lookup", Kind: "function"}}}
	evs, _, _ = run(t, ended{res: &sessions.Result{Execution: &domain.Execution{ID: testExec, Status: domain.ExecRequiresAction, CreatedAt: now}, Pending: pending}})
	if len(evs) != 2 {
		t.Fatalf("paused: %+v", evs)
	}
	st := evs[1].(*a2a.TaskStatusUpdateEvent)
	if d, ok := st.Status.Message.Parts[1].(a2a.DataPart); st.Status.State != a2a.TaskStateInputRequired || !ok || d.Data["required_action"].(map[string]any)["type"] != "tool_calls" {
		t.Errorf("paused status = %+v", st.Status)
	}
	evs, _, _ = run(t, started{testExec, time.Now()}, ended{res: &sessions.Result{Execution: &domain.Execution{ID: testExec, Status: domain.ExecCompleted, CreatedAt: now},
		Messages: []domain.Message{{Content: "whole"}}}})
	if c, ok := evs[1].(*a2a.TaskArtifactUpdateEvent); !ok || !c.LastChunk || c.Append || c.Artifact.Parts[0].(a2a.TextPart).Text != "whole" {
		t.Errorf("reply without deltas: %+v", evs)
	}
}

func TestTaskIDs(t *testing.T) {
	id := taskID(testSession, testExec)
	if sid, eid, ok := splitTaskID(id); !ok || sid != testSession || eid != testExec {
		t.Errorf("split %s = %s %s %v", id, sid, eid, ok)
	}
	for _, bad := range []a2a.TaskID{"", testExec, testSession + "." + "x", "x." + testExec, testSession + testExec} {
		if _, _, ok := splitTaskID(bad); ok {
			t.Errorf("split %q ok", bad)
		}
	}
}
