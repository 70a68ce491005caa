package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// resumer is the tests' MCP server, except that it answers a call of the tool "resume" with an
// event stream it closes after a priming event (an id and a retry, no data, as SEP-1699 has a
// server do): the client resumes that stream with a GET carrying Last-Event-ID, which answer
// serves. It records the headers of every such GET.
type resumer struct {
	answer  func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
	mu      sync.Mutex
	pending json.RawMessage
	gets    []http.Header
}

func (rs *resumer) handler() http.Handler {
	next := intercept(mcptest.Handler(), func(w http.ResponseWriter, _ *http.Request, call rpcCall) bool {
		var p struct {
			Name string `json:"name"`
		}
		if call.Method != "tools/call" || json.Unmarshal(call.Params, &p) != nil || p.Name != "resume" {
			return false
		}
		rs.mu.Lock()
		rs.pending = call.ID
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "id: prime-1\nretry: 20\ndata: \n\n")
		return true // the stream ends here, without the answer
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Last-Event-ID") == "" {
			next.ServeHTTP(w, r)
			return
		}
		rs.mu.Lock()
		rs.gets = append(rs.gets, r.Header.Clone())
		id := rs.pending
		rs.pending = nil
		rs.mu.Unlock()
		if id == nil {
			http.Error(w, "nothing to resume", http.StatusNotFound)
			return
		}
		rs.answer(w, r, id)
	})
}

func (rs *resumer) resumed() []http.Header {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.gets
}

// resumedEvent writes the answer to id as an event of the resumed stream.
func resumedEvent(w http.ResponseWriter, id json.RawMessage, text string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": textResult(text, false)})
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "id: prime-2\ndata: %s\n\n", b)
}

// TestResumedCall: a call whose event stream the server closes before the answer is answered
// on the GET that resumes the stream (Last-Event-ID, the endpoint's headers); the session goes
// on. What the resumed stream brings is bounded as any answer, and a resuming GET redirected to
// another origin is refused before it leaves.
func TestResumedCall(t *testing.T) {
	const key = "Bearer resume-secret-123"
	tooLarge := fmt.Sprintf("the server's answer is larger than %d MiB", mcp.MaxAnswerBytes>>20)
	var other recorder
	otherSrv := httptest.NewServer(other.wrap(mcptest.Handler()))
	defer otherSrv.Close()
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
		want   string // the reason of the call's error, "" for the answer "resumed"
		after  bool   // the session answers another call afterwards
	}{
		{"answered on the resuming GET", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			resumedEvent(w, id, "resumed")
		}, "", true},
		{"resumed answer too large", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			hugeAnswer(w, id, plainSize, true, false)
		}, tooLarge, false},
		{"resuming GET redirected to another origin", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			http.Redirect(w, r, otherSrv.URL+mcptest.PathMCP, http.StatusTemporaryRedirect)
		}, fmt.Sprintf("the server sent the request to %s, another origin than its own; its headers go to its own origin only", otherSrv.URL), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &resumer{answer: tc.answer}
			srv := httptest.NewServer(rs.handler())
			defer srv.Close()
			ep := domain.MCPEndpoint{URL: srv.URL + mcptest.PathMCP, Headers: map[string]string{"Authorization": key}, Timeout: 20 * time.Second}
			s, err := c.Connect(context.Background(), ep)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			res, err := s.CallTool(context.Background(), "resume", nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("call: %v", err)
			case tc.want == "" && res.Text != "resumed":
				t.Errorf("answer %q, want %q", res.Text, "resumed")
			case tc.want != "":
				if me := mcpError(t, err); me.Reason != tc.want {
					t.Errorf("reason %q, want %q (cause %v)", me.Reason, tc.want, me.Err)
				}
			}
			gets := rs.resumed()
			if len(gets) == 0 {
				t.Fatal("the client did not resume the stream")
			}
			for i, h := range gets {
				if got := h.Get("Last-Event-ID"); got != "prime-1" {
					t.Errorf("GET %d: Last-Event-ID %q, want prime-1", i, got)
				}
				if h.Get("Authorization") != key {
					t.Errorf("GET %d without the endpoint's header", i)
				}
			}
			if tc.after {
				if got, err := s.CallTool(context.Background(), "echo", map[string]any{"message": "still here"}); err != nil || got.Text != "still here" {
					t.Errorf("echo after the resumed call = %+v, %v", got, err)
				}
			}
			if n := len(other.requests()); n != 0 {
				t.Errorf("the other origin got %d requests, want none", n)
			}
		})
	}
}
