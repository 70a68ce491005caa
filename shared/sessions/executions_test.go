package sessions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/sessions/sessionstest"
)

// TestExecutionsSuite holds the fake to the contract of sessions.Runs (shared/dynamo runs the
// same suite against DynamoDB Local).
func TestExecutionsSuite(t *testing.T) {
	sessionstest.ExecutionsSuite(t, func(*testing.T) sessionstest.ListStore { return sessionstest.NewStore() })
}

// TestListExecutionsOfRuns: the runs a caller made are listed newest first under its session's
// configuration name, with their tokens; a queued one is not (yet), another owner sees none, and
// each bad filter is a 400 naming it.
func TestListExecutionsOfRuns(t *testing.T) {
	st := newMemStore()
	svc := newService(st, &queue{}, sessions.Limits{})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "Helper", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, msg := range []string{"one", "two"} {
		res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent(msg)}, sessions.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		ran = append([]string{res.Execution.ID}, ran...)
	}
	if _, err := svc.Enqueue(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("three")}); err != nil {
		t.Fatal(err)
	}
	got, next, err := svc.ListExecutions(ctx, alice, sessions.ExecutionsQuery{Limit: 10})
	if err != nil || next != "" || len(got) != 2 {
		t.Fatalf("list: %d executions, next %q, %v; want the 2 that ran", len(got), next, err)
	}
	for i, e := range got {
		if e.ID != ran[i] || e.Status != domain.ExecCompleted || e.AgentName != "Helper" || e.AgentID != "" || e.SessionID != sess.ID ||
			e.InputTokens == 0 || e.OutputTokens == 0 {
			t.Errorf("listed %d: %+v; want run %s completed under Helper with its tokens", i, e, ran[i])
		}
	}
	bob := domain.Principal{Owner: "bob", Company: "acme"}
	if got, _, err := svc.ListExecutions(ctx, bob, sessions.ExecutionsQuery{Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("another owner's list: %d, %v; want none", len(got), err)
	}
	for _, tc := range []struct {
		q     sessions.ExecutionsQuery
		field string
	}{
		{sessions.ExecutionsQuery{AgentID: "support"}, "agent_id"},
		{sessions.ExecutionsQuery{Status: "done"}, "status"},
		{sessions.ExecutionsQuery{Since: "yesterday"}, "since"},
		{sessions.ExecutionsQuery{Until: "2026-11-27"}, "until"},
		{sessions.ExecutionsQuery{Since: "1969-12-31T23:59:59Z"}, "since"}, // well formed, before the years taken
		{sessions.ExecutionsQuery{Until: "0001-01-01T00:00:00Z"}, "until"},
		{sessions.ExecutionsQuery{Since: "2026-11-27T10:00:00Z", Until: "2026-11-27T09:00:00+00:00"}, "until"},
		{sessions.ExecutionsQuery{After: "not-a-cursor"}, "after"},
	} {
		tc.q.Limit = 10
		_, _, err := svc.ListExecutions(ctx, alice, tc.q)
		if got := fieldsOf(err); len(got) != 1 || got[0] != tc.field {
			t.Errorf("%+v: %v; want a 400 on %s", tc.q, err, tc.field)
		}
	}
	// A well-formed time outside the years taken is told so, not that it is not RFC 3339.
	_, _, err = svc.ListExecutions(ctx, alice, sessions.ExecutionsQuery{Since: "1969-12-31T23:59:59Z", Limit: 10})
	if de := (*domain.Error)(nil); !errors.As(err, &de) || len(de.Fields) != 1 || !strings.Contains(de.Fields[0].Message, "1970 to 9999") {
		t.Errorf("since 1969: %v; want a 400 naming the years 1970 to 9999", err)
	}
}
