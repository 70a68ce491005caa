package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Names of the messages that end an event stream; exactly one of them is a stream's last message.
const (
	// StreamResult carries the execute result in the requested format.
	StreamResult = "result"
	// StreamRequiresAction ends the stream of a run that paused, with the execute result
	// (status requires_action and its required_action) in the requested format.
	StreamRequiresAction = "requires_action"
	// StreamFailed carries the error envelope of a run that failed after the stream began. It
	// differs from the runtime's "error" events (a failed tool or node), which do not end it.
	StreamFailed = "failed"
)

// deadlineMargin is how long before the request's deadline (the Lambda's) a run stops, so that
// the client gets our answer instead of API Gateway's bare timeout.
const deadlineMargin = 2 * time.Second

// stream answers with server-sent events: each runtime event as it happens ("event: <type>",
// each carrying the run's execution_id, which a cancel names), text as produced ("event: text"),
// then "event: result" with the execute result (status cancelled when a cancel stopped it), or
// "event: failed" with the error envelope. A failure before the first event is an ordinary
// error response.
//
// The run's nodes emit from their own goroutines; they only queue messages, and this goroutine
// alone writes the response. The run is detached from the client: a client that goes away
// neither cancels it nor its commit, which end as without streaming, within the request's
// deadline. The handler returns only when the run has ended (in Lambda, returning would freeze
// the run).
func (h *runtimeHandlers) stream(w http.ResponseWriter, r *http.Request, sid string, req sessions.ExecuteRequest, format string) error {
	ctx, cancel := detach(r.Context())
	defer cancel()
	q := NewQueue[sseEvent]()
	var execID atomic.Value // set once, before the run's first event
	obs := sessions.Observer{
		OnStart: func(id string) { execID.Store(id) },
		OnEvent: func(e engine.Event) {
			if e.Type != engine.EventRequiresAction { // the stream ends with it, carrying the result
				id, _ := execID.Load().(string)
				q.Push(event(e.Type, runtimeEventJSON{Type: e.Type, Node: e.Node, Time: e.Time, Data: e.Data, ExecutionID: id}))
			}
		},
		OnText: func(node, delta string) { q.Push(event("text", textDeltaJSON{Node: node, Delta: delta})) },
	}
	type outcome struct {
		res *sessions.Result
		err error
	}
	done := make(chan outcome, 1)
	p := principal(r)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- outcome{err: fmt.Errorf("stream run panicked: %v\n%s", v, debug.Stack())}
			}
		}()
		res, err := h.svc.Execute(ctx, p, sid, req, obs)
		done <- outcome{res, err}
	}()

	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	for {
		select {
		case <-q.Ready():
			sw.send(q.Take())
		case out := <-done:
			// Every event and text of the run was queued before Execute returned.
			sw.send(q.Take())
			q.Close()
			if out.err != nil && !sw.started {
				return out.err // nothing sent yet: a normal error response with its status
			}
			if out.err != nil {
				_, body := envelope(r, h.g.opts.Log, out.err)
				sw.send([]sseEvent{event(StreamFailed, body)})
			} else if out.res.Pending != nil {
				sw.send([]sseEvent{event(StreamRequiresAction, resultView(out.res, format))})
			} else {
				sw.send([]sseEvent{event(StreamResult, resultView(out.res, format))})
			}
			if sw.err != nil {
				h.g.opts.Log.InfoContext(ctx, "stream client gone; the run ended and was kept", "request_id", requestID(r), "err", sw.err)
			}
			return nil
		}
	}
}

// detach is a context for a run that outlives its request's cancellation (a client that goes
// away) but not its deadline, less deadlineMargin.
func detach(parent context.Context) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(parent)
	if dl, ok := parent.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-deadlineMargin))
	}
	return context.WithCancel(ctx)
}

// sseEvent is one server-sent event, its data already one line of JSON.
type sseEvent struct {
	name string
	data []byte
}

// event encodes v as an event's data. The values streamed (runtime events, text, results,
// envelopes) always encode; should one not, it is sent as JSON null rather than break the frame.
func event(name string, v any) sseEvent {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	return sseEvent{name: name, data: b}
}

// sseWriter writes events to the response, the headers before the first. After a failed write
// (the client went away) it writes nothing more.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	err     error
}

func (s *sseWriter) send(events []sseEvent) {
	if len(events) == 0 || s.err != nil {
		return
	}
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	for _, e := range events {
		if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", e.name, e.data); err != nil {
			s.err = err
			return
		}
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
	}
}
