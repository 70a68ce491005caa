package api_test

// The cases that prove the OpenAPI document describes agents that answer from knowledge bases:
// knowledge_bases entries in configurations, citations on messages and retrieval events.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// kbDocEntry is a knowledge_bases entry with every documented field.
func kbDocEntry() map[string]any {
	return map[string]any{
		"name": "policies", "knowledge_base_type": "opensearch", "knowledge_base_id": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f",
		"enabled": true, "description": "Return and refund policies",
		"retrieval_config": map[string]any{"top_k": 5, "score_threshold": 0.4, "strategy": "hybrid",
			"filter": map[string]any{"file_ids": []any{"3f6c1a52-9d0e-4b7a-8c21-5e4f3a2b1c0d"}, "tags": []any{"policy"}}},
	}
}

// kbDocCitation is one citation as the handlers encode it.
func kbDocCitation(index int) map[string]any {
	return map[string]any{"index": index, "knowledge_base_id": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f",
		"file_id": "3f6c1a52-9d0e-4b7a-8c21-5e4f3a2b1c0d", "file_name": "returns.txt", "chunk_index": 2, "score": 0.83,
		"text": "Items can be returned within 30 days of delivery …"}
}

// kbDocCreateBody is a create-agent request whose knowledge_bases are entries.
func kbDocCreateBody(t *testing.T, entries ...any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"system_config": map[string]any{"name": "Returns helper", "knowledge_bases": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpenAPICheckRetrieval proves the document accepts what agents with knowledge bases answer
// (entries, citations in every message shape, retrieval events) and refuses what they never do.
func TestOpenAPICheckRetrieval(t *testing.T) {
	agent, _, _ := openapiFixtures(t)
	withKBs := func(entries ...any) map[string]any {
		return openapiWith(agent, "system_config", openapiWith(agent["system_config"].(map[string]any), "knowledge_bases", entries))
	}
	_, result, message, stream := openapiRuntimeFixtures()
	const sid = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	const execID = "7b0e5d8e-4a6c-4f43-9a51-2f7f0c1d9e10"
	run := "/api/v1/runtime/" + sid
	agentPath := "/api/v1/agent/" + execID + "/"
	jsonCT := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "X-Request-Id": {"r1"}}
	execBody := `{"content":"how long do I have to return an item?"}`

	// Messages with citations, in every place a message appears.
	withCites := func(cites any) map[string]any {
		msg := openapiWith(result["messages"].([]any)[0].(map[string]any), "citations", cites)
		return openapiWith(result, "messages", []any{msg})
	}
	cited := withCites([]any{kbDocCitation(1), kbDocCitation(2)})
	citedMessage := openapiWith(message, "response", openapiWith(message["response"].(map[string]any), "citations", []any{kbDocCitation(1)}))
	history := func(cites any) map[string]any {
		return map[string]any{"total": 2, "has_more": false, "messages": []any{
			map[string]any{"id": "1e026a7f-2037-49a1-b812-f195aefab044", "role": "user", "content": "how long?", "timestamp": "2026-11-22T18:00:00Z"},
			map[string]any{"id": "8f29d775-3416-4f16-af76-9edc9189d669", "role": "assistant", "content": "30 days [1]", "timestamp": "2026-11-22T18:00:01Z",
				"citations": cites},
		}}
	}
	completed := map[string]any{"id": execID, "object": "agent.execution", "session_id": sid, "status": "completed",
		"correlation_id": nil, "created_at": 1795370400, "completed_at": 1795370401, "result": cited}

	// Events of a run that retrieved.
	event := func(typ string, data map[string]any) map[string]any {
		return map[string]any{"sequence": 1, "type": typ, "timestamp": "2026-11-22T18:00:00.10097992Z", "execution_id": execID,
			"correlation_id": nil, "node": "helper", "data": data}
	}
	retrieval := map[string]any{"query": "how long do I have to return an item?", "knowledge_bases": []any{"0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f"},
		"hits": 2, "duration_ms": 14, "source": "prompt"}
	toolRetrieval := openapiWith(openapiWith(retrieval, "source", "tool"), "tool_use_id", "local-1")
	missing := map[string]any{"message": `knowledge base "policies" not found: it was deleted or is not your company's; it was not searched`,
		"knowledge_base_id": "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f"}
	failedSearch := map[string]any{"message": "knowledge base search failed; the agent answered without it",
		"knowledge_bases": []any{"0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f"}}
	events := func(evs ...any) map[string]any {
		return map[string]any{"events": evs, "total": len(evs), "has_more": false}
	}
	streamEvent := func(data map[string]any) string {
		b, _ := json.Marshal(map[string]any{"type": "retrieval", "node": "helper", "timestamp": "2026-11-22T18:00:00.000123Z", "data": data})
		return "event: retrieval\ndata: " + string(b) + "\n\n"
	}
	resultLine := func(res map[string]any) string {
		b, _ := json.Marshal(res)
		return "event: result\ndata: " + string(b) + "\n\n"
	}
	parts := strings.SplitAfter(stream, "\n\n")
	head := parts[0] // node_started
	body := strings.Join(parts[1:len(parts)-2], "")
	retrievalStream := head + streamEvent(retrieval) + body + resultLine(cited)

	many := make([]any, 51)
	for i := range many {
		many[i] = kbDocCitation(i + 1)
	}
	eleven := make([]any, 11)
	for i := range eleven {
		e := kbDocEntry()
		e["name"], e["knowledge_base_id"] = fmt.Sprintf("kb%d", i), fmt.Sprintf("0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e%02d", i)
		eleven[i] = e
	}
	rc := func(k string, v any) map[string]any {
		return openapiWith(kbDocEntry(), "retrieval_config", openapiWith(kbDocEntry()["retrieval_config"].(map[string]any), k, v))
	}
	aliased := openapiWith(openapiWith(openapiWith(kbDocEntry(), "knowledge_base_id", openapiDelete), "id", "0d6f3c1e-9b2a-4c8d-8e7f-6a5b4c3d2e1f"),
		"config", map[string]any{"top_k": nil, "strategy": "bm25"})
	aliased = openapiWith(aliased, "retrieval_config", openapiDelete)
	graph := `{"name":"desk","agents":[{"name":"a","knowledge_bases":[{"name":"p","knowledge_base_id":"k1"}]},` +
		`{"name":"b","agent_type":"react_agent","knowledge_bases":[{"name":"q","id":"k2","enabled":false,"retrieval_config":null}]}]}`
	created := map[string]any{"success": true, "session_id": sid, "config_hash": "04f9dec0db24200f"}

	runOpenAPICases(t, []openapiCase{
		{name: "agent with a full knowledge base entry", method: "GET", path: agentPath, status: 200, header: jsonCT, body: withKBs(kbDocEntry())},
		{name: "agent with the aliases id and config", method: "GET", path: agentPath, status: 200, header: jsonCT, body: withKBs(aliased)},
		{name: "agent created with a knowledge base", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, kbDocEntry()),
			status: 201, header: jsonCT, body: withKBs(kbDocEntry())},
		{name: "session with knowledge bases per node", method: "POST", path: "/api/v1/sessions/", reqBody: graph, status: 201, header: jsonCT, body: created},
		{name: "execute result with citations", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: cited},
		{name: "execute result that searched and found nothing", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: withCites([]any{})},
		{name: "message shape with citations", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT, body: citedMessage},
		{name: "history with citations", method: "GET", path: run + "/messages/", status: 200, header: jsonCT, body: history([]any{kbDocCitation(1)})},
		{name: "execution poll with citations", method: "GET", path: run + "/executions/" + execID + "/", status: 200, header: jsonCT, body: completed},
		{name: "retrieval events and a missing knowledge base", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("retrieval", retrieval), event("retrieval", toolRetrieval), event("error", missing), event("error", failedSearch))},
		{name: "stream with a retrieval event and cited result", method: "POST", path: run + "/execute/?stream=true", reqBody: execBody, status: 200, header: sse,
			body: retrievalStream},

		{name: "citation numbered from 0", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: withCites([]any{openapiWith(kbDocCitation(1), "index", 0)}), wantErr: true},
		{name: "citation without its text", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: withCites([]any{openapiWith(kbDocCitation(1), "text", openapiDelete)}), wantErr: true},
		{name: "citation text over 1,000 characters and the mark", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT,
			body: withCites([]any{openapiWith(kbDocCitation(1), "text", strings.Repeat("a", 1002))}), wantErr: true},
		{name: "citation with an undocumented field", method: "GET", path: run + "/messages/", status: 200, header: jsonCT,
			body: history([]any{openapiWith(kbDocCitation(1), "url", "s3://bucket/x")}), wantErr: true},
		{name: "51 citations", method: "POST", path: run + "/execute/", reqBody: execBody, status: 200, header: jsonCT, body: withCites(many), wantErr: true},
		{name: "citations as an object", method: "POST", path: run + "/execute/?format=message", reqBody: execBody, status: 200, header: jsonCT,
			body: openapiWith(message, "response", openapiWith(message["response"].(map[string]any), "citations", kbDocCitation(1))), wantErr: true},
		{name: "retrieval event of an unknown source", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("retrieval", openapiWith(retrieval, "source", "cache"))), wantErr: true},
		{name: "retrieval event without hits", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("retrieval", openapiWith(retrieval, "hits", openapiDelete))), wantErr: true},
		{name: "retrieval event with a query over 500 characters and the mark", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("retrieval", openapiWith(retrieval, "query", strings.Repeat("q", 502)))), wantErr: true},
		{name: "retrieval event with an undocumented field", method: "GET", path: run + "/events/", status: 200, header: jsonCT,
			body: events(event("retrieval", openapiWith(retrieval, "index", "kb-1536"))), wantErr: true},

		{name: "created with top_k 51", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("top_k", 51)), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with score_threshold 1.5", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("score_threshold", 1.5)), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with an unknown strategy", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("strategy", "splade")), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with an unknown retrieval_config key", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("reranker", true)), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with rerank", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("rerank", map[string]any{"model": "cohere.rerank-v3-5:0", "candidates": 30})), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry())},
		{name: "created with Atthene's rerank", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, openapiWith(openapiWith(kbDocEntry(), "retrieval_config", map[string]any{"enable_rerank": true, "rerank_model": "amazon.rerank-v1:0"}), "name", "p")), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry())},
		{name: "created with a bad rerank", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("rerank", map[string]any{"candidates": 101})), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with an unknown filter key", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, rc("filter", map[string]any{"owner": "x"})), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with an unknown entry key", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, openapiWith(kbDocEntry(), "index", "x")), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created without a knowledge base id", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, openapiWith(kbDocEntry(), "knowledge_base_id", openapiDelete)),
			status: 201, header: jsonCT, body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with 11 knowledge bases", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, eleven...), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with an entry that is not an object", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, "policies"), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
		{name: "created with enabled as text", method: "POST", path: "/api/v1/agent/", reqBody: kbDocCreateBody(t, openapiWith(kbDocEntry(), "enabled", "yes")), status: 201, header: jsonCT,
			body: withKBs(kbDocEntry()), wantErr: true},
	})
}
