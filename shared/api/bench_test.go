package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/localmodel"
)

// ddbMeter counts DynamoDB requests and the time spent in them, by a middleware on the real SDK
// client, so benchmarks can report round trips per call and the handler's own overhead.
// ddbMeter counts the DynamoDB calls made on behalf of the stack's requests (do and serve mark
// them), and their time; work the test stack's event sources run beside them (the webhook
// fan-out of a finished run, the worker) is not the request's and is not counted.
type ddbMeter struct {
	calls atomic.Int64
	nanos atomic.Int64
}

// inRequest marks the context of a request the stack serves.
type inRequest struct{}

// served is r with its context marked as a request the stack serves.
func served(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), inRequest{}, true))
}

func (m *ddbMeter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbMeter",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if ctx.Value(inRequest{}) == nil {
					return next.HandleInitialize(ctx, in)
				}
				start := time.Now()
				out, md, err := next.HandleInitialize(ctx, in)
				m.calls.Add(1)
				m.nanos.Add(int64(time.Since(start)))
				return out, md, err
			}), middleware.Before)
	})
}

func (m *ddbMeter) reset() { m.calls.Store(0); m.nanos.Store(0) }

// report adds ddb-calls/op and the handler's overhead without DynamoDB time.
func (m *ddbMeter) report(b *testing.B, elapsed time.Duration) {
	b.ReportMetric(float64(m.calls.Load())/float64(b.N), "ddb-calls/op")
	b.ReportMetric(float64(elapsed.Nanoseconds()-m.nanos.Load())/float64(b.N), "overhead-ns/op")
}

func BenchmarkGetAgent(b *testing.B) {
	m := &ddbMeter{}
	s := newStack(b, m.option)
	key := s.key("alice", "acme")
	id := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(b)["id"].(string)
	path := "/api/v1/agent/" + id + "/"
	s.do(req{method: "GET", path: path, key: key}) // warm the per-instance key cache, as a warm Lambda has it
	m.reset()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if r := s.serve("GET", path, key, nil); r != 200 {
			b.Fatalf("status %d", r)
		}
	}
	m.report(b, time.Since(start))
}

// BenchmarkCreateAgent measures a create under a fresh name (the agent_key is free: one
// TransactWriteItems) and under a taken name (the key gets a suffix from the counter: three calls).
func BenchmarkCreateAgent(b *testing.B) {
	m := &ddbMeter{}
	s := newStack(b, m.option)
	key := s.key("alice", "acme")
	s.do(req{method: "GET", path: "/api/v1/agent/", key: key})
	for _, tc := range []struct {
		name string
		body func(i int) []byte
	}{
		{"free-key", func(i int) []byte {
			return []byte(fmt.Sprintf(`{"system_config":{"name":"Bench %d","system_prompt":"You help."}}`, i))
		}},
		{"taken-key", func(int) []byte { return []byte(supportConfig) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.name == "taken-key" {
				s.serve("POST", "/api/v1/agent/", key, []byte(supportConfig))
			}
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = tc.body(i + b.N*1000)
			}
			m.reset()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if r := s.serve("POST", "/api/v1/agent/", key, bodies[i]); r != 201 {
					b.Fatalf("status %d", r)
				}
			}
			m.report(b, time.Since(start))
		})
	}
}

// BenchmarkExecute measures an llm_agent execute with the local model: DynamoDB round trips
// (lease + checkpoint, history, commit) and the service's overhead without DynamoDB time. The
// local model itself costs a few microseconds.
func BenchmarkExecute(b *testing.B) {
	for _, tc := range []struct{ name, cfg, content string }{
		{"llm", flatSession, `{"content":"hello there"}`},
		{"react-1-tool-step", `{"name":"R","agent_type":"react_agent","system_prompt":"Use tools.","tools":["calculator"]}`,
			`{"content":"calculator {\"expression\": \"2+2\"}"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := &ddbMeter{}
			s := newStack(b, m.option)
			key := s.key("alice", "acme")
			sid := s.session(key, tc.cfg)
			path := "/api/v1/runtime/" + sid + "/execute/"
			body := []byte(tc.content)
			s.serve("POST", path, key, body)
			m.reset()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if r := s.serve("POST", path, key, body); r != 200 {
					b.Fatalf("status %d", r)
				}
			}
			m.report(b, time.Since(start))
		})
	}
}

// BenchmarkExecuteHandWritten is the floor the engine is compared with: the same three store
// calls and one local model call, written by hand with no engine, HTTP layer or events.
func BenchmarkExecuteHandWritten(b *testing.B) {
	m := &ddbMeter{}
	s := newStack(b, m.option)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	p := domain.Principal{Owner: "alice", Company: "acme"}
	ctx := context.Background()
	model := localmodel.Model{}
	m.reset()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		now := time.Now().UTC()
		lease := uuid.NewString()
		sess, err := s.app.Store.AcquireSession(ctx, p, sid, lease, now.Add(time.Minute), now)
		if err != nil {
			b.Fatal(err)
		}
		used := 0
		hist, err := s.app.Store.History(ctx, sid, func(m domain.Message) bool {
			used += engine.EstimateTokens(m.Content)
			return used <= engine.LocalContextWindow/2-domain.DefaultMaxTokens
		})
		if err != nil {
			b.Fatal(err)
		}
		turns := make([]domain.Turn, 0, len(hist)+1)
		for _, h := range hist {
			turns = append(turns, domain.Turn{Role: h.Role, Parts: []domain.Part{{Type: domain.PartText, Text: h.Content}}})
		}
		turns = append(turns, domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "hello there"}}})
		out, err := model.Converse(ctx, domain.ModelRequest{System: "You are terse.", Turns: turns})
		if err != nil {
			b.Fatal(err)
		}
		sess.MessageCount += 2
		sess.VisibleCount += 2
		msgs := []domain.Message{
			{ID: uuid.NewString(), Seq: sess.MessageCount - 1, Role: "user", Content: "hello there", Visible: true, CreatedAt: now},
			{ID: uuid.NewString(), Seq: sess.MessageCount, Role: "assistant", Content: out.Text(), Visible: true, CreatedAt: now},
		}
		if err := s.app.Store.Commit(ctx, domain.Commit{Session: sess, LeaseID: lease, Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b, time.Since(start))
}
