// Package mcp reaches remote MCP servers for the service: it implements domain.MCPConnector over
// the official Go SDK (github.com/modelcontextprotocol/go-sdk), with the Streamable HTTP
// transport and, for servers that only speak it, the older HTTP+SSE transport. Every request
// goes through the address guard (netguard) and carries the endpoint's headers, to the
// endpoint's origin only; every answer is read under MaxAnswerBytes; every failure is a
// *domain.MCPError whose Reason is safe to show: it never holds header values, not even those a
// server echoes (what the server says is redacted, results and tool lists too).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// Defaults and bounds of the connector.
const (
	// DefaultMaxOutput caps the text of one tool result (32 KiB); a longer result is cut at a
	// character boundary and marked Truncated.
	DefaultMaxOutput = 32 << 10
	// DefaultTimeout bounds a connection (initialize) or one tools/call when the endpoint sets
	// no timeout of its own.
	DefaultTimeout = 10 * time.Second
	// MaxToolPages and MaxTools bound the tools/list pages read from one server.
	MaxToolPages = 50
	MaxTools     = 1000
	// ProtocolVersion is the MCP version the connector asks for in initialize; servers may
	// answer an older one the SDK supports.
	ProtocolVersion = "2025-11-25"
)

// Options configure a Connector; the zero value is the production setting.
type Options struct {
	// Guard decides which addresses servers may have (netguard.Policy{} allows public ones only).
	Guard netguard.Policy
	// MaxOutput caps the text of one tool result in bytes; 0 means DefaultMaxOutput.
	MaxOutput int
	// DefaultTimeout applies to endpoints whose Timeout is 0; 0 means DefaultTimeout.
	DefaultTimeout time.Duration
}

// Connector is the domain.MCPConnector of the service. It is safe for concurrent use; its
// HTTP connections are pooled across sessions.
type Connector struct {
	*OAuth    // the OAuth 2.1 client of registered servers behind OAuth, through the same guard
	opts      Options
	transport http.RoundTripper
}

var _ domain.MCPConnector = (*Connector)(nil)

// NewConnector builds a connector whose requests go through opts.Guard.
func NewConnector(opts Options) *Connector {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	return &Connector{
		OAuth:     NewOAuth(opts.Guard),
		opts:      opts,
		transport: opts.Guard.Transport(opts.DefaultTimeout),
	}
}

// ListTools connects, initializes, reads every page of tools/list and disconnects.
func (c *Connector) ListTools(ctx context.Context, ep domain.MCPEndpoint) ([]domain.MCPTool, error) {
	ctx, began := isolate(ctx), time.Now()
	s, err := c.connect(ctx, ep, began, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }() // the tools are read; a failed goodbye changes nothing
	return s.listTools(ctx, began)
}

// Connect opens a session that a run reuses for all its calls to that server; the caller
// closes it.
func (c *Connector) Connect(ctx context.Context, ep domain.MCPEndpoint) (domain.MCPSession, error) {
	s, err := c.connect(isolate(ctx), ep, time.Now(), true)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// timeout is the endpoint's own timeout or the default.
func (c *Connector) timeout(ep domain.MCPEndpoint) time.Duration {
	if ep.Timeout > 0 {
		return ep.Timeout
	}
	return c.opts.DefaultTimeout
}

// connect checks the URL, then initializes a session over Streamable HTTP, falling back to
// HTTP+SSE when the server answers the first POST with 400, 404 or 405 (the backwards
// compatibility the MCP specification describes). began is when the caller's operation began.
// listen opens the standalone event stream (a GET) on which a server sends its own requests,
// such as a question to the person (elicitation) that is not tied to a call's stream: a run's
// session listens, a listing of tools does not.
func (c *Connector) connect(ctx context.Context, ep domain.MCPEndpoint, began time.Time, listen bool) (*session, error) {
	u, err := url.Parse(ep.URL)
	if err != nil || !u.IsAbs() {
		return nil, &domain.MCPError{Reason: "the URL is not an absolute http or https URL", Err: errors.New("invalid MCP server URL")}
	}
	if err := c.opts.Guard.CheckURL(u); err != nil {
		return nil, &domain.MCPError{Reason: refusedReason(err), Err: err}
	}
	hc := &http.Client{
		Transport:     &headerTransport{base: c.transport, headers: ep.Headers, guard: c.opts.Guard, origin: originOf(u)},
		CheckRedirect: c.opts.Guard.CheckRedirect,
	}
	a := attempt{ctx: ctx, timeout: c.timeout(ep), began: began, red: newRedactor(redactedValues(ctx, ep))}
	// The SDK's own cap on an event (16 MiB by default) stays above MaxAnswerBytes, so that
	// capBody's, which fails only the call, comes first; the SDK's ends the session. MaxRetries
	// bounds the GETs that resume a call's event stream the server closed before the answer
	// (with Last-Event-ID, after the server's retry), each through the guard and the caps.
	streamable := &sdk.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc, MaxRetries: 2, DisableStandaloneSSE: !listen,
		MaxEventSize: 2 * MaxAnswerBytes}
	if ep.Auth != nil {
		streamable.OAuthHandler = authHandler{a: ep.Auth, red: a.red} // bearer tokens, authorized again on a 401 or a 403 for scope
	}
	s, pr, err := c.initialize(a, streamable)
	if err != nil && pr.legacyHint() {
		sse := &sdk.SSEClientTransport{Endpoint: ep.URL, HTTPClient: hc, MaxEventSize: 2 * MaxAnswerBytes}
		s2, pr2, err2 := c.initialize(a, sse)
		switch {
		case err2 == nil:
			s, err = s2, nil
		case pr2.spokeSSE():
			err = err2 // the server does speak HTTP+SSE: its failure there is the one to name
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// initialize runs the initialize handshake over t within a's timeout. The session gets a
// context of its own, cancelled by Close: the SSE transport ties its stream to the context it
// connects with, so the caller's context only bounds the handshake. The handshake's probe stays
// with the session: it sees that stream.
func (c *Connector) initialize(a attempt, t sdk.Transport) (*session, *probe, error) {
	hsCtx, cancel := context.WithTimeout(a.ctx, a.timeout)
	defer cancel()
	life, end := context.WithCancel(context.WithoutCancel(a.ctx))
	stop := context.AfterFunc(hsCtx, end)
	pr := &probe{}
	a.callCtx, a.pr = hsCtx, pr
	ask := newAskSlot(a.red)
	cs, err := clientFor(ask).Connect(withProbe(life, pr), t, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if !stop() && err == nil {
		err = context.Cause(hsCtx) // the handshake's time ran out as it succeeded
		_ = cs.Close()
	}
	if err != nil {
		end()
		return nil, pr, a.classify(err)
	}
	return &session{cs: cs, end: end, timeout: a.timeout, maxOutput: c.opts.MaxOutput, stream: pr, red: a.red, ask: ask}, pr, nil
}

// session is one open connection (domain.MCPSession).
type session struct {
	cs        *sdk.ClientSession
	end       context.CancelFunc
	timeout   time.Duration
	maxOutput int
	stream    *probe    // the handshake's, which the HTTP+SSE transport's stream reports to
	red       *redactor // the endpoint's header values
	ask       *askSlot  // the calls in flight, whom the server's questions go to
}

// attempt is one call of s under the caller's ctx, bounded by callCtx.
func (s *session) attempt(ctx, callCtx context.Context, began time.Time, pr *probe) attempt {
	return attempt{ctx: ctx, callCtx: callCtx, timeout: s.timeout, began: began, pr: pr, stream: s.stream, red: s.red}
}

// CallTool calls the tool the server names name with args, within the endpoint's timeout.
func (s *session) CallTool(ctx context.Context, name string, args map[string]any) (*domain.MCPResult, error) {
	began := time.Now()
	callCtx, cancel := context.WithTimeout(isolate(ctx), s.timeout)
	defer cancel()
	pr := &probe{}
	if args == nil {
		args = map[string]any{}
	}
	defer s.ask.during(ctx)()
	res, err := s.cs.CallTool(withProbe(callCtx, pr), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, s.attempt(ctx, callCtx, began, pr).classify(err)
	}
	return render(res, s.maxOutput, s.red), nil
}

// closeWait bounds how long Close waits for the server to acknowledge the end of a session.
// The SDK bounds the goodbye (a DELETE) at 5 s, and a server still busy with a call that timed
// out may take all of it; a run's end must not wait for that, so the rest goes on behind.
const closeWait = time.Second

// Close ends the session (a DELETE for a Streamable HTTP session) and its streams.
func (s *session) Close() error {
	done := make(chan error, 1)
	go func() {
		err := s.cs.Close()
		s.end()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("close MCP session: %w", err)
		}
	case <-time.After(closeWait):
	}
	return nil
}

// listTools reads every page of tools/list, within MaxToolPages, MaxTools and
// MaxToolListBytes. began is when the caller's operation began.
func (s *session) listTools(ctx context.Context, began time.Time) ([]domain.MCPTool, error) {
	var out []domain.MCPTool
	size := 0
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == MaxToolPages {
			return nil, &domain.MCPError{Reason: fmt.Sprintf("the server lists its tools in more than %d pages", MaxToolPages),
				Err: errors.New("tools/list: too many pages")}
		}
		callCtx, cancel := context.WithTimeout(ctx, s.timeout)
		pr := &probe{}
		res, err := s.cs.ListTools(withProbe(callCtx, pr), &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			err = s.attempt(ctx, callCtx, began, pr).classify(err)
			cancel()
			return nil, err
		}
		cancel()
		b, err := json.Marshal(res.Tools)
		if size += len(b); err != nil || size > MaxToolListBytes {
			return nil, &domain.MCPError{Reason: fmt.Sprintf("the server's tools take more than %d MiB", MaxToolListBytes>>20),
				Err: errors.New("tools/list: tools too large")}
		}
		for _, t := range res.Tools {
			out = append(out, tool(t, s.red))
		}
		if len(out) > MaxTools {
			return nil, &domain.MCPError{Reason: fmt.Sprintf("the server lists more than %d tools", MaxTools),
				Err: errors.New("tools/list: too many tools")}
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] {
			return nil, &domain.MCPError{Reason: "the server's tools/list pages never end (a cursor repeats)",
				Err: errors.New("tools/list: repeated cursor")}
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ForPolicy is the connector with the default limits behind the address guard p (what the
// application's mains give it: core.WithMCP(mcp.ForPolicy)).
func ForPolicy(p netguard.Policy) domain.MCPConnector { return NewConnector(Options{Guard: p}) }
