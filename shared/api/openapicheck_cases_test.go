package api_test

// The cases that prove the OpenAPI helper (openapicheck_test.go) tells documented responses from
// undocumented ones, for every endpoint group.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
)

// openapiFixtures are response bodies built from the domain types through the views the handlers
// encode them with.
func openapiFixtures(t *testing.T) (agent, version, key map[string]any) {
	t.Helper()
	explicit := map[string]any{
		"name": "Support Bot", "system_prompt": "You help.",
		"llm_config": map[string]any{"model": "m1", "temperature": json.Number("0.2")},
		"tools":      []any{"search"},
	}
	now := time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.UTC)
	origin := "https://example.com/agents/support"
	a := domain.Agent{
		ID: "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10", AgentKey: domain.AgentKeyBase("Support Bot"), Name: "Support Bot",
		Architecture: domain.AgentTypeLLM, EntryPoint: "Support Bot", OriginURL: &origin, Owner: "o1", Company: "c1",
		SystemConfig: domain.Effective(explicit), VersionNumber: domain.FirstVersion, ConfigHash: domain.ConfigHash(explicit),
		CreatedAt: now, UpdatedAt: now,
	}
	v := domain.AgentVersion{
		ID: "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f", AgentID: a.ID, VersionNumber: a.VersionNumber, SystemConfig: explicit,
		Metadata: map[string]any{"config_hash": a.ConfigHash, "created_by": "o1", "created_at": now.Format(time.RFC3339)},
	}
	k := domain.APIKey{
		ID: "5f1d2c3b-4a59-4867-9d0e-1f2a3b4c5d6e", Name: "ci", Prefix: "ak_AbCdEfG", Hash: "secret-hash", Owner: "o1", Company: "c1",
		Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 60, ExpiresAt: now.Add(90 * 24 * time.Hour), CreatedAt: now,
	}
	return openapiObject(t, api.AgentJSON(&a)), openapiObject(t, api.AgentVersionJSON(&v)), openapiObject(t, api.KeyJSON(&k))
}

func openapiObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openapiWith returns a copy of m with key set to v, or removed when v is openapiDelete.
func openapiWith(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if v == openapiDelete {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

var openapiDelete = new(int)

// TestOpenAPICheck proves the helper tells documented responses from undocumented ones: it
// accepts correct bodies built from the domain types and rejects wrong ones.
func TestOpenAPICheck(t *testing.T) {
	agent, version, key := openapiFixtures(t)
	created := openapiWith(key, "key", "ak_"+strings.Repeat("A", 43))
	const id = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	agentPath := "/api/v1/agent/" + id + "/"
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	withHeader := func(kv ...string) http.Header {
		h := jsonCT.Clone()
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	envelope := func(typ, msg string) map[string]any {
		return map[string]any{"error": map[string]any{"type": typ, "message": msg}}
	}
	tests := []openapiCase{
		{name: "agent", method: "GET", path: agentPath, status: 200, header: jsonCT, body: agent},
		{name: "agent without trailing slash", method: "GET", path: strings.TrimSuffix(agentPath, "/"), status: 200, header: jsonCT, body: agent},
		{name: "agent with rate headers", method: "GET", path: agentPath, status: 200, header: withHeader("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "42",
			"RateLimit-Policy", `"per-key";q=10;w=60`, "RateLimit", `"per-key";r=3;t=42`), body: agent},
		{name: "agent list", method: "GET", path: "/api/v1/agent", status: 200, header: jsonCT, body: []any{agent, openapiWith(agent, "origin_url", nil)}},
		{name: "versions", method: "GET", path: agentPath + "versions/", status: 200, header: jsonCT, body: []any{version}},
		{name: "agent list page with a next link", method: "GET", path: "/api/v1/agent/?limit=1", status: 200,
			header: withHeader("Link", `</api/v1/agent/?limit=1&offset=1>; rel="next"`), body: []any{agent}},
		{name: "versions past the last page", method: "GET", path: agentPath + "versions/?offset=7", status: 200, header: jsonCT, body: []any{}},
		{name: "current version", method: "GET", path: agentPath + "versions/current", status: 200, header: jsonCT, body: version},
		{name: "created key", method: "POST", path: "/api/v1/api-keys/", reqBody: `{"name":"ci"}`, status: 201, header: jsonCT, body: created},
		{name: "listed keys", method: "GET", path: "/api/v1/api-keys/", status: 200, header: jsonCT, body: []any{key, openapiWith(key, "revoked_at", "2025-03-02T00:00:00Z")}},
		{name: "deleted", method: "DELETE", path: agentPath, status: 204, header: http.Header{"X-Request-Id": {"r1"}}},
		{name: "rate limited", method: "GET", path: agentPath, status: 429,
			header: withHeader("Retry-After", "5", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5",
				"RateLimit-Policy", `"per-key";q=10;w=60`, "RateLimit", `"per-key";r=0;t=5`),
			body: envelope("rate_limit_error", "Rate limit exceeded; retry later")},
		{name: "rate headers malformed", method: "GET", path: agentPath, status: 200, wantErr: true,
			header: withHeader("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "42", "RateLimit", "r=3, t=42"), body: agent},

		{name: "HEAD", method: "HEAD", path: "/api/v1/health", status: 200, header: jsonCT},

		{name: "agent id is a number", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "id", 5), wantErr: true},
		{name: "agent id is not a uuid", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "id", "agent-1"), wantErr: true},
		{name: "agent without config_hash", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "config_hash", openapiDelete), wantErr: true},
		{name: "agent with an undocumented field", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "hash", "x"), wantErr: true},
		{name: "agent with a two-part version", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "version_number", "1.0"), wantErr: true},
		{name: "agent with a bad created_at", method: "GET", path: agentPath, status: 200, header: jsonCT, body: openapiWith(agent, "created_at", "yesterday"), wantErr: true},
		{name: "agent in a list of the wrong shape", method: "GET", path: "/api/v1/agent/", status: 200, header: jsonCT, body: map[string]any{"agents": []any{agent}}, wantErr: true},
		{name: "agent list accepted with limit 101", method: "GET", path: "/api/v1/agent/?limit=101", status: 200, header: jsonCT, body: []any{agent}, wantErr: true},
		{name: "agent list with a Link that is no next link", method: "GET", path: "/api/v1/agent/", status: 200,
			header: withHeader("Link", `</api/v1/agent/?offset=1>; rel="prev"`), body: []any{agent}, wantErr: true},
		{name: "version config without a name", method: "GET", path: agentPath + "versions/current/", status: 200, header: jsonCT,
			body: openapiWith(version, "system_config", map[string]any{"system_prompt": "x"}), wantErr: true},
		{name: "agent config with a blank name", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "name", " ")), wantErr: true},
		{name: "agent config with a nameless node", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "agents", []any{map[string]any{"agent_type": "llm_agent"}})), wantErr: true},
		{name: "agent config with a foreign vector engine", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "knowledge_bases", []any{map[string]any{"name": "kb", "knowledge_base_id": "1", "knowledge_base_type": "pinecone"}})), wantErr: true},
		{name: "undocumented status", method: "GET", path: agentPath, status: 418, header: jsonCT, body: envelope("api_error", "teapot"), wantErr: true},
		{name: "created answered 200", method: "POST", path: "/api/v1/agent/", reqBody: `{"system_config":{"name":"a"}}`, status: 200, header: jsonCT, body: agent, wantErr: true},
		{name: "error type of another status", method: "GET", path: agentPath, status: 404, header: jsonCT, body: envelope("permission_error", "nope"), wantErr: true},
		{name: "error type outside the taxonomy", method: "GET", path: agentPath, status: 404, header: jsonCT, body: envelope("missing", "nope"), wantErr: true},
		{name: "401 with another message", method: "GET", path: agentPath, status: 401, header: jsonCT, body: envelope("authentication_error", "go away"), wantErr: true},
		{name: "429 without Retry-After", method: "GET", path: agentPath, status: 429, header: withHeader("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5"),
			body: envelope("rate_limit_error", "Rate limit exceeded; retry later"), wantErr: true},
		{name: "204 with a body", method: "DELETE", path: agentPath, status: 204, header: jsonCT, body: agent, wantErr: true},
		{name: "listed key shows its secret", method: "GET", path: "/api/v1/api-keys/", status: 200, header: jsonCT, body: []any{created}, wantErr: true},
		{name: "created key without its secret", method: "POST", path: "/api/v1/api-keys/", reqBody: `{}`, status: 201, header: jsonCT, body: key, wantErr: true},
		{name: "validate result both valid and invalid", method: "POST", path: "/api/v1/agent/validate/", reqBody: `{}`, status: 200, header: jsonCT,
			body: map[string]any{"valid": true, "message": "ok", "errors": []any{map[string]any{"field": "name", "message": "is required"}}}, wantErr: true},
		{name: "body that is not JSON", method: "GET", path: agentPath, status: 200, header: withHeader("Content-Type", "text/plain"), body: "hello", wantErr: true},
		{name: "accepted request the document forbids", method: "POST", path: "/api/v1/agent/", reqBody: `{"system_config":{"name":"a","llm_config":{"temperature":5}}}`,
			status: 201, header: jsonCT, body: agent, wantErr: true},
		{name: "HEAD with an undocumented status", method: "HEAD", path: agentPath, status: 202, header: jsonCT, wantErr: true},
		{name: "unknown path answered 200", method: "GET", path: "/api/v1/agents/", status: 200, header: jsonCT, body: []any{}, wantErr: true},
		{name: "undocumented method answered 200", method: "POST", path: "/api/v1/health/", status: 200, header: jsonCT, body: map[string]any{"status": "ok"}, wantErr: true},
	}
	runOpenAPICases(t, tests)
}

// openapiRuntimeFixtures are session and runtime response bodies as the handlers encode them:
// a session view, an execute result in both shapes, an execution and the stream of a run.
func openapiRuntimeFixtures() (session, result, message map[string]any, stream string) {
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	config := map[string]any{"name": "helper", "agent_type": "react_agent", "system_prompt": "You help {{ variables.who }}.",
		"llm_config": map[string]any{"provider": "local"}, "tools": []any{"calculator"}}
	session = map[string]any{
		"id": sid, "name": "helper", "config_hash": "04f9dec0db24200f", "config": config, "agent_id": nil,
		"variables": map[string]any{"who": "Ada"}, "message_count": 2, "execution_count": 1,
		"created_at": "2026-11-22T18:00:00.123456789Z", "updated_at": "2026-11-22T18:00:01Z",
	}
	result = map[string]any{
		"id": sid, "object": "agent.session", "status": "completed", "created_at": 1795370400, "completed_at": 1795370401,
		"config": config, "execution_time": 12,
		"messages": []any{map[string]any{"id": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d", "role": "assistant",
			"content": "[local model] Tool result: 4\nYou said: calculator {\"expression\":\"2+2\"}\nhistory=0", "created_at": 1795370401}},
		"metadata": map[string]any{"correlation_id": "ticket-4821", "event_count": 6, "execution_id": "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10",
			"stop_reason": "end_turn", "usage": map[string]any{"cost_usd": 0.0, "input_tokens": 9, "output_tokens": 12}},
	}
	message = map[string]any{
		"success": true, "message_id": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d", "correlation_id": "ticket-4821",
		"response": map[string]any{"content": "[local model] Tool result: 4", "tool_calls": []any{map[string]any{
			"id": "local-1", "name": "calculator", "input": map[string]any{"expression": "2+2"}, "output": "4", "is_error": false}}},
	}
	ev := func(typ string, data map[string]any) map[string]any {
		return map[string]any{"type": typ, "node": "helper", "timestamp": "2026-11-22T18:00:00.000123Z", "data": data}
	}
	msgs := []struct {
		event string
		data  any
	}{
		{"node_started", ev("node_started", map[string]any{"agent_type": "react_agent"})},
		{"model_call", ev("model_call", map[string]any{"provider": "local", "model": "", "input_tokens": 5, "output_tokens": 2,
			"stop_reason": "tool_use", "duration_ms": 0, "iteration": 1})},
		{"tool_call", ev("tool_call", map[string]any{"tool": "calculator", "tool_use_id": "local-1", "input": map[string]any{"expression": "2+2"}})},
		{"tool_result", ev("tool_result", map[string]any{"tool": "calculator", "tool_use_id": "local-1", "is_error": false, "output": "4", "duration_ms": 0})},
		{"text", map[string]any{"node": "helper", "delta": "[local model] Tool result: 4"}},
		{"model_call", ev("model_call", map[string]any{"provider": "local", "model": "", "input_tokens": 9, "output_tokens": 10,
			"stop_reason": "end_turn", "duration_ms": 0, "iteration": 2})},
		{"node_finished", ev("node_finished", map[string]any{"duration_ms": 1, "stop_reason": "end_turn"})},
		{"result", result},
	}
	var b strings.Builder
	for _, m := range msgs {
		d, _ := json.Marshal(m.data) // plain maps always encode
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", m.event, d)
	}
	return session, result, message, b.String()
}

// TestOpenAPICheckRuntime proves the helper tells documented session and runtime responses from
// undocumented ones, server-sent event streams included.
func TestOpenAPICheckRuntime(t *testing.T) {
	session, result, message, stream := openapiRuntimeFixtures()
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	const execID = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	run := "/api/v1/runtime/" + sid
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "X-Request-Id": {"r1"}}
	located := jsonCT.Clone()
	located.Set("Location", run+"/executions/"+execID+"/")
	queued := map[string]any{"id": execID, "object": "agent.execution", "session_id": sid, "status": "queued",
		"correlation_id": nil, "created_at": 1795370400, "completed_at": nil}
	completed := openapiWith(openapiWith(openapiWith(queued, "status", "completed"), "completed_at", 1795370401), "result", result)
	failed := openapiWith(openapiWith(openapiWith(queued, "status", "failed"), "completed_at", 1795370401),
		"error", map[string]any{"type": "invalid_request_error", "message": `inputs.who: variable "who" is used by a prompt ({{ variables.who }}) but was never supplied`})
	feedback := map[string]any{"id": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f", "message": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d",
		"session_id": sid, "user": "o1", "rating": 1, "comment": nil, "created_at": "2026-11-22T18:00:02Z", "updated_at": "2026-11-22T18:00:02Z"}
	history := map[string]any{"total": 3, "has_more": true, "messages": []any{
		map[string]any{"id": "1e026a7f-2037-49a1-b812-f195aefab044", "role": "user", "content": "Hello\n[image]", "timestamp": "2026-11-22T18:00:00Z"},
		map[string]any{"id": "8f29d775-3416-4f16-af76-9edc9189d669", "role": "assistant", "content": "Hi", "timestamp": "2026-11-22T18:00:01Z"},
	}}
	stored := map[string]any{"sequence": 0, "type": "node_started", "timestamp": "2026-11-22T18:00:00.10097992Z", "execution_id": execID,
		"correlation_id": "ticket-4821", "node": "helper", "data": map[string]any{"agent_type": "llm_agent"}}
	failedTool := openapiWith(openapiWith(stored, "type", "error"), "data", map[string]any{"message": "unknown tool \"x\"", "tool": "x", "tool_use_id": "t1"})
	created := map[string]any{"success": true, "session_id": sid, "config_hash": "04f9dec0db24200f"}
	fromAgent := openapiWith(openapiWith(created, "agent_id", "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"), "agent_name", "Support Assistant")
	errStream := strings.SplitAfter(stream, "\n\n")
	failure := "data: {\"error\":{\"type\":\"overloaded_error\",\"message\":\"The model is busy; retry shortly\"}}\n\n"
	failedStream := strings.Join(errStream[:2], "") + "event: failed\n" + failure
	execBody := `{"content":"Hello","correlation_id":"ticket-4821","inputs":{"who":"Ada"}}`

	runOpenAPICases(t, []openapiCase{
		{name: "session created", method: "POST", path: "/api/v1/sessions/", reqBody: `{"name":"helper","system_prompt":"Hi"}`, status: 201, header: jsonCT, body: created},
		{name: "sessions", method: "GET", path: "/api/v1/sessions", status: 200, header: jsonCT, body: []any{session, openapiWith(session, "agent_id", execID)}},
		{name: "session", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT, body: session},
		{name: "session deleted", method: "DELETE", path: "/api/v1/sessions/" + sid + "/", status: 204, header: http.Header{"X-Request-Id": {"r1"}}},
		{name: "session from agent", method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=support-assistant", status: 200, header: jsonCT, body: fromAgent},
		{name: "feedback", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":1}`, status: 200, header: jsonCT, body: feedback},
		{name: "feedback without rating or comment", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d"}`,
			status: 200, header: jsonCT, body: openapiWith(feedback, "rating", nil)},
		{name: "session with a config hash of colon-separated parts", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT,
			body: openapiWith(session, "config_hash", "v2:04f9dec0db24200f:1")},
		{name: "feedback with only a comment", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":null,"comment":"ok"}`,
			status: 200, header: jsonCT, body: openapiWith(openapiWith(feedback, "rating", nil), "comment", "ok")},
		{name: "session busy", method: "POST", path: run + "/execute/", reqBody: execBody, status: 409, header: withRetryAfter(jsonCT),
			body: map[string]any{"error": map[string]any{"type": "conflict_error", "message": "Another execution is running in this session; retry when it has finished"}}},
		{name: "session busy without Retry-After", method: "POST", path: run + "/execute/", reqBody: execBody, status: 409, header: jsonCT,
			body: map[string]any{"error": map[string]any{"type": "conflict_error", "message": "Another execution is running in this session; retry when it has finished"}}, wantErr: true},
		{name: "execute result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: result},
		{name: "execute result without messages", method: "POST", path: run + "/execute", reqBody: `{"content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}`,
			status: 200, header: jsonCT, body: openapiWith(result, "messages", []any{})},
		{name: "execute message shape", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT, body: message},
		{name: "execute message shape without a message", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","response_format":"message"}`, status: 200, header: jsonCT,
			body: openapiWith(message, "message_id", "")},
		{name: "execute stream", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse, body: stream},
		{name: "execute stream that failed", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","stream":true}`, status: 200, header: sse, body: failedStream},
		{name: "execute queued", method: "POST", path: run + "/execute/?async=true", reqBody: execBody, status: 202, header: located, body: queued},
		{name: "messages", method: "GET", path: run + "/messages/?limit=2&offset=0", status: 200, header: jsonCT, body: history},
		{name: "events", method: "GET", path: run + "/events/?correlation_id=ticket-4821", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{stored, failedTool}, "total": 2, "has_more": false}},
		{name: "execution completed", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: completed},
		{name: "execution failed", method: "GET", path: run + "/executions/" + execID, status: 200, header: jsonCT, body: failed},
		{name: "execution running", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "status", "running")},

		{name: "session with an undocumented field", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT, body: openapiWith(session, "owner", "o1"), wantErr: true},
		{name: "session with a blank config hash part", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT,
			body: openapiWith(session, "config_hash", "04f9dec0db24200f::1"), wantErr: true},
		{name: "session created answered 200", method: "POST", path: "/api/v1/sessions/", reqBody: `{"name":"helper"}`, status: 200, header: jsonCT, body: created, wantErr: true},
		{name: "feedback rating 5", method: "POST", path: "/api/v1/sessions/feedback/", reqBody: `{"message":"0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d","rating":1}`, status: 200, header: jsonCT,
			body: openapiWith(feedback, "rating", 5), wantErr: true},
		{name: "message shape with a null correlation_id", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(message, "correlation_id", nil), wantErr: true},
		{name: "execute accepted without content", method: "POST", path: run + "/execute/", reqBody: `{"content":7}`, status: 200, header: jsonCT, body: result, wantErr: true},
		{name: "execute accepted with 21 blocks", method: "POST", path: run + "/execute/", reqBody: `{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"a"},`, 21), ",") + `]}`,
			status: 200, header: jsonCT, body: result, wantErr: true},
		{name: "execution time as text", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "execution_time", "12ms"), wantErr: true},
		{name: "result of another status", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "status", "running"), wantErr: true},
		{name: "result without metadata", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "metadata", openapiDelete), wantErr: true},
		{name: "message shape with a bad id", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(message, "message_id", "m1"), wantErr: true},
		{name: "both shapes at once", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: openapiWith(result, "success", true), wantErr: true},
		{name: "stream without its result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: strings.Join(errStream[:len(errStream)-2], ""), wantErr: true},
		{name: "stream with a result before the end", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: stream + errStream[0] + errStream[len(errStream)-2], wantErr: true},
		{name: "stream that ends with an error event", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: strings.Join(errStream[:2], "") + "event: error\n" + failure, wantErr: true},
		{name: "stream with failed before the end", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: "event: failed\n" + failure + stream, wantErr: true},
		{name: "stream with an unknown event", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: "event: progress\ndata: {\"percent\":50}\n\n" + errStream[len(errStream)-2], wantErr: true},
		{name: "stream with a bad result", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse,
			body: "event: result\ndata: {\"id\":\"x\"}\n\n", wantErr: true},
		{name: "stream that is cut off", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: sse, body: strings.TrimSuffix(stream, "\n"), wantErr: true},
		{name: "stream where JSON is expected", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: sse, body: stream, wantErr: true},
		{name: "queued without Location", method: "POST", path: run + "/execute/?async=true", reqBody: execBody, status: 202, header: jsonCT, body: queued, wantErr: true},
		{name: "queued with a result", method: "POST", path: run + "/execute/", reqBody: `{"content":"Hi","async":true}`, status: 202, header: located,
			body: openapiWith(queued, "result", "soon"), wantErr: true},
		{name: "history with a system message", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: openapiWith(history, "messages", []any{map[string]any{"id": execID, "role": "system", "content": "x", "timestamp": "2026-11-22T18:00:00Z"}}), wantErr: true},
		{name: "history with Unix timestamps", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: openapiWith(history, "messages", []any{map[string]any{"id": execID, "role": "user", "content": "x", "timestamp": 1795370400}}), wantErr: true},
		{name: "event of an unknown type", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{openapiWith(stored, "type", "thinking")}, "total": 1, "has_more": false}, wantErr: true},
		{name: "event with undocumented data", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{openapiWith(stored, "data", map[string]any{"agent_type": "llm_agent", "secret": "x"})}, "total": 1, "has_more": false}, wantErr: true},
		{name: "execution failed with a bare error string", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT,
			body: openapiWith(failed, "error", "it broke"), wantErr: true},
		{name: "events without has_more", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: map[string]any{"events": []any{stored}, "total": 1}, wantErr: true},
		{name: "execution of an unknown status", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "status", "done"), wantErr: true},
		{name: "execution without completed_at", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: openapiWith(queued, "completed_at", openapiDelete), wantErr: true},
	})
}

// TestOpenAPICheckImages proves the helper tells documented upload and media responses from
// undocumented ones, image bodies included.
func TestOpenAPICheckImages(t *testing.T) {
	const name = "3f6c1a52-9d0e-4b7a-8c21-5e4f3a2b1c0d.png"
	const upload = "/api/v1/images/upload/"
	img := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	form, formBody := openapiForm(t, "image", img)
	other, otherBody := openapiForm(t, "picture", img)
	both, bothBody := openapiTwoParts(t, img)
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	uploaded := map[string]any{"url": "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/media/" + name, "media_type": "image/png", "size": len(img)}
	media := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"image/png"}, "Cache-Control": {"private, max-age=3600"}, "X-Content-Type-Options": {"nosniff"},
			"Content-Length": {fmt.Sprint(len(img))}, "X-Request-Id": {"r1"}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				h.Del(kv[i])
			} else {
				h.Set(kv[i], kv[i+1])
			}
		}
		return h
	}
	missing := map[string]any{"error": map[string]any{"type": "not_found_error", "message": "Image " + name + " not found (uploads expire after a day)"}}
	tooLarge := map[string]any{"error": map[string]any{"type": "request_too_large", "message": "The image is larger than the limit of 3750000 bytes"}}
	runOpenAPICases(t, []openapiCase{
		{name: "uploaded", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT, body: uploaded},
		{name: "uploaded locally", method: "POST", path: "/api/v1/images/upload", reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(openapiWith(uploaded, "url", "http://127.0.0.1:3000/media/"+strings.Replace(name, ".png", ".webp", 1)), "media_type", "image/webp")},
		{name: "uploaded with another part", method: "POST", path: upload, reqType: both, reqBody: string(bothBody), status: 201, header: jsonCT, body: uploaded},
		{name: "upload too large", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 413, header: jsonCT, body: tooLarge},
		{name: "media", method: "GET", path: "/media/" + name, status: 200, header: media(), body: string(img)},
		{name: "media with a slash", method: "GET", path: "/media/" + name + "/", status: 200, header: media("Content-Type", "image/jpeg", "Content-Length", ""), body: "\xff\xd8\xff\xe0"},
		{name: "media expired", method: "GET", path: "/media/" + name, status: 404, header: jsonCT, body: missing},

		{name: "upload answered 200", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 200, header: jsonCT, body: uploaded, wantErr: true},
		{name: "upload url outside /media/", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(uploaded, "url", "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/images/"+name), wantErr: true},
		{name: "upload url without a base", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(uploaded, "url", "/media/"+name), wantErr: true},
		{name: "upload of another type", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(uploaded, "media_type", "image/svg+xml"), wantErr: true},
		{name: "upload of an empty image", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(uploaded, "size", 0), wantErr: true},
		{name: "upload with an undocumented field", method: "POST", path: upload, reqType: form, reqBody: string(formBody), status: 201, header: jsonCT,
			body: openapiWith(uploaded, "key", "tmp/images/"+name), wantErr: true},
		{name: "upload accepted as JSON", method: "POST", path: upload, reqBody: `{"image":"iVBORw0KGgo="}`, status: 201, header: jsonCT, body: uploaded, wantErr: true},
		{name: "upload accepted without an image part", method: "POST", path: upload, reqType: other, reqBody: string(otherBody), status: 201, header: jsonCT, body: uploaded, wantErr: true},
		{name: "upload refused with 415", method: "POST", path: upload, reqBody: `{}`, status: 415, header: jsonCT,
			body: map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "Unsupported media type"}}, wantErr: true},
		{name: "media of another type", method: "GET", path: "/media/" + name, status: 200, header: media("Content-Type", "image/svg+xml"), body: "<svg/>", wantErr: true},
		{name: "media as JSON", method: "GET", path: "/media/" + name, status: 200, header: media("Content-Type", "application/json"), body: `{"data":"iVBORw0KGgo="}`, wantErr: true},
		{name: "media without nosniff", method: "GET", path: "/media/" + name, status: 200, header: media("X-Content-Type-Options", ""), body: string(img), wantErr: true},
		{name: "media cached publicly", method: "GET", path: "/media/" + name, status: 200, header: media("Cache-Control", "public, max-age=86400"), body: string(img), wantErr: true},
		{name: "media of a malformed name served", method: "GET", path: "/media/passwd", status: 200, header: media(), body: string(img), wantErr: true},
		{name: "media needing a key", method: "GET", path: "/media/" + name, status: 401, header: jsonCT,
			body: map[string]any{"error": map[string]any{"type": "authentication_error", "message": "Invalid or missing authentication credentials"}}, wantErr: true},
		{name: "media expired as text", method: "GET", path: "/media/" + name, status: 404, header: media("Content-Type", "text/plain"), body: "gone", wantErr: true},
	})
}

// openapiTwoParts is a form with a text part before the image part.
func openapiTwoParts(t *testing.T, img []byte) (contentType string, body []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.WriteField("purpose", "receipt"); err != nil {
		t.Fatal(err)
	}
	part, err := w.CreateFormFile("image", "receipt.png")
	if err == nil {
		_, err = part.Write(img)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.Bytes()
}

// withRetryAfter is h with the Retry-After every 409 carries.
func withRetryAfter(h http.Header) http.Header {
	h = h.Clone()
	h.Set("Retry-After", "1")
	return h
}
