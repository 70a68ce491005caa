package sessionstest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// The suite's rules of the execution lease and of commits, which hold each other up: a lease is
// taken by the session's owner alone, and a commit writes only under the lease it names.

func leaseRules(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	now := time.Now()
	until := now.Add(time.Minute)
	got, err := st.AcquireSession(ctx, p, s.ID, "first", until, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != s.ID || got.Owner != p.Owner {
		t.Errorf("AcquireSession returned %+v", got)
	}
	_, err = st.AcquireSession(ctx, p, s.ID, "second", until, now)
	wantKind(t, "AcquireSession of a held lease", err, domain.KindConflict)
	// The same lease id takes it again: a retried write whose first attempt applied but whose
	// answer was lost (a lease id is never taken twice otherwise).
	if again, err := st.AcquireSession(ctx, p, s.ID, "first", until, now); err != nil || again.ID != s.ID {
		t.Errorf("AcquireSession again by the lease that holds it = %v, want the session", err)
	}
	_, err = st.AcquireSession(ctx, p, s.ID, "second", until.Add(time.Minute), until)
	wantKind(t, "AcquireSession at the very millisecond the lease ends", err, domain.KindConflict)
	for _, other := range []domain.Principal{
		{Owner: "someone-else", Company: p.Company}, // the same company, another owner
		{Owner: p.Owner, Company: principal().Company},
	} {
		_, err = st.AcquireSession(ctx, other, s.ID, "other", until, until.Add(time.Hour))
		wantKind(t, fmt.Sprintf("AcquireSession by %s of %s", other.Owner, other.Company), err, domain.KindPermission)
	}
	_, err = st.AcquireSession(ctx, p, s.ID, strings.Repeat("l", 65), until, until.Add(time.Hour))
	if err == nil {
		t.Errorf("AcquireSession with a lease id of 65 bytes: no error")
	}

	// Releasing another lease leaves this one; releasing it frees the session.
	if err := st.ReleaseSession(ctx, s.ID, "not-mine"); err != nil {
		t.Fatal(err)
	}
	_, err = st.AcquireSession(ctx, p, s.ID, "second", until, now)
	wantKind(t, "AcquireSession after another lease's release", err, domain.KindConflict)
	if err := st.ReleaseSession(ctx, s.ID, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireSession(ctx, p, s.ID, "second", until, now); err != nil {
		t.Errorf("AcquireSession after the release: %v", err)
	}
	// An expired lease is taken over.
	if _, err := st.AcquireSession(ctx, p, s.ID, "third", until.Add(time.Minute), until.Add(time.Millisecond)); err != nil {
		t.Errorf("AcquireSession after the lease expired: %v", err)
	}
}

func commitNeedsTheLease(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	lease := acquire(t, st, p, s)
	c := run(s, lease, true, false)
	commit(t, st, c)
	got, err := st.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != 2 || got.VisibleCount != 1 || got.Executions != 1 || !got.UpdatedAt.Equal(c.Session.UpdatedAt) {
		t.Errorf("session after the commit: %+v", got)
	}
	// The commit released the lease: a new one is taken at once.
	lease2 := acquire(t, st, p, got)

	// A commit naming a lease that is no longer held (it expired and another took it) writes nothing.
	lost := run(got, lease, true)
	wantKind(t, "Commit with a lost lease", st.Commit(ctx, lost), domain.KindConflict)
	if after, _ := st.GetSession(ctx, s.ID); after == nil || after.MessageCount != 2 {
		t.Errorf("a refused commit changed the session: %+v", after)
	}
	if _, _, err := st.FindMessage(ctx, lost.Messages[0].ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused commit stored its message: %v", err)
	}
	if _, err := st.GetExecution(ctx, s.ID, lost.Execution.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused commit stored its execution: %v", err)
	}
	commit(t, st, run(got, lease2, true))
	// Without a lease at all (released by the commit).
	wantKind(t, "Commit after the lease was released", st.Commit(ctx, run(got, lease2, true)), domain.KindConflict)
}

func commitWritesAllOrNothing(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	commit(t, st, run(s, acquire(t, st, p, s), true, true))
	// A commit from a stale count would write message 2 again: it is refused whole.
	lease := acquire(t, st, p, s)
	stale := *s
	stale.MessageCount = 1
	c := run(&stale, lease, true, true)
	wantKind(t, "Commit of a message number stored", st.Commit(ctx, c), domain.KindConflict)
	if _, _, err := st.FindMessage(ctx, c.Messages[0].ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused commit stored message %d: %v", c.Messages[0].Seq, err)
	}
	if _, err := st.GetExecution(ctx, s.ID, c.Execution.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused commit stored its execution: %v", err)
	}
	if got, _ := st.GetSession(ctx, s.ID); got == nil || got.MessageCount != 2 {
		t.Errorf("a refused commit changed the session: %+v", got)
	}
	_, err := st.AcquireSession(ctx, p, s.ID, uuid.NewString(), time.Now().Add(time.Minute), time.Now())
	wantKind(t, "AcquireSession after a refused commit (the lease stays)", err, domain.KindConflict)
}
