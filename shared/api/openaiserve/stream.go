package openaiserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/sessions"
)

// sse writes server-sent events, each flushed as it is written.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (s *sse) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
}

// send writes one event: "event: <name>" when name is given, then the data line.
func (s *sse) send(name string, data []byte) {
	if name != "" {
		_, _ = fmt.Fprintf(s.w, "event: %s\n", name)
	}
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", data)
	_ = s.rc.Flush() // a writer that cannot flush sends the stream whole, as API Gateway does
}

// json writes v as one event's data.
func (s *sse) json(name string, v any) {
	b, _ := json.Marshal(v) // the APIs' own structs always encode
	s.send(name, b)
}

// streamer is what one API writes of a run's stream.
type streamer interface {
	// begin opens the stream, once the run (execution executionID of session sessionID) has
	// started.
	begin(s *sse, sessionID, executionID string)
	// text is assistant text as the agent's shown nodes write it.
	text(s *sse, delta string)
	// end closes the stream of a run that finished or paused for the client's tool calls.
	end(s *sse, o *outcome)
	// fail closes the stream of a run that failed after it began.
	fail(s *sse, e errorJSON)
}

// piece is what the run tells the stream: that it started, or text of a node.
type piece struct {
	start      bool
	run        string // the started run's "<session id>/<execution id>"
	node, text string
}

// stream runs c and answers with st's events: the stream begins when the run has started (a
// failure before that is an ordinary error response), text follows as the agent writes it (the
// texts of two nodes parted by a blank line, as the answer joins them), and the run's end or
// failure closes it. The handler returns only when the run has ended.
func (h *server) stream(w http.ResponseWriter, r *http.Request, c *conversation, st streamer) error {
	q := api.NewQueue[piece]()
	obs := sessions.Observer{
		OnStart: func(run string) { q.Push(piece{start: true, run: run}) },
		OnText:  func(node, delta string) { q.Push(piece{node: node, text: delta}) },
	}
	type result struct {
		res *sessions.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("openai stream run panicked: %v\n%s", v, debug.Stack())}
			}
		}()
		res, err := h.run(r.Context(), r, c, obs)
		done <- result{res, err}
	}()
	s := &sse{w: w, rc: http.NewResponseController(w)}
	wrote, last := false, ""
	open := func(run string) {
		if !s.started {
			sid, exec, _ := strings.Cut(run, "/")
			s.start()
			st.begin(s, sid, exec)
		}
	}
	write := func(ps []piece) {
		for _, p := range ps {
			open(p.run)
			if p.start || p.text == "" {
				continue
			}
			if wrote && p.node != last {
				st.text(s, "\n\n")
			}
			st.text(s, p.text)
			wrote, last = true, p.node
		}
	}
	for {
		select {
		case <-q.Ready():
			write(q.Take())
		case out := <-done:
			write(q.Take())
			err := out.err
			var o *outcome
			if err == nil {
				o, err = outcomeOf(out.res)
			}
			if err != nil {
				if !s.started {
					return err
				}
				_, e := h.errorOf(r, err)
				st.fail(s, e)
				return nil
			}
			open(o.sessionID + "/" + o.executionID)
			if !wrote && o.text != "" {
				st.text(s, o.text) // a model that streams nothing: its answer whole
			}
			st.end(s, o)
			return nil
		}
	}
}
