package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"
)

// ddbOps counts the DynamoDB operations made on behalf of the stack's requests by their
// input's type (QueryInput, ScanInput, …), beside ddbMeter's count and time.
type ddbOps struct {
	mu  sync.Mutex
	ops map[string]int
}

func (m *ddbOps) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbOps",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if ctx.Value(inRequest{}) != nil {
					op := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", in.Parameters), "*dynamodb."), "Input")
					m.mu.Lock()
					m.ops[op]++
					m.mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

func (m *ddbOps) reset() {
	m.mu.Lock()
	m.ops = map[string]int{}
	m.mu.Unlock()
}

// report adds each operation's count per op, as ddb-<Operation>/op.
func (m *ddbOps) report(b *testing.B) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for op, n := range m.ops {
		b.ReportMetric(float64(n)/float64(b.N), "ddb-"+op+"/op")
	}
}

// BenchmarkExecuteMemory measures an llm_agent execute with the local model through the real
// handler and stack (DynamoDB Local, OpenSearch's stand-in, the local embedder) without memory,
// with memory on (a session with a user: one block and five records stored, recall top_k 5),
// and with extraction queued after the turn: the DynamoDB calls by operation, and the time.
// Memory's recall is meant to add one Query (the scope's blocks) and one k-NN search (the
// records, which carry their text), never a Scan.
func BenchmarkExecuteMemory(b *testing.B) {
	const memoryCfg = `{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"},` +
		`"memory":{"blocks":[{"label":"human","description":"What you know of the user"}],"recall":{"top_k":5}%s}}`
	for _, tc := range []struct{ name, cfg, user string }{
		{"off", flatSession, ""},
		{"on-no-user", fmt.Sprintf(memoryCfg, ""), ""},
		{"on", fmt.Sprintf(memoryCfg, ""), "bench-user"},
		{"on-extract", fmt.Sprintf(memoryCfg, `,"extract":{"enabled":true}`), "bench-user"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m, ops := &ddbMeter{}, &ddbOps{ops: map[string]int{}}
			s := newStack(b, m.option, ops.option)
			key := s.key("alice", "acme")
			body, user := tc.cfg, tc.user
			if user != "" {
				// A user of its own: OpenSearch's stand-in outlives the stack of one run.
				user += "-" + uuid.NewString()
				body = `{"user_id":"` + user + `",` + tc.cfg[1:]
				for _, text := range []string{"The user lives in Lyon.", "The user bakes rye bread.", "The user is allergic to nuts.",
					"The user has two children.", "The user prefers short answers."} {
					if r := s.do(req{method: "POST", path: "/api/v1/memory/records/", key: key,
						body: fmt.Sprintf(`{"user_id":%q,"agent_id":"inline:Helper","text":%q}`, user, text)}); r.status != 201 {
						b.Fatalf("record: %d %s", r.status, r.body)
					}
				}
				if r := s.do(req{method: "POST", path: "/api/v1/memory/blocks/", key: key,
					body: `{"user_id":"` + user + `","agent_id":"inline:Helper","label":"human","value":"Alice, a baker."}`}); r.status != 201 {
					b.Fatalf("block: %d %s", r.status, r.body)
				}
			}
			sid := s.session(key, body)
			path := "/api/v1/runtime/" + sid + "/execute/"
			content := []byte(`{"content":"Where do I live and what do I bake?"}`)
			out := s.execute(key, sid, string(content))
			if r := reply(b, out); (tc.user != "") != strings.Contains(r, "lives in Lyon") {
				b.Fatalf("the reply shows the recalled memory: %t, want %t: %q", strings.Contains(r, "lives in Lyon"), tc.user != "", r)
			}
			m.reset()
			ops.reset()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if r := s.serve("POST", path, key, content); r != 200 {
					b.Fatalf("status %d", r)
				}
			}
			m.report(b, time.Since(start))
			ops.report(b)
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "us/op")
		})
	}
}
