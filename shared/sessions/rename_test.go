package sessions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// TestRename: a title is given, kept through a run, refused with the field named when it breaks
// the rule (and then left as it was), taken away with nil; only the session's owner renames it,
// and an id that is no session is not found.
func TestRename(t *testing.T) {
	st := newMemStore()
	svc := newService(st, nil, sessions.Limits{})
	ctx := context.Background()
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "Desk", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	title := func(s string) *string { return &s }

	got, err := svc.Rename(ctx, alice, sess.ID, title("Refunds, March"))
	if err != nil || got.Title != "Refunds, March" || got.Name != "Desk" {
		t.Fatalf("Rename = %+v, %v; want the title beside the name", got, err)
	}
	if _, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")}, sessions.Observer{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := svc.Get(ctx, alice, sess.ID); after.Title != "Refunds, March" || after.VisibleCount == 0 {
		t.Errorf("after a run: title %q, %d messages; want the title kept", after.Title, after.VisibleCount)
	}

	for _, bad := range []string{"", "   ", strings.Repeat("a", domain.MaxSessionTitle+1), "two\nlines", "bell\a"} {
		_, err := svc.Rename(ctx, alice, sess.ID, &bad)
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "title" {
			t.Errorf("Rename(%q) = %v; want a 400 naming title", bad, err)
		}
	}
	if s, _ := svc.Get(ctx, alice, sess.ID); s.Title != "Refunds, March" {
		t.Errorf("refused titles left %q", s.Title)
	}

	for _, tc := range []struct {
		name string
		p    domain.Principal
		id   string
		want domain.Kind
	}{
		{"another owner", domain.Principal{Owner: "bob", Company: "acme"}, sess.ID, domain.KindPermission},
		{"another company", domain.Principal{Owner: "alice", Company: "globex"}, sess.ID, domain.KindPermission},
		{"no such session", alice, uuid.NewString(), domain.KindNotFound},
		{"not an id", alice, "from-agent", domain.KindNotFound},
	} {
		if _, err := svc.Rename(ctx, tc.p, tc.id, title("Theirs")); domain.KindOf(err) != tc.want {
			t.Errorf("%s: %v (kind %v), want kind %v", tc.name, err, domain.KindOf(err), tc.want)
		}
	}

	cleared, err := svc.Rename(ctx, alice, sess.ID, nil)
	if err != nil || cleared.Title != "" {
		t.Fatalf("Rename(nil) = %q, %v; want no title", cleared.Title, err)
	}
	if s, _ := svc.Get(ctx, alice, sess.ID); s.Title != "" {
		t.Errorf("after the title was taken away: %q", s.Title)
	}
}
