package sessionstest

import (
	"context"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// rename: a title set reads back everywhere a session is read (get, list, the lease), nothing
// else of the session changes, only its owner renames it, "" takes it away, and a run that
// held the session while it was renamed commits without losing the title.
func rename(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	before, err := st.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Title != "" {
		t.Fatalf("a new session has the title %q, want none", before.Title)
	}

	got, err := st.RenameSession(ctx, p, s.ID, "Refunds — Émile")
	if err != nil {
		t.Fatal(err)
	}
	want := *before
	want.Title = "Refunds — Émile"
	if d := gocmp.Diff(&want, got); d != "" {
		t.Errorf("RenameSession returned (-want +got):\n%s", d)
	}
	if got, err := st.GetSession(ctx, s.ID); err != nil || got.Title != want.Title {
		t.Errorf("GetSession after a rename: title %q (%v), want %q", got.Title, err, want.Title)
	}
	list, _, err := st.ListSessions(ctx, p.Company, p.Owner, 0, 10)
	if err != nil || len(list) != 1 || list[0].Title != want.Title {
		t.Errorf("ListSessions after a rename: %v (%v), want one session titled %q", ids(list, func(s *domain.Session) string { return s.Title }), err, want.Title)
	}

	// Only the owner: another owner of the company, another company, a missing session.
	other := p
	other.Owner = "someone-else"
	_, err = st.RenameSession(ctx, other, s.ID, "theirs")
	wantKind(t, "RenameSession by another owner", err, domain.KindPermission)
	_, err = st.RenameSession(ctx, principal(), s.ID, "theirs")
	wantKind(t, "RenameSession by another company", err, domain.KindPermission)
	_, err = st.RenameSession(ctx, p, uuid.NewString(), "nobody's")
	wantKind(t, "RenameSession of a missing session", err, domain.KindNotFound)
	if got, _ := st.GetSession(ctx, s.ID); got.Title != want.Title {
		t.Errorf("refused renames left the title %q, want %q", got.Title, want.Title)
	}

	// Renamed while a run holds the session: the lease reads the title it had, the rename
	// names the run, and the run's commit (of the session as its lease read it) keeps the
	// new title beside the run's changes.
	now := time.Now()
	lease, exec := uuid.NewString(), uuid.NewString()
	held, err := st.AcquireRun(ctx, p, s.ID, lease, exec, now.Add(time.Minute), now)
	if err != nil {
		t.Fatal(err)
	}
	if held.Title != want.Title {
		t.Errorf("AcquireRun read the title %q, want %q", held.Title, want.Title)
	}
	during, err := st.RenameSession(ctx, p, s.ID, "During the run")
	if err != nil {
		t.Fatal(err)
	}
	if during.Title != "During the run" || during.ActiveExecutionID != exec {
		t.Errorf("RenameSession during a run = title %q, running %q; want %q, %q", during.Title, during.ActiveExecutionID, "During the run", exec)
	}
	c := run(held, lease, true)
	commit(t, st, c)
	after, err := st.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Title != "During the run" || after.MessageCount != c.Session.MessageCount || after.Executions != c.Session.Executions || after.ActiveExecutionID != "" {
		t.Errorf("after the run's commit: title %q, %d messages, %d executions, running %q; want %q, %d, %d, none",
			after.Title, after.MessageCount, after.Executions, after.ActiveExecutionID, "During the run", c.Session.MessageCount, c.Session.Executions)
	}
	// The commit gave the lease back: the session can be taken again.
	acquire(t, st, p, s)

	cleared, err := st.RenameSession(ctx, p, s.ID, "")
	if err != nil || cleared.Title != "" {
		t.Fatalf("RenameSession to none: %q (%v)", cleared.Title, err)
	}
	if got, _ := st.GetSession(ctx, s.ID); got.Title != "" {
		t.Errorf("GetSession after the title was taken away: %q", got.Title)
	}
}
