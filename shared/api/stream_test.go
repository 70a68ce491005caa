package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/tools"
)

// sseMessage is one server-sent event message: its event name and its data line.
type sseMessage struct {
	Event string
	Data  json.RawMessage
}

// rawResponse is an HTTP/1.1 response read byte by byte from the connection.
type rawResponse struct {
	status int
	header http.Header
	body   []byte // without the chunked framing
	msgs   []sseMessage
}

// streamTerminal reports whether an event name ends a stream.
func streamTerminal(event string) bool { return event == "result" || event == "failed" }

// rawExecute sends a streaming execute over a plain TCP connection to a real server and reads
// the answer as a strict client would: the status line and headers with CRLF, the chunked
// transfer encoding (a bare hex chunk-size line, exactly that many bytes, CRLF; a zero chunk and
// the empty trailer at the end) and the server-sent event framing ("event: …", "data: <JSON>",
// blank line; exactly one terminal event, last). stop, when not nil, is asked after every
// message; true closes the connection at once (a client that goes away mid-stream).
func rawExecute(t *testing.T, srv *httptest.Server, key, sid, body string, stop func([]sseMessage) bool) (rawResponse, error) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second)) // a broken stream fails, never hangs
	path := "/api/v1/runtime/" + sid + "/execute/"
	_, _ = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		path, srv.Listener.Addr(), key, len(body), body)

	br := bufio.NewReader(conn)
	var out rawResponse
	status, err := crlfLine(br)
	if err != nil {
		return out, fmt.Errorf("status line: %w", err)
	}
	proto, rest, _ := strings.Cut(status, " ")
	code, _, _ := strings.Cut(rest, " ")
	if proto != "HTTP/1.1" {
		return out, fmt.Errorf("status line %q", status)
	}
	if out.status, err = strconv.Atoi(code); err != nil {
		return out, fmt.Errorf("status line %q", status)
	}
	out.header = http.Header{}
	for {
		line, err := crlfLine(br)
		if err != nil {
			return out, fmt.Errorf("header: %w", err)
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			return out, fmt.Errorf("header line %q", line)
		}
		out.header.Add(textproto.CanonicalMIMEHeaderKey(name), value)
	}
	if out.status != 200 || !strings.HasPrefix(out.header.Get("Content-Type"), "text/event-stream") {
		n, err := strconv.Atoi(out.header.Get("Content-Length"))
		if err != nil {
			return out, fmt.Errorf("%d %s without Content-Length", out.status, out.header.Get("Content-Type"))
		}
		out.body = make([]byte, n)
		_, err = io.ReadFull(br, out.body)
		return out, err
	}
	if te := out.header.Values("Transfer-Encoding"); len(te) != 1 || te[0] != "chunked" {
		return out, fmt.Errorf("event stream with Transfer-Encoding %q, want chunked", te)
	}

	var pending []byte // event-stream bytes not yet forming a whole message
	for {
		line, err := crlfLine(br)
		if err != nil {
			return out, fmt.Errorf("chunk size line: %w", err)
		}
		size, err := strconv.ParseUint(line, 16, 31)
		if err != nil || line == "" || strings.ContainsAny(line, " \t;+-xX") {
			return out, fmt.Errorf("chunk size line %q is not a hex length (writes interleaved?)", line)
		}
		if size == 0 {
			if trailer, err := crlfLine(br); err != nil || trailer != "" {
				return out, fmt.Errorf("after the last chunk: %q, %w; want the empty trailer", trailer, err)
			}
			break
		}
		chunk := make([]byte, size)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return out, fmt.Errorf("chunk of %d bytes: %w", size, err)
		}
		var crlf [2]byte
		if _, err := io.ReadFull(br, crlf[:]); err != nil || string(crlf[:]) != "\r\n" {
			return out, fmt.Errorf("chunk of %d bytes ends with %q, want CRLF", size, crlf)
		}
		out.body = append(out.body, chunk...)
		pending = append(pending, chunk...)
		for {
			i := bytes.Index(pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			m, err := parseSSE(string(pending[:i]))
			if err != nil {
				return out, fmt.Errorf("message %d: %w", len(out.msgs), err)
			}
			if n := len(out.msgs); n > 0 && streamTerminal(out.msgs[n-1].Event) {
				return out, fmt.Errorf("message %q after the terminal %q", m.Event, out.msgs[n-1].Event)
			}
			out.msgs = append(out.msgs, m)
			pending = pending[i+2:]
			if stop != nil && stop(out.msgs) {
				return out, nil
			}
		}
	}
	if len(pending) > 0 {
		return out, fmt.Errorf("the stream ends inside a message: %q", pending)
	}
	if n := len(out.msgs); n == 0 || !streamTerminal(out.msgs[n-1].Event) {
		return out, fmt.Errorf("the stream ends without result or failed (%d messages)", len(out.msgs))
	}
	return out, nil
}

// crlfLine reads one line that ends with CRLF and holds no other CR or LF.
func crlfLine(br *bufio.Reader) (string, error) {
	s, err := br.ReadString('\n')
	if err != nil {
		return s, err
	}
	if !strings.HasSuffix(s, "\r\n") || strings.ContainsAny(s[:len(s)-2], "\r\n") {
		return s, fmt.Errorf("line %q does not end with CRLF", s)
	}
	return s[:len(s)-2], nil
}

// parseSSE reads one message: exactly an event line and a data line of JSON.
func parseSSE(block string) (sseMessage, error) {
	lines := strings.Split(block, "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
		return sseMessage{}, fmt.Errorf("not an event line and a data line: %q", block)
	}
	m := sseMessage{Event: strings.TrimPrefix(lines[0], "event: "), Data: json.RawMessage(strings.TrimPrefix(lines[1], "data: "))}
	if m.Event == "" || !json.Valid(m.Data) {
		return m, fmt.Errorf("bad event name or data that is not JSON: %q", block)
	}
	return m, nil
}

// streamOK runs one streaming execute that must end with its result, checks the whole answer
// against the OpenAPI document and returns its messages.
func streamOK(t *testing.T, srv *httptest.Server, key, sid, body string) []sseMessage {
	t.Helper()
	res, err := rawExecute(t, srv, key, sid, body, nil)
	if err != nil {
		t.Fatalf("stream: %v\n%.2000s", err, res.body)
	}
	check := httptest.NewRequest("POST", "/api/v1/runtime/"+sid+"/execute/", strings.NewReader(body))
	check.Header.Set("Content-Type", "application/json")
	check.Header.Set("Accept", "text/event-stream")
	checkOpenAPI(t, check, []byte(body), res.status, res.header, res.body)
	if last := res.msgs[len(res.msgs)-1]; last.Event != "result" {
		t.Fatalf("stream ends with %s %s", last.Event, last.Data)
	}
	return res.msgs
}

// plainExecute runs one execute without streaming through srv and fails t unless it succeeds.
func plainExecute(t *testing.T, srv *httptest.Server, key, sid, body string) {
	t.Helper()
	hr, err := http.NewRequest("POST", srv.URL+"/api/v1/runtime/"+sid+"/execute/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("x-api-key", key)
	hr.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("execute: %d %s", res.StatusCode, out)
	}
}

// transcript is a session's whole stored history as "role: content" lines, oldest first.
func (s *stack) transcript(key, sid string) []string {
	s.t.Helper()
	var out []string
	for offset := 0; ; offset += 200 {
		res := s.do(req{method: "GET", path: fmt.Sprintf("/api/v1/runtime/%s/messages/?limit=200&offset=%d", sid, offset), key: key})
		if res.status != 200 {
			s.t.Fatalf("messages: %d %s", res.status, res.body)
		}
		var page struct {
			Messages []struct{ Role, Content string }
			HasMore  bool `json:"has_more"`
		}
		if err := json.Unmarshal(res.body, &page); err != nil {
			s.t.Fatal(err)
		}
		for _, m := range page.Messages {
			out = append(out, m.Role+": "+m.Content)
		}
		if !page.HasMore {
			return out
		}
	}
}

// eventCounts counts a stream's messages by event name, and the runtime events by node.
func eventCounts(t *testing.T, msgs []sseMessage) (byEvent map[string]int, started map[string]int) {
	byEvent, started = map[string]int{}, map[string]int{}
	for _, m := range msgs {
		byEvent[m.Event]++
		if m.Event == "node_started" {
			var e engine.Event
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatal(err)
			}
			started[e.Node]++
		}
	}
	return byEvent, started
}

// fanOut is a graph of n llm agents that all run in the first step.
func fanOut(n int) string {
	var agents, edges []string
	for i := range n {
		agents = append(agents, fmt.Sprintf(`{"name":"w%d","prompt_config":{"system_prompt":"Worker %d."},"llm_config":{"provider":"local"}}`, i, i))
		edges = append(edges, fmt.Sprintf(`{"from":"__start__","to":"w%d"},{"from":"w%d","to":"__end__"}`, i, i))
	}
	return `{"name":"FanOut","agents":[` + strings.Join(agents, ",") + `],"edges":[` + strings.Join(edges, ",") + `]}`
}

// hubAndWorkers is a hub that fans out to three workers whose branches join in a second hub.
const hubAndWorkers = `{"name":"Hub","agents":[
	{"name":"hub","prompt_config":{"system_prompt":"Plan the work."},"streaming_config":{"show_output_to_user":false}},
	{"name":"research","prompt_config":{"system_prompt":"Research."},"streaming_config":{"show_output_to_user":false}},
	{"name":"draft","prompt_config":{"system_prompt":"Draft."},"streaming_config":{"show_output_to_user":false}},
	{"name":"check","agent_type":"react_agent","tools":["calculator"],"prompt_config":{"system_prompt":"Check."},"streaming_config":{"show_output_to_user":false}},
	{"name":"merge","prompt_config":{"system_prompt":"Merge the results."}}],
	"edges":[{"from":"__start__","to":"hub"},
		{"from":"hub","to":"research"},{"from":"hub","to":"draft"},{"from":"hub","to":"check"},
		{"from":"research","to":"merge"},{"from":"draft","to":"merge"},{"from":"check","to":"merge"},
		{"from":"merge","to":"__end__"}]}`

// TestStreamParallelGraphs streams graphs whose nodes run concurrently to a strict client over
// a real server, and checks that every stream is well framed, ends with its result, reports
// every node, and stores the turn exactly as the same executes without streaming do.
func TestStreamParallelGraphs(t *testing.T) {
	s := newStack(t)
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	key := s.key("alice", "acme")
	tests := []struct {
		name  string
		cfg   string
		runs  int
		nodes map[string]int // node_started events per node and run
	}{
		{"fan-out of 50", fanOut(50), 4, nil},
		{"hub, three workers, hub", hubAndWorkers, 4, map[string]int{"hub": 1, "research": 1, "draft": 1, "check": 1, "merge": 1}},
	}
	for _, tt := range tests {
		if tt.nodes == nil {
			tt.nodes = map[string]int{}
			for i := range 50 {
				tt.nodes[fmt.Sprintf("w%d", i)] = 1
			}
		}
		streamed, plain := s.session(key, tt.cfg), s.session(key, tt.cfg)
		for i := range tt.runs {
			body := fmt.Sprintf(`{"content":"turn %d: calculator {\"expression\": \"6*%d\"}","correlation_id":"c%d"}`, i, i, i)
			msgs := streamOK(t, srv, key, streamed, body)
			byEvent, started := eventCounts(t, msgs)
			if diff := cmp.Diff(tt.nodes, started); diff != "" {
				t.Errorf("%s, run %d: node_started per node (-want +got):\n%s", tt.name, i, diff)
			}
			if byEvent["node_finished"] != len(tt.nodes) || byEvent["text"] < len(tt.nodes) || byEvent["result"] != 1 {
				t.Errorf("%s, run %d: events %v", tt.name, i, byEvent)
			}
			var result struct {
				Metadata struct {
					EventCount int `json:"event_count"`
				}
			}
			if err := json.Unmarshal(msgs[len(msgs)-1].Data, &result); err != nil {
				t.Fatal(err)
			}
			if runtimeEvents := len(msgs) - byEvent["text"] - 1; result.Metadata.EventCount != runtimeEvents {
				t.Errorf("%s, run %d: the stream sent %d events, the result counts %d", tt.name, i, runtimeEvents, result.Metadata.EventCount)
			}
			s.execute(key, plain, body)
		}
		got, want := s.transcript(key, streamed), s.transcript(key, plain)
		if len(want) == 0 {
			t.Fatalf("%s: the plain executes stored nothing", tt.name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: stored turns, streamed (+) against plain (-):\n%s", tt.name, diff)
		}
	}
}

// TestStreamFailureIsTerminal checks that a run that fails after the stream began ends with the
// failed event and the error envelope, apart from the error events of the run itself, and
// stores nothing, as the same execute without streaming.
func TestStreamFailureIsTerminal(t *testing.T) {
	s := newStack(t)
	srv := httptest.NewServer(s.mux)
	defer srv.Close()
	key := s.key("alice", "acme")
	cfg := `{"name":"Half","agents":[{"name":"ok","llm_config":{"provider":"local"}},{"name":"broken","llm_config":{"provider":"nonsense"}}],
		"edges":[{"from":"__start__","to":"ok"},{"from":"__start__","to":"broken"},{"from":"ok","to":"__end__"},{"from":"broken","to":"__end__"}]}`
	streamed, plain := s.session(key, cfg), s.session(key, cfg)
	body := `{"content":"go"}`
	res, err := rawExecute(t, srv, key, streamed, body, nil)
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, res.body)
	}
	check := httptest.NewRequest("POST", "/api/v1/runtime/"+streamed+"/execute/", strings.NewReader(body))
	check.Header.Set("Content-Type", "application/json")
	checkOpenAPI(t, check, []byte(body), res.status, res.header, res.body)
	want := s.do(req{method: "POST", path: "/api/v1/runtime/" + plain + "/execute/", key: key, body: body})
	wantType, wantMsg := want.errorType(t)

	byEvent, _ := eventCounts(t, res.msgs)
	if byEvent["error"] != 1 || byEvent["failed"] != 1 || byEvent["result"] != 0 {
		t.Errorf("events %v, want one runtime error event and one failed", byEvent)
	}
	last := res.msgs[len(res.msgs)-1]
	var env struct {
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(last.Data, &env); err != nil || last.Event != "failed" {
		t.Fatalf("last message %s %s", last.Event, last.Data)
	}
	if env.Error.Type != wantType || env.Error.Message != wantMsg {
		t.Errorf("failed with %s %q; without streaming %d %s %q", env.Error.Type, env.Error.Message, want.status, wantType, wantMsg)
	}
	for _, m := range res.msgs[:len(res.msgs)-1] {
		if m.Event == "error" {
			var e engine.Event
			if err := json.Unmarshal(m.Data, &e); err != nil || e.Type != "error" || e.Node != "broken" {
				t.Errorf("runtime error event %s", m.Data)
			}
		}
	}
	if got := s.transcript(key, streamed); len(got) != 0 {
		t.Errorf("a failed stream stored %v", got)
	}
	// The lease was released: the session takes the next execute at once.
	if r := s.do(req{method: "POST", path: "/api/v1/runtime/" + streamed + "/execute/", key: key, body: body}); r.status != want.status {
		t.Errorf("next execute %d %s, want %d", r.status, r.body, want.status)
	}
}

// gateModel is the local model behind a gate: each call waits until the gate opens (or its
// context ends), so a test can hold a run in flight.
type gateModel struct {
	open    chan struct{}
	entered chan struct{} // when not nil, receives a token as each call begins to wait
}

func (g gateModel) Converse(ctx context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	if g.entered != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
	}
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return localmodel.Model{}.Converse(ctx, req)
}

// gatedRuntime is a runtime group whose engine offers the gate model as provider "gate".
func (s *stack) gatedRuntime(gate gateModel) *api.Group {
	models := engine.ModelSet{Default: "local", ByName: map[string]domain.Model{"local": localmodel.Model{}, "gate": gate}}
	registry := tools.NewRegistry(tools.Builtins(tools.Options{})...)
	svc := sessions.New(sessions.Deps{Store: s.app.Store, Agents: s.app.Agents, Engine: engine.NewEngine(models, registry, engine.Limits{}),
		Tools: registry, Fetch: tools.NewURLFetcher(tools.Options{})}, sessions.Limits{})
	return api.NewRuntime(svc, api.Options{Auth: s.app.Auth})
}

// gatedServer serves the stack with a runtime group whose engine offers the gate model as
// provider "gate". Requests pass through wrap, which may change them before the handler sees
// them; requestGone is closed when the server sees the first streaming request's context end
// (the client went away, or the handler returned) and handlerDone when that handler returned.
func (s *stack) gatedServer(gate gateModel, wrap func(*http.Request) *http.Request) (srv *httptest.Server, requestGone, handlerDone chan struct{}) {
	rt := s.gatedRuntime(gate)
	requestGone, handlerDone = make(chan struct{}), make(chan struct{})
	var first sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/runtime") {
			s.mux.ServeHTTP(w, r)
			return
		}
		if wrap != nil {
			r = wrap(r)
		}
		if r.Header.Get("Accept") == "text/event-stream" {
			first.Do(func() {
				context.AfterFunc(r.Context(), func() { close(requestGone) })
				defer close(handlerDone)
				rt.ServeHTTP(w, r)
			})
			return
		}
		rt.ServeHTTP(w, r)
	}))
	return srv, requestGone, handlerDone
}

// waitFor fails t unless ch is closed within a generous limit.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestStreamClientGoneStillCommits disconnects a client in the middle of a stream while nodes
// are still running: the run goes on and its turn is stored exactly once, as without streaming.
func TestStreamClientGoneStillCommits(t *testing.T) {
	s := newStack(t)
	gate := gateModel{open: make(chan struct{})}
	srv, gone, done := s.gatedServer(gate, nil)
	defer srv.Close()
	key := s.key("alice", "acme")
	cfg := `{"name":"Slow","agents":[
		{"name":"quick","prompt_config":{"system_prompt":"Quick."},"llm_config":{"provider":"local"}},
		{"name":"slow","prompt_config":{"system_prompt":"Slow."},"llm_config":{"provider":"gate"}},
		{"name":"after","prompt_config":{"system_prompt":"After."},"llm_config":{"provider":"local"}}],
		"edges":[{"from":"__start__","to":"quick"},{"from":"__start__","to":"slow"},{"from":"quick","to":"after"},{"from":"slow","to":"after"},{"from":"after","to":"__end__"}]}`
	streamed, plain := s.session(key, cfg), s.session(key, cfg)
	body := `{"content":"leave early"}`

	// Leave once the slow node has started: it cannot finish until the gate opens.
	res, err := rawExecute(t, srv, key, streamed, body, func(msgs []sseMessage) bool {
		return bytes.Contains(msgs[len(msgs)-1].Data, []byte(`"node":"slow"`))
	})
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, res.body)
	}
	if n := len(res.msgs); n == 0 || streamTerminal(res.msgs[n-1].Event) {
		t.Fatalf("the client did not leave mid-stream: %v", res.msgs)
	}
	waitFor(t, gone, "the server to see the client go")
	close(gate.open)
	waitFor(t, done, "the streaming handler to return")

	plainExecute(t, srv, key, plain, body)
	got, want := s.transcript(key, streamed), s.transcript(key, plain)
	if len(want) != 4 { // the user's message and one of each node
		t.Fatalf("plain execute stored %v", want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored turn after the client left (+) against plain (-):\n%s", diff)
	}
	ev := s.do(req{method: "GET", path: "/api/v1/runtime/" + streamed + "/events/", key: key}).json(t)
	execs := map[any]bool{}
	for _, e := range ev["events"].([]any) {
		execs[e.(map[string]any)["execution_id"]] = true
	}
	if len(execs) != 1 {
		t.Errorf("%d executions stored, want 1", len(execs))
	}
}

// TestStreamKeepsTheDeadline gives the request a deadline, as Lambda does: a run detached from
// the client still stops two seconds before it, and the stream ends with failed.
func TestStreamKeepsTheDeadline(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"Stuck","agent_type":"llm_agent","llm_config":{"provider":"gate"}}`)
	deadline := time.Now().Add(3 * time.Second)
	srv, _, done := s.gatedServer(gateModel{open: make(chan struct{})}, func(r *http.Request) *http.Request {
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		context.AfterFunc(r.Context(), cancel)
		return r.WithContext(ctx)
	})
	defer srv.Close()
	res, err := rawExecute(t, srv, key, sid, `{"content":"never answered"}`, nil)
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, res.body)
	}
	ended := time.Now()
	waitFor(t, done, "the streaming handler to return")
	last := res.msgs[len(res.msgs)-1]
	if last.Event != "failed" || !bytes.Contains(last.Data, []byte(`"overloaded_error"`)) {
		t.Errorf("last message %s %s", last.Event, last.Data)
	}
	if ended.After(deadline) {
		t.Errorf("the stream ended %s after the deadline", ended.Sub(deadline))
	}
}

// TestExecuteClientGoneStillCommits cancels a plain (non-streaming) execute's request while its
// model call is in flight, as net/http does when the client disconnects: the run goes on and its
// turn is stored, as with streaming.
func TestExecuteClientGoneStillCommits(t *testing.T) {
	s := newStack(t)
	gate := gateModel{open: make(chan struct{}), entered: make(chan struct{}, 1)}
	rt := s.gatedRuntime(gate)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"Slow","agent_type":"llm_agent","system_prompt":"Be slow.","llm_config":{"provider":"gate"}}`)

	ctx, cancel := context.WithCancel(context.Background())
	hr := httptest.NewRequest("POST", "/api/v1/runtime/"+sid+"/execute/", strings.NewReader(`{"content":"are you still there?"}`)).WithContext(ctx)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("x-api-key", key)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.ServeHTTP(httptest.NewRecorder(), hr)
	}()
	select {
	case <-gate.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the model was never called")
	}
	cancel() // the client went away
	close(gate.open)
	waitFor(t, done, "the execute handler to return")

	got := s.transcript(key, sid)
	if len(got) != 2 || got[0] != "user: are you still there?" || !strings.HasPrefix(got[1], "assistant: ") {
		t.Errorf("stored turn after the client left = %q, want the user's message and the reply", got)
	}
}
