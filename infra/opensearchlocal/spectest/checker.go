package spectest

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// requestPatches apply to the closed spec that requests are checked against; each names the
// evidence that OpenSearch 2.19 accepts what the spec refuses.
var requestPatches = []specPatch{
	{"#/components/requestBodies/bulk/content",
		"_bulk takes only application/x-ndjson, but OpenSearch takes the NDJSON body as application/json too, and the official Go client sends it so (opensearch-go v4 sets application/json on every body it does not type otherwise): RestController.dispatchRequest refuses a stream handler's (RestBulkAction) body only when its Content-Type is neither JSON nor SMILE, and application/x-ndjson is itself read as JSON (opensearch-project/OpenSearch server/src/main/java/org/opensearch/rest/RestController.java)",
		func(content map[string]any) error {
			if _, ok := content["application/json"]; ok {
				return fmt.Errorf("has application/json now: drop this patch")
			}
			nd, ok := content["application/x-ndjson"]
			if !ok {
				return fmt.Errorf("has no application/x-ndjson: revisit this patch")
			}
			content["application/json"] = nd
			return nil
		}},
}

// Check says what a Checker checks.
type Check int

// What a Checker checks: the requests it passes on, the responses it passes back, or both.
const (
	Requests Check = 1 << iota
	Responses
)

// Request is one request a Checker passed on.
type Request struct {
	Method      string
	URL         *url.URL
	ContentType string
	Body        []byte
	Operation   string // the spec's operationId ("" when it has none)
}

// Checker is an http.Handler in front of a server under test: it checks what passes through it
// against the spec, reports every mismatch to t (Errorf: the calls go on) and records the
// requests and the operations and statuses it checked.
type Checker struct {
	t     testing.TB
	spec  *Spec
	next  http.Handler
	check Check

	mu   sync.Mutex
	seen map[string]int // "<operationId> <status>" → count
	reqs []Request
}

// NewChecker returns a Checker of what for next.
func NewChecker(t testing.TB, spec *Spec, next http.Handler, what Check) *Checker {
	return &Checker{t: t, spec: spec, next: next, check: what, seen: map[string]int{}}
}

func (c *Checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.t.Errorf("%s %s: read the body: %v", r.Method, r.URL.RequestURI(), err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := Request{Method: r.Method, URL: r.URL, ContentType: r.Header.Get("Content-Type"), Body: body}
	if c.check&Requests != 0 {
		id, err := c.spec.ValidateRequest(r.Method, r.URL, req.ContentType, body)
		req.Operation = id
		if err != nil {
			c.t.Errorf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
		}
	}
	rec := httptest.NewRecorder()
	c.next.ServeHTTP(rec, r)
	out := rec.Body.Bytes()
	if c.check&Responses != 0 {
		if err := c.spec.ValidateResponse(r.Method, r.URL.EscapedPath(), rec.Code, out); err != nil {
			c.t.Errorf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
		}
	}
	if _, op := c.spec.Operation(r.Method, r.URL.EscapedPath()); op != nil {
		req.Operation, _ = op["operationId"].(string)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", req.Operation, rec.Code)]++
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}

// Seen counts the requests checked by "<operationId> <status>".
func (c *Checker) Seen() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.seen)
}

// Recorded returns the requests passed on so far, in order.
func (c *Checker) Recorded() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.reqs...)
}
