package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestOpenAPIModelCallCost: a model_call event documents its call's cost_usd — a price, 0 (the
// local model), null (a model without a price) or absent (an event recorded before it was kept)
// — stored and streamed alike, and nothing else: not a negative number, not text.
func TestOpenAPIModelCallCost(t *testing.T) {
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	const execID = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	run := "/api/v1/runtime/" + sid
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "X-Request-Id": {"r1"}}
	_, result, _, _ := openapiRuntimeFixtures()
	data := map[string]any{"provider": "openai", "model": "gpt-4.1-mini", "input_tokens": 120, "output_tokens": 30,
		"stop_reason": "end_turn", "duration_ms": 850, "iteration": 1, "output": "Hi"}
	stored := func(cost any) map[string]any {
		d := data
		if cost != openapiDelete {
			d = openapiWith(data, "cost_usd", cost)
		}
		ev := map[string]any{"sequence": 1, "type": "model_call", "timestamp": "2026-11-22T18:00:00.2Z", "execution_id": execID,
			"correlation_id": nil, "node": "helper", "data": d}
		return map[string]any{"events": []any{ev}, "total": 1, "has_more": false}
	}
	res, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	stream := func(cost string) string {
		return "event: model_call\ndata: {\"type\":\"model_call\",\"node\":\"helper\",\"timestamp\":\"2026-11-22T18:00:00.2Z\",\"data\":" +
			"{\"provider\":\"openai\",\"model\":\"gpt-4.1-mini\",\"input_tokens\":120,\"output_tokens\":30,\"stop_reason\":\"end_turn\"," +
			"\"duration_ms\":850,\"iteration\":1,\"cost_usd\":" + cost + "}}\n\n" +
			"event: result\ndata: " + string(res) + "\n\n"
	}
	events := run + "/events/"
	runOpenAPICases(t, []openapiCase{
		{name: "priced call", method: "GET", path: events, status: 200, header: jsonCT, body: stored(0.000096)},
		{name: "local call", method: "GET", path: events, status: 200, header: jsonCT, body: stored(0)},
		{name: "unpriced call", method: "GET", path: events, status: 200, header: jsonCT, body: stored(nil)},
		{name: "call recorded before costs", method: "GET", path: events, status: 200, header: jsonCT, body: stored(openapiDelete)},
		{name: "priced call streamed", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","stream":true}`, status: 200, header: sse, body: stream("0.000096")},
		{name: "unpriced call streamed", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","stream":true}`, status: 200, header: sse, body: stream("null")},

		{name: "negative cost", method: "GET", path: events, status: 200, header: jsonCT, body: stored(-0.01), wantErr: true},
		{name: "cost as text", method: "GET", path: events, status: 200, header: jsonCT, body: stored("$0.0001"), wantErr: true},
		{name: "cost as text streamed", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","stream":true}`, status: 200, header: sse,
			body: stream(`"unknown"`), wantErr: true},
	})
}
