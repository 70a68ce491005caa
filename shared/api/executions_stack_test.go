package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// nextLink is the address the Link header names for the next page ("" for none).
var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// executionPages follows a list's Link headers from path and returns every execution, with the
// sizes of its pages.
func (s *stack) executionPages(key, path string) (all []map[string]any, sizes []int) {
	s.t.Helper()
	for path != "" && len(sizes) < 50 {
		res := s.ok("GET", path, key, nil)
		var page []map[string]any
		if err := json.Unmarshal(res.body, &page); err != nil {
			s.t.Fatalf("%s: %v: %s", path, err, res.body)
		}
		all, sizes = append(all, page...), append(sizes, len(page))
		path = ""
		if m := nextLink.FindStringSubmatch(res.header.Get("Link")); m != nil {
			path = m[1]
		}
	}
	return all, sizes
}

func executionIDs(list []map[string]any) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i], _ = e["id"].(string)
	}
	return out
}

// TestExecutionsListOnTheStack: GET /api/v1/executions/ through the routed functions on
// DynamoDB Local lists the caller's runs newest first with their agent, tokens, duration and
// cost, and none of another owner's or company's; filters by agent, status and time; pages by the
// Link header's cursor; and answers each bad filter with a 400 naming it, 401 without a key and
// 403 without sessions:read. Every answer is checked against the OpenAPI document.
func TestExecutionsListOnTheStack(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	co := fmt.Sprintf("traces-%d", time.Now().UnixNano())
	alice, bob, elsewhere := s.key("alice", co), s.key("bob", co), s.key("alice", co+"-b")
	agent := s.created(alice, "/api/v1/agent/", json.RawMessage(
		`{"system_config":{"name":"Support Bot","agent_type":"llm_agent","system_prompt":"You help.","llm_config":{"provider":"local","model":"dev"}}}`))
	agentID := agent["id"].(string)
	agentSid := s.ok("GET", "/api/v1/sessions/from-agent/?agent_key="+agent["agent_key"].(string), alice, nil).json(t)["session_id"].(string)
	inlineSid := s.session(alice, flatSession)
	run := func(key, sid, content string) string {
		out := s.execute(key, sid, `{"content":"`+content+`"}`)
		return out["metadata"].(map[string]any)["execution_id"].(string)
	}
	e1 := run(alice, agentSid, "one")
	e2 := run(alice, inlineSid, "two")
	e3 := run(alice, agentSid, "three")
	run(bob, s.session(bob, flatSession), "bob's")
	theirs := run(elsewhere, s.session(elsewhere, flatSession), "another company's")
	// A failed run, recorded as the worker records one.
	now := time.Now().UTC()
	failed := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: inlineSid, Status: domain.ExecFailed, Events: []map[string]any{},
		Error: "The model failed", ErrorType: "api_error", CreatedAt: now, CompletedAt: &now, Company: co, Owner: "alice", AgentName: "Helper"}
	if err := s.app.Store.PutExecution(ctx, failed); err != nil {
		t.Fatal(err)
	}

	list, _ := s.executionPages(alice, "/api/v1/executions/")
	if got, want := executionIDs(list), []string{failed.ID, e3, e2, e1}; !slices.Equal(got, want) {
		t.Fatalf("alice's list %v; want %v", got, want)
	}
	byAgent, inline := list[1], list[2]
	if byAgent["agent_id"] != agentID || byAgent["agent_name"] != "Support Bot" || byAgent["session_id"] != agentSid || byAgent["status"] != "completed" {
		t.Errorf("a run of the agent: %v", byAgent)
	}
	if inline["agent_id"] != nil || inline["agent_name"] != "Helper" || inline["completed_at"] == nil {
		t.Errorf("a run of an inline configuration: %v", inline)
	}
	if u := byAgent["usage"].(map[string]any); u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 || u["cost_usd"] != 0.0 {
		t.Errorf("usage %v: want the run's tokens and the local model's cost 0", u)
	}
	if e := list[0]["error"]; e == nil || e.(map[string]any)["message"] != "The model failed" {
		t.Errorf("the failed run's error: %v", list[0])
	}
	if got, _ := s.executionPages(bob, "/api/v1/executions/"); len(got) != 1 || got[0]["agent_name"] != "Helper" {
		t.Errorf("bob's list: %v; want his one run", executionIDs(got))
	}
	if got, _ := s.executionPages(elsewhere, "/api/v1/executions/"); !slices.Equal(executionIDs(got), []string{theirs}) {
		t.Errorf("the other company's alice: %v; want only %s", executionIDs(got), theirs)
	}

	since := url.QueryEscape(now.Add(time.Hour).Format(time.RFC3339))
	until := url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339))
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"agent_id=" + agentID, []string{e3, e1}},
		{"status=failed", []string{failed.ID}},
		{"status=completed&agent_id=" + agentID + "&limit=1", []string{e3, e1}},
		{"since=" + since, []string{}},
		{"until=" + until, []string{}},
		{"since=" + until + "&until=" + since + "&status=completed", []string{e3, e2, e1}},
	} {
		if got, _ := s.executionPages(alice, "/api/v1/executions/?"+tc.query); !slices.Equal(executionIDs(got), tc.want) {
			t.Errorf("?%s: %v; want %v", tc.query, executionIDs(got), tc.want)
		}
	}
	if got, sizes := s.executionPages(alice, "/api/v1/executions/?limit=1"); !slices.Equal(executionIDs(got), []string{failed.ID, e3, e2, e1}) ||
		!slices.Equal(sizes, []int{1, 1, 1, 1}) {
		t.Errorf("pages of 1: %v in pages of %v", executionIDs(got), sizes)
	}

	for query, field := range map[string]string{
		"agent_id=support-bot": "agent_id", "status=done": "status", "since=yesterday": "since",
		"until=2026-11-27": "until", "since=2026-11-27T10:00:00Z&until=2026-11-27T09:00:00Z": "until",
		"after=not-a-cursor": "after", "limit=0": "limit", "limit=101": "limit",
	} {
		wantField(t, s.do(req{method: "GET", path: "/api/v1/executions/?" + query, key: alice}), field)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/executions/"}); res.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", res.status)
	}
	writer := s.key("carol", co, func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} })
	if res := s.do(req{method: "GET", path: "/api/v1/executions/", key: writer}); res.status != http.StatusForbidden {
		t.Errorf("without sessions:read: %d %s", res.status, res.body)
	}
}
