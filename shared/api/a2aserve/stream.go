package a2aserve

import (
	"context"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/sessions"
)

// What a streamed run hands the stream: its execution id and when once it holds the session
// (started), each text delta (string), and its outcome (ended), last.
type (
	started struct {
		id string
		at time.Time
	}
	ended struct {
		res *sessions.Result
		err error
	}
)

// items yields what a run handed q (its started, text and ended items) until ctx ends: the run
// never waits for the client, and the stream takes the items in order; the caller stops at the
// ended item.
func items(ctx context.Context, q *api.Queue[any]) iter.Seq[any] {
	return func(yield func(any) bool) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.Ready():
			}
			for _, v := range q.Take() {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// streamer turns a run's items into A2A events. The reply's chunks are held back by one, so
// that the last one is sent marked lastChunk.
type streamer struct {
	sessionID string
	user      *a2a.Message
	execID    string
	held      string
	sent      int
}

func (s *streamer) id() a2a.TaskID { return taskID(s.sessionID, s.execID) }

// event is what an item sends, whether it ends the stream, or the error the stream ends with
// (a run that failed before it started). errorOf tells an error as the envelope does.
func (s *streamer) event(item any, errorOf func(error) (string, string)) (evs []a2a.Event, final bool, err error) {
	switch it := item.(type) {
	case started:
		s.execID = it.id
		return []a2a.Event{s.startTask(it.at)}, false, nil
	case string:
		if s.held != "" {
			evs = append(evs, s.chunk(s.held, false))
		}
		s.held = it
		return evs, false, nil
	case ended:
		if it.err != nil {
			if s.execID == "" {
				return nil, true, it.err
			}
			typ, msg := errorOf(it.err)
			t := failedTask(s.sessionID, s.execID, typ, msg)
			return []a2a.Event{s.statusEvent(t)}, true, nil
		}
		if s.execID == "" {
			s.execID = it.res.Execution.ID
			evs = append(evs, s.startTask(it.res.Execution.CreatedAt))
		}
		t := task(s.sessionID, it.res.Execution, it.res.Messages, it.res.Pending)
		switch {
		case s.held != "":
			evs = append(evs, s.chunk(s.held, true))
		case s.sent == 0 && len(t.Artifacts) > 0:
			evs = append(evs, s.chunk(replyText(it.res.Messages), true))
		}
		return append(evs, s.statusEvent(t)), true, nil
	}
	return nil, false, nil
}

// startTask is the task as its run started (at): working, with the message it answers.
func (s *streamer) startTask(at time.Time) *a2a.Task {
	at = at.UTC()
	user := *s.user
	user.ContextID, user.TaskID = s.sessionID, s.id()
	return &a2a.Task{ID: s.id(), ContextID: s.sessionID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at},
		History: []*a2a.Message{&user}, Metadata: map[string]any{"session_id": s.sessionID, "execution_id": s.execID}}
}

func (s *streamer) chunk(text string, last bool) *a2a.TaskArtifactUpdateEvent {
	s.sent++
	return &a2a.TaskArtifactUpdateEvent{TaskID: s.id(), ContextID: s.sessionID, Append: s.sent > 1, LastChunk: last,
		Artifact: &a2a.Artifact{ID: ResponseArtifact, Name: ResponseArtifact, Parts: a2a.ContentParts{a2a.TextPart{Text: text}}}}
}

func (s *streamer) statusEvent(t *a2a.Task) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true, Metadata: t.Metadata}
}
