package api_test

// The cases that prove the OpenAPI document describes tools as objects and executions that wait:
// tool entries in configurations, answers in execute bodies, paused results in every shape,
// the stream that ends with requires_action, and the tool events.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toolDocEntries are tools entries of every documented kind.
func toolDocEntries() []any {
	return []any{
		"calculator",
		map[string]any{"type": "mcp", "server": "everything", "allowed_tools": []any{"echo", "get-sum"},
			"require_approval": map[string]any{"always": []any{"get-sum"}}},
		map[string]any{"type": "mcp", "server": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f", "require_approval": "always"},
		map[string]any{"type": "function", "name": "lookup_order", "description": "Look an order up",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"}}},
	}
}

// toolDocBody is a create-agent request whose tools are entries.
func toolDocBody(t *testing.T, entries ...any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"system_config": map[string]any{"name": "Desk", "agent_type": "react_agent", "tools": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpenAPICheckTools proves the document accepts what tools and paused executions look like
// on the wire and refuses what the service never accepts or sends.
func TestOpenAPICheckTools(t *testing.T) {
	agent, _, _ := openapiFixtures(t)
	withTools := func(entries ...any) map[string]any {
		return openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "tools", entries))
	}
	session, result, message, stream := openapiRuntimeFixtures()
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	const execID = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	run := "/api/v1/runtime/" + sid
	agentPath := "/api/v1/agent/" + execID + "/"
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "X-Request-Id": {"r1"}}
	execBody := `{"content":"lookup_order {\"order_id\":\"A-1\"}"}`
	mk := func(entry any) string { return toolDocBody(t, entry) }
	fn := func(k string, v any) map[string]any { return openapiWith(toolDocEntries()[3].(map[string]any), k, v) }
	mcp := func(k string, v any) map[string]any { return openapiWith(toolDocEntries()[1].(map[string]any), k, v) }

	// A paused execution, as results, polls, sessions and history show it.
	call := map[string]any{"id": "local-1", "name": "lookup_order", "arguments": map[string]any{"order_id": "A-1"}, "kind": "function", "node": "Desk"}
	approvalCall := map[string]any{"id": "local-2", "name": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}, "kind": "mcp", "node": "Desk", "server": "everything"}
	action := map[string]any{"type": "tool_calls", "execution_id": execID, "tool_calls": []any{call}}
	approval := map[string]any{"type": "approval", "execution_id": execID, "tool_calls": []any{approvalCall}}
	turn := map[string]any{"id": "0b3f5c2e-8d41-4a7b-9c6e-2f1d0a9b8c7d", "role": "assistant", "content": "", "created_at": 1795370400,
		"tool_calls": []any{call}}
	paused := openapiWith(openapiWith(openapiWith(result, "status", "requires_action"), "required_action", action), "messages", []any{turn})
	paused = openapiWith(paused, "completed_at", paused["created_at"])
	paused = openapiWith(paused, "metadata", openapiWith(result["metadata"].(map[string]any), "stop_reason", ""))
	pausedMessage := openapiWith(openapiWith(openapiWith(message, "status", "requires_action"), "required_action", action),
		"response", map[string]any{"content": "", "tool_calls": []any{call}})
	queued := map[string]any{"id": execID, "object": "agent.execution", "session_id": sid, "status": "requires_action",
		"correlation_id": nil, "created_at": 1795370400, "completed_at": nil, "required_action": approval}
	waiting := openapiWith(session, "required_action", action)
	history := map[string]any{"total": 2, "has_more": false, "messages": []any{
		map[string]any{"id": "1e026a7f-2037-49a1-b812-f195aefab044", "role": "user", "content": "lookup_order", "timestamp": "2026-11-22T18:00:00Z"},
		map[string]any{"id": "8f29d775-3416-4f16-af76-9edc9189d669", "role": "assistant", "content": "", "timestamp": "2026-11-22T18:00:01Z",
			"tool_calls": []any{call}},
	}}

	// Tool events.
	event := func(typ string, data map[string]any) map[string]any {
		return map[string]any{"sequence": 1, "type": typ, "timestamp": "2026-11-22T18:00:00.10097992Z", "execution_id": execID,
			"correlation_id": nil, "node": "Desk", "data": data}
	}
	events := func(evs ...any) map[string]any {
		return map[string]any{"events": evs, "total": len(evs), "has_more": false}
	}
	mcpCall := map[string]any{"tool": "get-sum", "tool_use_id": "local-2", "input": map[string]any{"a": 2, "b": 3}, "kind": "mcp", "server": "everything"}
	mcpResult := map[string]any{"tool": "get-sum", "tool_use_id": "local-2", "is_error": false, "output": "The sum of 2 and 3 is 5.",
		"duration_ms": 4, "kind": "mcp", "server": "everything"}
	fnResult := map[string]any{"tool": "lookup_order", "tool_use_id": "local-1", "is_error": false, "output": `{"status":"shipped"}`, "duration_ms": 0, "kind": "function"}
	approved := map[string]any{"tool": "get-sum", "tool_use_id": "local-2", "approve": false, "reason": "not now", "kind": "mcp", "server": "everything"}
	waits := map[string]any{"type": "approval", "tool_call_ids": []any{"local-2"}}
	waitsEvent := openapiWith(openapiWith(event("requires_action", waits), "node", openapiDelete), "sequence", 5)

	// A stream that pauses: the runtime events, then requires_action with the paused result.
	parts := strings.SplitAfter(stream, "\n\n")
	line := func(name string, data any) string {
		b, _ := json.Marshal(data)
		return "event: " + name + "\ndata: " + string(b) + "\n\n"
	}
	head := strings.Join(parts[:3], "") // node_started, model_call, tool_call
	pausedStream := head + line("requires_action", paused)
	pausedMessageStream := head + line("requires_action", pausedMessage)
	streamed := func(data map[string]any) map[string]any {
		return map[string]any{"type": "tool_result", "node": "Desk", "timestamp": "2026-11-22T18:00:00.000123Z", "data": data}
	}
	answeredStream := parts[0] + line("tool_result", streamed(fnResult)) + strings.Join(parts[4:], "")

	runOpenAPICases(t, []openapiCase{
		{name: "agent created with every kind of tool entry", method: "POST", path: "/api/v1/agent/", reqBody: toolDocBody(t, toolDocEntries()...),
			status: 201, header: jsonCT, body: withTools(toolDocEntries()...)},
		{name: "agent with null optional fields", method: "GET", path: agentPath, status: 200, header: jsonCT,
			body: withTools(mcp("allowed_tools", nil), mcp("require_approval", nil), fn("parameters", nil), fn("description", nil))},
		{name: "agent with require_approval never", method: "GET", path: agentPath, status: 200, header: jsonCT, body: withTools(mcp("require_approval", "never"))},
		{name: "function without description or parameters", method: "POST", path: "/api/v1/agent/", status: 201, header: jsonCT,
			reqBody: mk(map[string]any{"type": "function", "name": "ping"}), body: withTools(map[string]any{"type": "function", "name": "ping"})},
		{name: "execute answering tool calls", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"tool_results":[{"tool_call_id":"local-1","output":"shipped"},{"tool_call_id":"local-2","output":{"status":"shipped"},"is_error":false}]}`},
		{name: "execute answering with a null output", method: "POST", path: run + "/execute/?stream=true", status: 200, header: sse, body: answeredStream,
			reqBody: `{"tool_results":[{"tool_call_id":"local-1","output":null,"is_error":true}]}`},
		{name: "execute answering approvals", method: "POST", path: run + "/execute/?format=message", status: 200, header: jsonCT, body: message,
			reqBody: `{"approvals":[{"tool_call_id":"local-2","approve":false,"reason":"not now"},{"tool_call_id":"local-3","approve":true}]}`},
		{name: "execute that paused", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: paused},
		{name: "execute that paused for approval", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(paused, "required_action", approval)},
		{name: "message shape that paused", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT, body: pausedMessage},
		{name: "stream that paused", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse, body: pausedStream},
		{name: "stream that paused, message shape", method: "POST", path: run + "/execute/?stream=true&format=message", reqBody: execBody, status: 200, header: sse,
			body: pausedMessageStream},
		{name: "execution waiting for approval", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: queued},
		{name: "session waiting", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT, body: waiting},
		{name: "sessions, one waiting", method: "GET", path: "/api/v1/sessions/", status: 200, header: jsonCT, body: []any{waiting, session}},
		{name: "history with the tool-call turn", method: "GET", path: run + "/messages/", status: 200, header: jsonCT, body: history},
		{name: "tool events with kinds, approval and requires_action", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("tool_call", mcpCall), event("approval", approved), event("tool_result", mcpResult), event("tool_result", fnResult), waitsEvent)},
		{name: "event whose data was dropped for storage", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(openapiWith(openapiWith(event("tool_result", mcpResult), "data", openapiDelete), "truncated", true))},
		{name: "pending message while waiting", method: "POST", path: run + "/execute/", reqBody: execBody, status: 409, header: withRetryAfter(jsonCT),
			body: map[string]any{"error": map[string]any{"type": "conflict_error", "message": "The session is waiting for tool_calls of execution " + execID}}},

		{name: "created with an unknown tool type", method: "POST", path: "/api/v1/agent/", reqBody: mk(map[string]any{"type": "openapi", "server": "x"}),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with an mcp entry without server", method: "POST", path: "/api/v1/agent/", reqBody: mk(mcp("server", openapiDelete)),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with an unknown mcp field", method: "POST", path: "/api/v1/agent/", reqBody: mk(mcp("headers", map[string]any{"a": "b"})),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with require_approval sometimes", method: "POST", path: "/api/v1/agent/", reqBody: mk(mcp("require_approval", "sometimes")),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with require_approval never as a list", method: "POST", path: "/api/v1/agent/", reqBody: mk(mcp("require_approval", map[string]any{"never": []any{"echo"}})),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with a function name with a space", method: "POST", path: "/api/v1/agent/", reqBody: mk(fn("name", "look up")),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with a function whose arguments are an array", method: "POST", path: "/api/v1/agent/", reqBody: mk(fn("parameters", map[string]any{"type": "array"})),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "created with a function field of another kind", method: "POST", path: "/api/v1/agent/", reqBody: mk(fn("server", "x")),
			status: 201, header: jsonCT, body: withTools("calculator"), wantErr: true},
		{name: "execute accepted with content and results", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"content":"hi","tool_results":[{"tool_call_id":"local-1","output":"x"}]}`, wantErr: true},
		{name: "execute accepted with results and approvals", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"tool_results":[{"tool_call_id":"local-1","output":"x"}],"approvals":[{"tool_call_id":"local-2","approve":true}]}`, wantErr: true},
		{name: "execute accepted with an empty answer", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"tool_results":[]}`, wantErr: true},
		{name: "execute accepted without content or answers", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"correlation_id":"x"}`, wantErr: true},
		{name: "execute accepted with an approval without approve", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"approvals":[{"tool_call_id":"local-2"}]}`, wantErr: true},
		{name: "execute accepted with is_error as text", method: "POST", path: run + "/execute/", status: 200, header: jsonCT, body: result,
			reqBody: `{"tool_results":[{"tool_call_id":"local-1","output":"x","is_error":"no"}]}`, wantErr: true},
		{name: "paused result without required_action", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(paused, "required_action", openapiDelete), wantErr: true},
		{name: "completed result with a required action", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(result, "required_action", action), wantErr: true},
		{name: "execution waiting without its required action", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT,
			body: openapiWith(queued, "required_action", openapiDelete), wantErr: true},
		{name: "running execution with a required action", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT,
			body: openapiWith(queued, "status", "running"), wantErr: true},
		{name: "message shape with a required action but no status", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(pausedMessage, "status", openapiDelete), wantErr: true},
		{name: "pending call without arguments", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(paused, "required_action", openapiWith(action, "tool_calls", []any{openapiWith(call, "arguments", openapiDelete)})), wantErr: true},
		{name: "pending call of a built-in", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(paused, "required_action", openapiWith(action, "tool_calls", []any{openapiWith(call, "kind", "builtin")})), wantErr: true},
		{name: "required action of an unknown type", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT,
			body: openapiWith(session, "required_action", openapiWith(action, "type", "input")), wantErr: true},
		{name: "required action without calls", method: "GET", path: "/api/v1/sessions/" + sid + "/", status: 200, header: jsonCT,
			body: openapiWith(session, "required_action", openapiWith(action, "tool_calls", []any{})), wantErr: true},
		{name: "message shape of another status", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(pausedMessage, "status", "completed"), wantErr: true},
		{name: "stream that paused with a completed result", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse,
			body: head + line("requires_action", result), wantErr: true},
		{name: "stream whose result waits", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse,
			body: head + line("result", paused), wantErr: true},
		{name: "stream with requires_action before the end", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse,
			body: head + line("requires_action", paused) + line("result", result), wantErr: true},
		{name: "stream that ends with the requires_action event", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse,
			body: head + line("requires_action", map[string]any{"type": "requires_action", "timestamp": "2026-11-22T18:00:00.000123Z", "data": waits}), wantErr: true},
		{name: "tool event of an unknown kind", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("tool_call", openapiWith(mcpCall, "kind", "plugin"))), wantErr: true},
		{name: "approval event without its decision", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("approval", openapiWith(approved, "approve", openapiDelete))), wantErr: true},
		{name: "requires_action event without ids", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("requires_action", openapiWith(waits, "tool_call_ids", []any{}))), wantErr: true},
		{name: "history with an executed call", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: openapiWith(history, "messages", []any{map[string]any{"id": "8f29d775-3416-4f16-af76-9edc9189d669", "role": "assistant", "content": "",
				"timestamp": "2026-11-22T18:00:01Z", "tool_calls": []any{map[string]any{"id": "local-1", "name": "x", "input": map[string]any{}, "output": "4", "is_error": false}}}}),
			wantErr: true},
	})
}

// TestOpenAPIStreamEventTypes keeps the event names a stream may send in step with the event
// types: every type but requires_action, which a stream ends with as its own message instead.
func TestOpenAPIStreamEventTypes(t *testing.T) {
	doc, err := openapiDoc()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range doc.Components.Schemas["EventType"].Value.Enum {
		if v != "requires_action" {
			want = append(want, v.(string))
		}
	}
	var got []string
	for _, alt := range doc.Components.Schemas["StreamMessage"].Value.OneOf {
		if alt.Value.Title != "event" {
			continue
		}
		for _, v := range alt.Value.Properties["event"].Value.Enum {
			got = append(got, v.(string))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StreamMessage's runtime event names differ from EventType's (-want +got):\n%s", diff)
	}
}
