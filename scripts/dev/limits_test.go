package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/tools"
)

// allowAll lets every request in; the limits under test act before and around authentication.
type allowAll struct{}

func (allowAll) Authenticate(context.Context, string, string) (domain.Principal, error) {
	return domain.Principal{Owner: "dev", Company: "dev"}, nil
}

func (allowAll) Limit(context.Context, domain.Principal) (auth.Rate, error) { return auth.Rate{}, nil }

// testLimits are the gateway's limits with timeouts short enough for a test.
func testLimits() serverLimits {
	lim := gatewayLimits()
	lim.HeaderTimeout = 500 * time.Millisecond
	lim.ReadTimeout = 700 * time.Millisecond
	return lim
}

// startServer serves the agents group (its validate route decodes a body without storage)
// and /slow/, which reads its body and then outlives the read timeout, on the dev server's
// real http.Server.
func startServer(t *testing.T, lim serverLimits) (addr string, slowCtxErr chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	slowCtxErr = make(chan error, 1)
	mux := http.NewServeMux()
	mux.Handle("/api/", api.NewAgents(agents.NewService(nil, tools.NewRegistry(tools.Builtins(tools.Options{})...)), api.Options{Auth: allowAll{}}))
	mux.HandleFunc("/slow/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(3 * lim.ReadTimeout):
		}
		slowCtxErr <- r.Context().Err()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := newServer(mux, lim)
	go func() { _ = srv.Serve(envelopeListener{Listener: l, limits: lim}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String(), slowCtxErr
}

// rawRequest writes req on a fresh connection (in the background: the server may answer before
// it has read everything) and reads one response.
func rawRequest(t *testing.T, addr string, req string, then func(net.Conn)) (*http.Response, []byte, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	go func() {
		_, _ = io.WriteString(c, req)
		if then != nil {
			then(c)
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	return res, body, time.Since(start)
}

// envelopeOf checks that body is the error envelope and returns its type.
func envelopeOf(t *testing.T, res *http.Response, body []byte) string {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json: %s", ct, body)
	}
	var env struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Type == "" || env.Error.Message == "" {
		t.Fatalf("not the error envelope (%v): %s", err, body)
	}
	return env.Error.Type
}

func TestHeadersTooLargeAreEnveloped(t *testing.T) {
	lim := testLimits()
	addr, _ := startServer(t, lim)
	post := func(header string) string {
		body := `{"name":"a"}`
		return "POST /api/v1/agent/validate/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + header +
			fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	tests := []struct {
		name, header string
		status       int
	}{
		{"small", "X-Pad: " + strings.Repeat("a", 1000) + "\r\n", 200},
		// Over API Gateway's 10240 bytes, under net/http's own limit: withLimits answers.
		{"just over the gateway limit", "X-Pad: " + strings.Repeat("a", lim.HeaderBytes) + "\r\n", 431},
		// Far over net/http's limit: its plain-text answer, rewritten by envelopeConn.
		{"2 MB", "X-Pad: " + strings.Repeat("a", 2<<20) + "\r\n", 431},
		{"many headers", strings.Repeat("X-Many: "+strings.Repeat("b", 100)+"\r\n", 200), 431},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body, _ := rawRequest(t, addr, post(tt.header), nil)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", res.StatusCode, tt.status, body)
			}
			if tt.status == 431 {
				if typ := envelopeOf(t, res, body); typ != "request_too_large" {
					t.Errorf("type %q", typ)
				}
				if !strings.Contains(string(body), "10240 bytes") {
					t.Errorf("message does not give the limit: %s", body)
				}
			}
		})
	}
}

func TestMalformedRequestIsEnveloped(t *testing.T) {
	addr, _ := startServer(t, testLimits())
	res, body, _ := rawRequest(t, addr, "GET /api/v1/agent/ HTTP/1.1\r\nNo-Host-Header: x\r\n\r\n", nil)
	if res.StatusCode != 400 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if typ := envelopeOf(t, res, body); typ != "invalid_request_error" {
		t.Errorf("type %q", typ)
	}
}

func TestBodyThatNeverCompletes(t *testing.T) {
	lim := testLimits()
	addr, _ := startServer(t, lim)
	// Headers promise 100 bytes; 10 arrive, then nothing.
	req := "POST /api/v1/agent/validate/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":\"a"
	res, body, took := rawRequest(t, addr, req, nil)
	if res.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d after %s, want 408: %s", res.StatusCode, took, body)
	}
	if typ := envelopeOf(t, res, body); typ != "invalid_request_error" {
		t.Errorf("type %q", typ)
	}
	if took < lim.ReadTimeout {
		t.Errorf("answered after %s, want no sooner than the read timeout %s", took, lim.ReadTimeout)
	}
	if !res.Close {
		t.Error("the connection stays open after a timed-out body")
	}
}

func TestHeadersThatNeverComplete(t *testing.T) {
	lim := testLimits()
	addr, _ := startServer(t, lim)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	start := time.Now()
	_, _ = io.WriteString(c, "POST /api/v1/agent/validate/ HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s", took)
	}
	if n != 0 {
		t.Errorf("read %d bytes after %s (%v), want the connection closed after about %s", n, took, err, lim.HeaderTimeout)
	}
}

// TestReadTimeoutSparesLongHandlers: once the body is in, the handler may run past the read
// timeout (long executions, event streams) without its context being cancelled.
func TestReadTimeoutSparesLongHandlers(t *testing.T) {
	lim := testLimits()
	addr, slowCtxErr := startServer(t, lim)
	res, body, took := rawRequest(t, addr, "POST /slow/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", nil)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if err := <-slowCtxErr; err != nil {
		t.Errorf("the handler's context ended after %s: %v", took, err)
	}
}
