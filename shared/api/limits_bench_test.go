package api_test

import (
	"fmt"
	"testing"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// BenchmarkLimits measures what the limits cost a request on a warm instance (keys and the
// company's limits cached), in DynamoDB calls and time per request, beside the same request
// without them: a read (GET an agent) under no rate limit, a key's, and a key's and its
// company's; an execute (local model) under no budget and under a key's and a company's.
func BenchmarkLimits(b *testing.B) {
	m := &ddbMeter{}
	s := newStack(b, m.option)
	tokens := int64(1 << 40)
	for _, tc := range []struct {
		name    string
		key     auth.NewKey
		company string // a PUT /api/v1/limits/ body, or ""
		execute bool
	}{
		{name: "read/no-limit"},
		{name: "read/key-rate", key: auth.NewKey{RateLimit: 1_000_000}},
		{name: "read/key-and-company-rate", key: auth.NewKey{RateLimit: 1_000_000}, company: `{"requests_per_minute":1000000}`},
		{name: "execute/no-budget", execute: true},
		{name: "execute/key-and-company-budget", key: auth.NewKey{Budget: domain.Budget{MonthlyTokens: &tokens}},
			company: `{"monthly_cost_usd":1000000}`, execute: true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := tc.key
			in.Name = "bench"
			company, key := s.limitedKey(b, "bench", in, tc.company)
			method, path, body, want := "GET", "", []byte(nil), 200
			if tc.execute {
				sid := s.session(key, flatSession)
				method, path, body = "POST", "/api/v1/runtime/"+sid+"/execute/", []byte(`{"content":"hi"}`)
			} else {
				id := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: fmt.Sprintf(`{"system_config":{"name":"Bench %s","system_prompt":"You help."}}`, company)}).json(b)["id"].(string)
				path = "/api/v1/agent/" + id + "/"
			}
			s.serve(method, path, key, body) // warm the caches, as a warm Lambda has them
			m.reset()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := s.serve(method, path, key, body); r != want {
					b.Fatalf("status %d", r)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(m.calls.Load())/float64(b.N), "ddb-calls/op")
			b.ReportMetric(float64(m.nanos.Load())/float64(b.N)/1e3, "ddb-µs/op")
		})
	}
}
