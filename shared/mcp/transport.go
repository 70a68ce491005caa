package mcp

import (
	"context"
	"mime"
	"net/http"
	"sync"

	"github.com/agentorch/agentorch/shared/netguard"
)

// reservedHeaders are set by the transport itself; an endpoint's headers never replace them.
var reservedHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "Host": true,
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true,
}

// headerTransport adds an endpoint's headers to every request, checks every URL with the guard
// (the HTTP+SSE transport posts to an endpoint the server names) and tells the probe in the
// request's context what the server answered. It never logs or reports header values.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	guard   netguard.Policy
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr := probeFrom(req.Context())
	if err := t.guard.CheckURL(req.URL); err != nil {
		pr.failed(err)
		return nil, err
	}
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for name, value := range t.headers {
			if !reservedHeaders[http.CanonicalHeaderKey(name)] {
				req.Header.Set(name, value)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		pr.failed(err)
		return nil, err
	}
	if req.Method != http.MethodDelete {
		pr.answered(resp)
	}
	return resp, nil
}

// probe records what the server answered during one call, so that a failure can be named by
// what happened on the wire rather than by the SDK's error text.
type probe struct {
	mu          sync.Mutex
	err         error  // the last transport error (refused, unreachable, guard)
	status      int    // the last HTTP status
	contentType string // its media type
	firstStatus int    // the status of the first request (the initialize POST)
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

func (p *probe) answered(resp *http.Response) {
	if p == nil {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstStatus == 0 {
		p.firstStatus = resp.StatusCode
	}
	p.status, p.contentType = resp.StatusCode, mt
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
