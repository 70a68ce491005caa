package sessions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// TestSessionUserID: a session names the end user it serves, inline or from an agent; the
// user is kept with the session and is no part of its configuration; a bad one is a 400 on
// user_id (beside the configuration's own field errors).
func TestSessionUserID(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	svc := kbService(st, nil, &countingRetriever{})
	p := scoped(domain.ScopeSessionsWrite, domain.ScopeKnowledgeRead)
	user := "customer-42 ünïcode"
	plain := func() domain.ConfigDoc { return domain.ConfigDocOf(map[string]any{"name": "plain"}) }

	sess, err := svc.Create(ctx, p, sessions.CreateInput{Config: plain(), UserID: &user})
	if err != nil {
		t.Fatal(err)
	}
	none, err := svc.Create(ctx, p, sessions.CreateInput{Config: plain()})
	if err != nil {
		t.Fatal(err)
	}
	if sess.ConfigHash != none.ConfigHash || sess.UserID != user || none.UserID != "" {
		t.Errorf("sessions with and without a user: hash %s / %s, users %q / %q", sess.ConfigHash, none.ConfigHash, sess.UserID, none.UserID)
	}
	got, err := svc.Get(ctx, p, sess.ID)
	if err != nil || got.UserID != user {
		t.Fatalf("stored user = %q, %v", got.UserID, err)
	}
	fa, _, err := svc.FromAgent(ctx, p, "kb-agent", &user)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(ctx, p, fa.ID); got.UserID != user || got.AgentID != "a1" {
		t.Errorf("from-agent session: user %q, agent %q", got.UserID, got.AgentID)
	}
	fa, _, err = svc.FromAgent(ctx, p, "kb-agent", nil)
	if err != nil || fa.UserID != "" {
		t.Errorf("from-agent without a user: %q, %v", fa.UserID, err)
	}

	for _, bad := range []string{"", strings.Repeat("x", domain.MaxUserIDLength+1), "a\nb", "tab\there", "\x7f"} {
		_, err := svc.Create(ctx, p, sessions.CreateInput{Config: plain(), UserID: &bad})
		if diff := cmp.Diff([]string{"user_id"}, fieldsOf(err)); diff != "" {
			t.Errorf("Create with user %q: %v (-want +got fields):\n%s", bad, err, diff)
		}
		_, _, err = svc.FromAgent(ctx, p, "kb-agent", &bad)
		if diff := cmp.Diff([]string{"user_id"}, fieldsOf(err)); diff != "" {
			t.Errorf("FromAgent with user %q: %v (-want +got fields):\n%s", bad, err, diff)
		}
	}
	bad := ""
	_, err = svc.Create(ctx, p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"agent_type": "x"}), UserID: &bad})
	if diff := cmp.Diff([]string{"user_id", "name", "agent_type"}, fieldsOf(err)); diff != "" {
		t.Errorf("bad user and configuration (-want +got):\n%s", diff)
	}
	if list, _, _ := st.ListSessions(ctx, p.Company, p.Owner, 0, 100); len(list) != 4 {
		t.Errorf("%d sessions stored, want the 4 valid ones", len(list))
	}
}

// fieldsOf lists the fields of an invalid-request error.
func fieldsOf(err error) []string {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		return nil
	}
	var out []string
	for _, f := range de.Fields {
		out = append(out, f.Field)
	}
	return out
}
