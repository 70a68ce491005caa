package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// tracedRuntime records the span context each execute reaches the feature with.
type tracedRuntime struct {
	api.RuntimeService
	mu   sync.Mutex
	seen []trace.SpanContext
}

func (f *tracedRuntime) record(ctx context.Context) {
	f.mu.Lock()
	f.seen = append(f.seen, trace.SpanContextFromContext(ctx))
	f.mu.Unlock()
}

func (f *tracedRuntime) Execute(ctx context.Context, _ domain.Principal, sid string, _ sessions.ExecuteRequest, _ sessions.Observer) (*sessions.Result, error) {
	f.record(ctx)
	return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", sid)
}

func (f *tracedRuntime) Enqueue(ctx context.Context, _ domain.Principal, sid string, _ sessions.ExecuteRequest) (*domain.Execution, error) {
	f.record(ctx)
	return nil, domain.Errorf(domain.KindNotFound, "Session %q not found", sid)
}

// TestExecuteTraceparent: a W3C traceparent (and tracestate) sent with an execute, plain,
// streaming or asynchronous, is the remote parent the run starts under; an execute without one
// has none.
func TestExecuteTraceparent(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	f := &tracedRuntime{}
	h := api.NewRuntime(f, api.Options{Auth: openapiAuth{p: domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}}})
	for _, query := range []string{"", "?stream=true", "?async=true"} {
		for _, sent := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/api/v1/runtime/"+goldenSession+"/execute/"+query, strings.NewReader(`{"content":"hi"}`))
			r.Header.Set("X-API-Key", "k")
			if sent {
				r.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
				r.Header.Set("tracestate", "vendor=x")
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if len(f.seen) != 1 {
				t.Fatalf("%q: the feature was called %d times", query, len(f.seen))
			}
			sc := f.seen[0]
			f.seen = nil
			if !sent {
				if sc.IsValid() {
					t.Errorf("%q without traceparent: span context %v", query, sc)
				}
				continue
			}
			if sc.TraceID().String() != traceID || sc.SpanID().String() != spanID || !sc.IsRemote() || !sc.IsSampled() || sc.TraceState().String() != "vendor=x" {
				t.Errorf("%q: span context %v, want the traceparent's, remote", query, sc)
			}
		}
	}
}
