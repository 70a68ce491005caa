package mcp_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// recorder is a server that records the headers of every request it gets.
type recorder struct {
	mu  sync.Mutex
	got []http.Header
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.got = append(rc.got, r.Header.Clone())
		rc.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (rc *recorder) requests() []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got
}

// TestOtherOrigin: the headers are the registered origin's; a redirect or an HTTP+SSE message
// endpoint on another origin (another port of the same host here) is refused before any
// request reaches it, a redirect within the origin is followed, and no Referer is ever sent.
func TestOtherOrigin(t *testing.T) {
	const key = "Bearer origin-secret-123"
	var other recorder
	otherSrv := httptest.NewServer(other.wrap(mcptest.Handler()))
	defer otherSrv.Close()
	var home recorder
	mux := http.NewServeMux()
	mux.Handle("/", mcptest.Handler())
	mux.Handle("/moved", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
	mux.Handle("/away", http.RedirectHandler(otherSrv.URL+"/mcp", http.StatusTemporaryRedirect))
	homeSrv := httptest.NewServer(home.wrap(mux))
	defer homeSrv.Close()
	legacy := newLegacyServer(t, func(string) string { return otherSrv.URL + "/messages" }, nil)
	refused := fmt.Sprintf("the server sent the request to %s, another origin than its own; its headers go to its own origin only", otherSrv.URL)

	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	headers := map[string]string{"Authorization": key}
	for _, tc := range []struct {
		name string
		url  string
		want string // "" for a working server
	}{
		{"same-origin redirect", homeSrv.URL + "/moved", ""},
		{"redirect to another port", homeSrv.URL + "/away", refused},
		{"HTTP+SSE endpoint on another port", legacy.URL + "/sse", refused},
	} {
		_, err := c.ListTools(context.Background(), domain.MCPEndpoint{URL: tc.url, Headers: headers, Timeout: 5 * time.Second})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "":
			if me := mcpError(t, err); me.Reason != tc.want {
				t.Errorf("%s: reason %q, want %q", tc.name, me.Reason, tc.want)
			}
		}
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other origin got %d requests, want none", n)
	}
	if n := legacy.hitsOf("GET /sse"); n != 1 {
		t.Errorf("the HTTP+SSE server's stream was asked %d times, want 1", n)
	}
	got := home.requests()
	if len(got) < 3 {
		t.Fatalf("the registered origin got %d requests", len(got))
	}
	for i, h := range got {
		if h.Get("Authorization") != key {
			t.Errorf("request %d at the registered origin without its header", i)
		}
		if ref := h.Get("Referer"); ref != "" {
			t.Errorf("request %d sent Referer %q", i, ref)
		}
	}
}

// TestHeaderValuesRedacted: a server that echoes the Authorization header it gets, in a
// JSON-RPC error, a tool result, an isError result, an embedded resource, its tool list and an
// HTTP error, never gets the value into what the adapter gives back.
func TestHeaderValuesRedacted(t *testing.T) {
	const token = "tok-3f9a7c1e5b2d"
	basic := base64.StdEncoding.EncodeToString([]byte("robot:pa55word-xyz"))
	for _, tc := range []struct {
		name    string
		headers map[string]string
		secrets []string
		auth    domain.MCPAuth
	}{
		{"bearer", map[string]string{"Authorization": "Bearer " + token, "X-Api-Key": "key-<&>-value"}, []string{token, "key-<&>-value"}, nil},
		{"basic", map[string]string{"Authorization": "Basic " + basic}, []string{basic, "pa55word-xyz"}, nil},
		{"oauth", map[string]string{"X-Api-Key": "key-<&>-value"}, []string{"oauth-access-7d1e", "key-<&>-value"}, heldToken("oauth-access-7d1e")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			echo := func(r *http.Request) string {
				s := r.Header.Get("Authorization") + " / " + r.Header.Get("X-Api-Key")
				if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")); err == nil {
					s += " / " + string(b)
				}
				return "you sent " + s
			}
			failInit := false
			url := mcpServer(t, mcptest.PathJSON, func(w http.ResponseWriter, r *http.Request, call rpcCall) bool {
				params := string(call.Params)
				switch {
				case call.Method == "initialize" && failInit:
					rpcAnswer(w, call.ID, nil, map[string]any{"code": -32001, "message": echo(r)})
				case call.Method == "tools/list":
					rpcAnswer(w, call.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "description": echo(r),
						"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"description": echo(r)}}}}}}, nil)
				case call.Method != "tools/call":
					return false
				case strings.Contains(params, `"rpc-error"`):
					rpcAnswer(w, call.ID, nil, map[string]any{"code": -32000, "message": echo(r)})
				case strings.Contains(params, `"text"`):
					rpcAnswer(w, call.ID, textResult(echo(r), false), nil)
				case strings.Contains(params, `"is-error"`):
					rpcAnswer(w, call.ID, textResult(echo(r), true), nil)
				case strings.Contains(params, `"resource"`):
					rpcAnswer(w, call.ID, map[string]any{"content": []any{map[string]any{"type": "resource",
						"resource": map[string]any{"uri": "mem://x?" + echo(r), "text": echo(r)}}}}, nil)
				case strings.Contains(params, `"http-error"`):
					http.Error(w, echo(r), http.StatusBadGateway)
				default:
					return false
				}
				return true
			})
			c := mcp.NewConnector(mcp.Options{Guard: loopback})
			ep := domain.MCPEndpoint{URL: url, Headers: tc.headers, Auth: tc.auth}
			var outputs []string
			tools, err := c.ListTools(context.Background(), ep)
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, fmt.Sprint(tools))
			s, err := c.Connect(context.Background(), ep)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			for _, name := range []string{"rpc-error", "text", "is-error", "resource", "http-error"} {
				res, err := s.CallTool(context.Background(), name, nil)
				switch {
				case err != nil:
					me := mcpError(t, err)
					outputs = append(outputs, me.Reason, me.Error(), fmt.Sprint(me.Err))
				default:
					outputs = append(outputs, res.Text)
				}
			}
			failInit = true
			_, err = c.ListTools(context.Background(), ep)
			me := mcpError(t, err)
			outputs = append(outputs, me.Reason, fmt.Sprint(me.Err))
			if want := "the server answered error -32001: you sent "; !strings.HasPrefix(me.Reason, want) || !strings.Contains(me.Reason, mcp.Redacted) {
				t.Errorf("initialize error: reason %q, want %q and the value redacted", me.Reason, want)
			}
			all := strings.Join(outputs, "\n")
			if n := strings.Count(all, mcp.Redacted); n < 8 {
				t.Errorf("%d values redacted in %s; the server's echoes did not arrive", n, all)
			}
			for _, secret := range tc.secrets {
				if strings.Contains(all, secret) {
					t.Errorf("a header value %q shows in:\n%s", secret, all)
				}
			}
		})
	}
}

// heldToken is an OAuth grant that holds one token and cannot renew it.
type heldToken string

func (h heldToken) Token(context.Context) (string, error) { return string(h), nil }
func (h heldToken) Authorize(context.Context, domain.MCPChallenge) error {
	return &domain.MCPError{Reason: "refused", Err: errors.New("refused")}
}

// TestDeadlines: a tools/list that never ends is a timeout whichever deadline ends it, the
// endpoint's or the caller's (a registration's budget), and only the caller's own end is
// "cancelled".
func TestDeadlines(t *testing.T) {
	url := mcpServer(t, mcptest.PathJSON, func(w http.ResponseWriter, r *http.Request, call rpcCall) bool {
		if call.Method != "tools/list" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the stream stays open, nothing in it
		return true
	})
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	for _, tc := range []struct {
		name     string
		timeout  time.Duration // the endpoint's
		deadline time.Duration // the caller's, 0 for none
		cancel   time.Duration // the caller cancels after, 0 for never
		want     string
	}{
		{"endpoint timeout", 300 * time.Millisecond, 0, 0, "timed out after 300ms"},
		{"caller's deadline first", 5 * time.Second, 400 * time.Millisecond, 0, "timed out after 400ms"},
		{"caller cancels", 5 * time.Second, 0, 200 * time.Millisecond, "the call was cancelled"},
	} {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if tc.deadline > 0 {
			ctx, cancel = context.WithTimeout(ctx, tc.deadline)
		}
		if tc.cancel > 0 {
			ctx, cancel = context.WithCancel(ctx)
			time.AfterFunc(tc.cancel, cancel)
		}
		// The stream never ends, so only a deadline or the cancellation can end the call; the
		// reason names which.
		_, err := c.ListTools(ctx, domain.MCPEndpoint{URL: url, Timeout: tc.timeout})
		cancel()
		if me := mcpError(t, err); me.Reason != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, me.Reason, tc.want)
		}
	}
}

// TestRenewedTokenRedacted: a token renewed in the middle of a session (the server refuses the
// first with a 401 and the grant gives a second) is redacted as the first is, in a tool result,
// an isError result and a JSON-RPC error of the calls that follow.
func TestRenewedTokenRedacted(t *testing.T) {
	const first, second = "oauth-access-first-51c0", "oauth-access-renewed-9e4b"
	url := mcpServer(t, mcptest.PathJSON, func(w http.ResponseWriter, r *http.Request, call rpcCall) bool {
		got := r.Header.Get("Authorization")
		params := string(call.Params)
		switch {
		case call.Method != "tools/call":
			return false
		case got == "Bearer "+first:
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "expired", http.StatusUnauthorized)
		case strings.Contains(params, `"rpc-error"`):
			rpcAnswer(w, call.ID, nil, map[string]any{"code": -32000, "message": "you sent " + got})
		default:
			rpcAnswer(w, call.ID, textResult("you sent "+got, strings.Contains(params, `"is-error"`)), nil)
		}
		return true
	})
	auth := &renewingToken{tokens: []string{first, second}}
	s, err := mcp.NewConnector(mcp.Options{Guard: loopback}).Connect(context.Background(), domain.MCPEndpoint{URL: url, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var outputs []string
	for _, name := range []string{"text", "is-error", "rpc-error"} {
		res, err := s.CallTool(context.Background(), name, nil)
		switch {
		case err != nil:
			me := mcpError(t, err)
			outputs = append(outputs, me.Reason, me.Error(), fmt.Sprint(me.Err))
		default:
			outputs = append(outputs, res.Text)
		}
	}
	all := strings.Join(outputs, "\n")
	if auth.renewals() != 1 || strings.Count(all, "you sent "+mcp.Redacted) < 3 {
		t.Errorf("%d renewals; want 1 and the renewed token echoed and redacted 3 times in:\n%s", auth.renewals(), all)
	}
	if strings.Contains(all, second) || strings.Contains(all, first) {
		t.Errorf("a token shows in:\n%s", all)
	}
}

// renewingToken is an OAuth grant that gives its next token each time it is asked to authorize.
type renewingToken struct {
	mu     sync.Mutex
	tokens []string
	i      int
}

func (a *renewingToken) Token(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tokens[a.i], nil
}

func (a *renewingToken) Authorize(context.Context, domain.MCPChallenge) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.i+1 == len(a.tokens) {
		return &domain.MCPError{Reason: "refused", Err: errors.New("refused")}
	}
	a.i++
	return nil
}

func (a *renewingToken) renewals() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.i
}
