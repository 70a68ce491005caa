package mcp

import (
	"context"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/netguard"
)

// reservedHeaders are set by the transport itself; an endpoint's headers never replace them.
var reservedHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "Host": true,
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true,
}

// headerTransport adds an endpoint's headers to every request, checks every URL with the guard
// (the HTTP+SSE transport posts to an endpoint the server names), refuses every request to
// another origin than the endpoint's (a redirect, or the POST endpoint of the HTTP+SSE
// transport: the headers are the registered origin's credentials), bounds what the server
// answers (capBody) and tells the probe in the request's context what the server answered. It
// never logs or reports header values, and never sends a Referer.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	guard   netguard.Policy
	origin  origin // the endpoint's
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr := probeFrom(req.Context())
	if err := t.guard.CheckURL(req.URL); err != nil {
		pr.failed(err)
		return nil, err
	}
	if o := originOf(req.URL); o != t.origin {
		err := &otherOriginError{origin: o}
		pr.failed(err)
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Del("Referer") // Go's client sets it on redirects, with the whole previous URL
	for name, value := range t.headers {
		if !reservedHeaders[http.CanonicalHeaderKey(name)] {
			req.Header.Set(name, value)
		}
	}
	// The run's trace goes on to the server: W3C traceparent and tracestate of the span the
	// request's context carries (the tool call's, or the caller's when tracing is off).
	propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		pr.failed(err)
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if req.Method != http.MethodDelete {
		pr.answered(resp.StatusCode, mt)
	}
	if err := capBody(resp, mt, pr); err != nil {
		pr.failed(err)
		return nil, err
	}
	return resp, nil
}

// origin is a URL's scheme, host and port, the unit the headers belong to.
type origin struct{ scheme, host, port string }

// originOf is u's origin, with the scheme's default port written out.
func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), port: u.Port()}
	if o.port == "" {
		switch o.scheme {
		case "http":
			o.port = "80"
		case "https":
			o.port = "443"
		}
	}
	return o
}

func (o origin) String() string {
	return o.scheme + "://" + net.JoinHostPort(o.host, o.port)
}

// otherOriginError is a request the server sent to another origin than its own.
type otherOriginError struct{ origin origin }

func (e *otherOriginError) Error() string {
	return "request to " + e.origin.String() + " refused: not the MCP server's origin"
}

// probe records what the server answered during one call, so that a failure can be named by
// what happened on the wire rather than by the SDK's error text.
type probe struct {
	mu          sync.Mutex
	err         error  // the last transport error (refused, unreachable, guard)
	status      int    // the last HTTP status
	contentType string // its media type
	firstStatus int    // the status of the first request (the initialize POST, or HTTP+SSE's GET)
	firstType   string // its media type
	oversize    bool   // an answer or event was larger than MaxAnswerBytes
}

type probeKey struct{}

// withProbe returns ctx carrying pr for the requests made under it.
func withProbe(ctx context.Context, pr *probe) context.Context {
	return context.WithValue(ctx, probeKey{}, pr)
}

// probeFrom returns the probe of ctx, or nil; a nil probe records nothing.
func probeFrom(ctx context.Context) *probe {
	pr, _ := ctx.Value(probeKey{}).(*probe)
	return pr
}

func (p *probe) failed(err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

func (p *probe) answered(status int, mediaType string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstStatus == 0 {
		p.firstStatus, p.firstType = status, mediaType
	}
	p.status, p.contentType = status, mediaType
}

// tooLarge records an answer past MaxAnswerBytes; it stays recorded whatever follows.
func (p *probe) tooLarge() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.oversize = true
}

// wasTooLarge reports an answer past MaxAnswerBytes.
func (p *probe) wasTooLarge() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.oversize
}

// seen returns what the probe recorded.
func (p *probe) seen() (status int, contentType string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status, p.contentType, p.err
}

// legacyHint reports a first answer that may come from a server of the older HTTP+SSE
// transport, which does not take a POST at its URL.
func (p *probe) legacyHint() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.firstStatus {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// spokeSSE reports a server that answered the HTTP+SSE transport's GET with an event stream.
func (p *probe) spokeSSE() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstStatus == http.StatusOK && p.firstType == "text/event-stream"
}
