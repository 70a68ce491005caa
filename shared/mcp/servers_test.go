package mcp_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/infra/mcptest"
)

// The misbehaving servers of the tests: the tests' MCP server with some methods answered
// otherwise (an answer too large, plain or gzipped, a header echoed, no answer at all), and a
// small server of the older HTTP+SSE transport whose stream the test writes.

// rpcCall is the part of a JSON-RPC request the servers look at.
type rpcCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// intercept serves next, except the POSTed JSON-RPC requests that answer answers itself
// (it returns false to leave a request to next).
func intercept(next http.Handler, answer func(w http.ResponseWriter, r *http.Request, call rpcCall) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var call rpcCall
			if json.Unmarshal(body, &call) == nil && answer(w, r, call) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// zeros is an endless stream of '0' characters: inside a JSON string they stay valid JSON.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// hugeAnswer writes the answer to call id whose result holds size bytes of padding: as
// application/json or as one event of an event stream, gzipped (generated as it is sent, so
// that 512 MiB cost the test nothing but CPU up to where the client stops reading) or plain.
func hugeAnswer(w http.ResponseWriter, id json.RawMessage, size int64, sse, gz bool) {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[],"pad":"`, id)
	tail := `"}}`
	if sse {
		head, tail = "event: message\ndata: "+head, tail+"\n\n"
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	var out io.Writer = w
	flush := func() error { return http.NewResponseController(w).Flush() }
	if gz {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer func() { _ = zw.Close() }()
		out = zw
		flush = func() error {
			if err := zw.Flush(); err != nil {
				return err
			}
			return http.NewResponseController(w).Flush()
		}
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(out, head)
	// Flushed every MiB, so that the server compresses no further ahead than the client reads.
	for left := size; left > 0; left -= 1 << 20 {
		if _, err := io.Copy(out, io.LimitReader(zeros{}, min(left, 1<<20))); err != nil || flush() != nil {
			return // the client left, as it should
		}
	}
	_, _ = io.WriteString(out, tail)
}

// rpcAnswer writes a JSON-RPC answer (a result or an error object) as application/json.
func rpcAnswer(w http.ResponseWriter, id json.RawMessage, result, rpcErr any) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

// legacyServer is a server of the HTTP+SSE transport (2024-11-05) at /sse: it refuses the
// POST a Streamable HTTP client tries first, so the client falls back to a GET, whose stream
// names endpoint(base) for the messages (with the stream's number in ?s=); initialize and
// tools/list are answered in the stream, tools/call by call (which writes to the stream, the
// answer to request id). base is its URL.
type legacyServer struct {
	*httptest.Server
	mu       sync.Mutex
	streams  []chan func(w io.Writer)
	endpoint func(base string) string
	call     func(w io.Writer, id json.RawMessage)
	hits     map[string]int
}

func newLegacyServer(t testing.TB, endpoint func(base string) string, call func(w io.Writer, id json.RawMessage)) *legacyServer {
	t.Helper()
	ls := &legacyServer{endpoint: endpoint, call: call, hits: map[string]int{}}
	ls.Server = httptest.NewServer(http.HandlerFunc(ls.serve))
	t.Cleanup(ls.Close)
	return ls
}

func (ls *legacyServer) count(r *http.Request) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.hits[r.Method+" "+r.URL.Path]++
}

// hitsOf is how many requests method path had.
func (ls *legacyServer) hitsOf(methodPath string) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.hits[methodPath]
}

func (ls *legacyServer) serve(w http.ResponseWriter, r *http.Request) {
	ls.count(r)
	switch {
	case r.URL.Path == "/sse" && r.Method == http.MethodGet:
		ls.mu.Lock()
		n, stream := len(ls.streams), make(chan func(io.Writer), 16)
		ls.streams = append(ls.streams, stream)
		ls.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, "event: endpoint\ndata: %s?s=%d\n\n", ls.endpoint(ls.URL), n)
		w.(http.Flusher).Flush()
		for {
			select {
			case write := <-stream:
				write(w)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.URL.Path == "/sse":
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
	case r.URL.Path == "/messages" && r.Method == http.MethodPost:
		var call rpcCall
		n, err := strconv.Atoi(r.URL.Query().Get("s"))
		ls.mu.Lock()
		if err != nil || n < 0 || n >= len(ls.streams) {
			ls.mu.Unlock()
			http.Error(w, "no such stream", http.StatusNotFound)
			return
		}
		stream := ls.streams[n]
		ls.mu.Unlock()
		if err := json.NewDecoder(r.Body).Decode(&call); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		send := func(result any) {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": call.ID, "result": result})
			stream <- func(w io.Writer) { _, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", b) }
		}
		switch call.Method {
		case "initialize":
			send(map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "legacy", "version": "1"}})
		case "tools/list":
			send(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
		case "tools/call":
			stream <- func(w io.Writer) { ls.call(w, call.ID) }
		}
	default:
		http.NotFound(w, r)
	}
}

// hugeEvent writes one message event of size bytes, the answer to id, into a legacy stream.
func hugeEvent(size int64) func(w io.Writer, id json.RawMessage) {
	return func(w io.Writer, id json.RawMessage) {
		_, _ = fmt.Fprintf(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":%s,"result":{"content":[],"pad":"`, id)
		if _, err := io.Copy(w, io.LimitReader(zeros{}, size)); err == nil {
			_, _ = io.WriteString(w, "\"}}\n\n")
		}
	}
}

// mcpServer is the tests' MCP server at path under intercept, with its URL.
func mcpServer(t testing.TB, path string, answer func(w http.ResponseWriter, r *http.Request, call rpcCall) bool) string {
	t.Helper()
	srv := httptest.NewServer(intercept(mcptest.Handler(), answer))
	t.Cleanup(srv.Close)
	return srv.URL + path
}

// textResult is a tools/call result of one text.
func textResult(text string, isError bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError}
}
