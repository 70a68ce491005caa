package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// ddbMeter counts DynamoDB requests and the time spent in them, by a middleware on the real SDK
// client, so benchmarks can report round trips per call and the handler's own overhead.
type ddbMeter struct {
	calls atomic.Int64
	nanos atomic.Int64
}

func (m *ddbMeter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbMeter",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
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
