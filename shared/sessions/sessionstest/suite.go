package sessionstest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// StoreSuite pins the contract of sessions.Store: what reads back, the not-found, permission
// and conflict errors with their kinds, the execution lease, commits that write all or nothing,
// one owner's sessions apart from another's, the order and pages of lists, feedback, deletes.
// newStore may hand every subtest the same store: each subtest makes its own ids and companies.
func StoreSuite(t *testing.T, newStore func(t *testing.T) sessions.Store) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, sessions.Store)
	}{
		{"CreateReadsBack", createReadsBack},
		{"NotFound", notFound},
		{"Lease", leaseRules},
		{"CommitNeedsTheLease", commitNeedsTheLease},
		{"CommitWritesAllOrNothing", commitWritesAllOrNothing},
		{"HistoryNewestFirst", historyNewestFirst},
		{"MessagePages", messagePages},
		{"ListSessionsOfOneOwner", listSessionsOfOneOwner},
		{"Executions", executions},
		{"Feedback", feedback},
		{"Delete", deleteSession},
		{"Rename", rename},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

func principal() domain.Principal {
	co := "co-" + uuid.NewString()[:8]
	return domain.Principal{KeyID: "k-" + co, Owner: "owner-" + co, Company: co}
}

// newSession is a session of p created at at.
func newSession(p domain.Principal, at time.Time) *domain.Session {
	return &domain.Session{ID: uuid.NewString(), Name: "s", Owner: p.Owner, Company: p.Company, UserID: "end-user " + p.Company,
		Config:     map[string]any{"name": "s", "temperature": json.Number("0.5"), "tools": []any{"calculator"}},
		ConfigHash: "0123456789abcdef", Variables: map[string]any{"x": "y"}, CreatedAt: at, UpdatedAt: at}
}

func create(t *testing.T, st sessions.Store, s *domain.Session) {
	t.Helper()
	if err := st.CreateSession(context.Background(), s); err != nil {
		t.Fatalf("create session %s: %v", s.ID, err)
	}
}

// acquire takes a new lease of s for a minute from now and returns its id.
func acquire(t *testing.T, st sessions.Store, p domain.Principal, s *domain.Session) string {
	t.Helper()
	id := uuid.NewString()
	now := time.Now()
	if _, err := st.AcquireSession(context.Background(), p, s.ID, id, now.Add(time.Minute), now); err != nil {
		t.Fatalf("acquire session %s: %v", s.ID, err)
	}
	return id
}

// run is one execution of s: messages of the given visibility after those s counts, its record
// and the session's new counts.
func run(s *domain.Session, lease string, visible ...bool) domain.Commit {
	exec := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: s.ID, Status: domain.ExecCompleted,
		Events: []map[string]any{{"type": "done", "n": json.Number("1")}}, CreatedAt: t0}
	next := *s
	var msgs []domain.Message
	for _, v := range visible {
		next.MessageCount++
		if v {
			next.VisibleCount++
		}
		m := domain.Message{ID: uuid.NewString(), Seq: next.MessageCount, Role: "user", Content: fmt.Sprintf("message %d", next.MessageCount),
			Visible: v, ExecutionID: exec.ID, CreatedAt: t0.Add(time.Duration(next.MessageCount) * time.Second)}
		msgs = append(msgs, m)
		exec.MessageIDs = append(exec.MessageIDs, m.ID)
	}
	next.Executions++
	next.UpdatedAt = t0.Add(time.Hour)
	return domain.Commit{Session: &next, LeaseID: lease, Messages: msgs, Execution: exec}
}

func commit(t *testing.T, st sessions.Store, c domain.Commit) {
	t.Helper()
	if err := st.Commit(context.Background(), c); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func wantKind(t *testing.T, what string, err error, want domain.Kind) {
	t.Helper()
	if got := domain.KindOf(err); err == nil || got != want {
		t.Errorf("%s: %v (kind %v), want kind %v", what, err, got, want)
	}
}

func ids[T any](list []T, id func(T) string) []string {
	out := []string{}
	for _, v := range list {
		out = append(out, id(v))
	}
	return out
}

func messageID(m domain.Message) string { return m.ID }

func createReadsBack(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	s.AgentID, s.AgentName = uuid.NewString(), "agent"
	s.Pending = &domain.PendingAction{Type: domain.PendingToolCalls, ExecutionID: uuid.NewString(), Input: "hi", CreatedAt: t0,
		ToolCalls: []domain.PendingToolCall{{ID: "c1", Name: "lookup", Arguments: map[string]any{"q": "otters", "n": json.Number("3")}, Kind: "function"},
			{ID: "c2", Name: "ask", Arguments: map[string]any{}, Kind: "mcp", Server: "srv", Elicitation: &domain.Elicitation{Message: "Who?",
				Schema: map[string]any{"type": "object", "required": []any{"age"}, "properties": map[string]any{
					"age": map[string]any{"type": "integer", "default": json.Number("30")}, "ok": map[string]any{"type": "boolean", "default": true}}}}}}}
	want := *s
	create(t, st, s)
	s.Name, s.Config["name"] = "changed", "changed" // the store keeps its own copy
	got, err := st.GetSession(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Config = map[string]any{"name": "s", "temperature": json.Number("0.5"), "tools": []any{"calculator"}}
	want.Name = "s"
	if d := gocmp.Diff(&want, got); d != "" {
		t.Errorf("GetSession (-created +read):\n%s", d)
	}
	again := newSession(p, t0)
	again.ID = want.ID
	wantKind(t, "CreateSession of an id stored", st.CreateSession(ctx, again), domain.KindConflict)
}

func notFound(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	missing := uuid.NewString()
	_, err := st.GetSession(ctx, missing)
	wantKind(t, "GetSession of a missing session", err, domain.KindNotFound)
	wantKind(t, "DeleteSession of a missing session", st.DeleteSession(ctx, missing), domain.KindNotFound)
	now := time.Now()
	_, err = st.AcquireSession(ctx, p, missing, uuid.NewString(), now.Add(time.Minute), now)
	wantKind(t, "AcquireSession of a missing session", err, domain.KindNotFound)
	if err := st.ReleaseSession(ctx, missing, uuid.NewString()); err != nil {
		t.Errorf("ReleaseSession of a missing session: %v, want nothing to do", err)
	}
	_, err = st.GetExecution(ctx, missing, uuid.NewString())
	wantKind(t, "GetExecution of a missing execution", err, domain.KindNotFound)
	_, _, err = st.FindMessage(ctx, uuid.NewString())
	wantKind(t, "FindMessage of a missing message", err, domain.KindNotFound)
	// A commit of a session that is not stored has no lease to hold.
	s := newSession(p, t0)
	wantKind(t, "Commit of a missing session", st.Commit(ctx, run(s, uuid.NewString(), true)), domain.KindConflict)
	if _, err := st.GetSession(ctx, s.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused commit stored the session: %v", err)
	}
}

func historyNewestFirst(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	c1 := run(s, acquire(t, st, p, s), true, false, true)
	commit(t, st, c1)
	c2 := run(c1.Session, acquire(t, st, p, s), false, true)
	commit(t, st, c2)
	all := append(append([]domain.Message{}, c1.Messages...), c2.Messages...)
	for _, n := range []int{0, 1, 3, 5, 9} {
		var handed []int
		got, err := st.History(ctx, s.ID, func(m domain.Message) bool {
			handed = append(handed, m.Seq)
			return len(handed) <= n
		})
		if err != nil {
			t.Fatal(err)
		}
		want := all[max(len(all)-n, 0):]
		if d := gocmp.Diff(ids(want, messageID), ids(got, messageID)); d != "" {
			t.Errorf("History taking %d (-want +got):\n%s", n, d)
		}
		if handed[0] != 5 {
			t.Errorf("History taking %d handed %v first, want the newest (5)", n, handed)
		}
	}
	got, _ := st.History(ctx, s.ID, func(domain.Message) bool { return true })
	if d := gocmp.Diff(all, got); d != "" {
		t.Errorf("History read back (-committed +read):\n%s", d)
	}
}

func messagePages(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	c := run(s, acquire(t, st, p, s), true, false, true, true, false, true)
	commit(t, st, c)
	var visible []string
	for _, m := range c.Messages {
		if m.Visible {
			visible = append(visible, m.ID)
		}
	}
	for _, tt := range []struct {
		limit, offset int
		want          []string
		more          bool
	}{
		{2, 0, visible[:2], true},
		{2, 2, visible[2:4], false},
		{3, 1, visible[1:4], false},
		{1, 2, visible[2:3], true},
		{10, 0, visible, false},
		{10, 4, []string{}, false},
		{10, 9, []string{}, false},
	} {
		got, more, err := st.Messages(ctx, s.ID, tt.limit, tt.offset)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(tt.want, ids(got, messageID)); d != "" || more != tt.more {
			t.Errorf("Messages(%d, %d): more %v, want %v; (-want +got):\n%s", tt.limit, tt.offset, more, tt.more, d)
		}
	}
	m, sid, err := st.FindMessage(ctx, c.Messages[1].ID)
	if err != nil || sid != s.ID {
		t.Fatalf("FindMessage: session %q, %v", sid, err)
	}
	if d := gocmp.Diff(&c.Messages[1], m); d != "" {
		t.Errorf("FindMessage (-committed +found):\n%s", d)
	}
}

func listSessionsOfOneOwner(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	var made []*domain.Session
	for _, at := range []time.Time{t0.Add(2 * time.Second), t0, t0.Add(time.Second), t0.Add(3 * time.Second)} {
		s := newSession(p, at)
		create(t, st, s)
		made = append(made, s)
	}
	colleague := domain.Principal{Owner: "colleague", Company: p.Company}
	create(t, st, newSession(colleague, t0.Add(time.Hour)))
	create(t, st, newSession(domain.Principal{Owner: p.Owner, Company: principal().Company}, t0.Add(time.Hour)))
	newest := []string{made[3].ID, made[0].ID, made[2].ID, made[1].ID}
	sessionID := func(s *domain.Session) string { return s.ID }
	for _, tt := range []struct {
		offset, limit int
		want          []string
		more          bool
	}{
		{0, 2, newest[:2], true},
		{2, 2, newest[2:], false},
		{1, 2, newest[1:3], true},
		{0, 10, newest, false},
		{4, 10, []string{}, false},
	} {
		got, more, err := st.ListSessions(ctx, p.Company, p.Owner, tt.offset, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(tt.want, ids(got, sessionID)); d != "" || more != tt.more {
			t.Errorf("ListSessions(%d, %d): more %v, want %v; (-want +got):\n%s", tt.offset, tt.limit, more, tt.more, d)
		}
	}
	got, more, err := st.ListSessions(ctx, principal().Company, p.Owner, 0, 10)
	if err != nil || len(got) != 0 || more {
		t.Errorf("ListSessions of a company without sessions: %d, %v, %v", len(got), more, err)
	}
}

func executions(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s, other := newSession(p, t0), newSession(p, t0)
	create(t, st, s)
	create(t, st, other)
	var want []string
	for i := range 4 {
		done := t0.Add(time.Minute)
		corr := "corr-" + fmt.Sprint(i)
		e := &domain.Execution{ID: uuid.Must(uuid.NewV7()).String(), SessionID: s.ID, CorrelationID: &corr, Status: domain.ExecQueued,
			Events: []map[string]any{{"type": "queued"}}, MessageIDs: []string{uuid.NewString()}, InputTokens: 3, OutputTokens: 4,
			DurationMS: 5, CreatedAt: t0, CompletedAt: &done, Request: map[string]any{"content": "hi", "inputs": map[string]any{"n": json.Number("2")}},
			Scopes: []string{"sessions:write"}, Checkpoint: []byte("state")}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
		if i == 0 {
			got, err := st.GetExecution(ctx, s.ID, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(e, got); d != "" {
				t.Errorf("GetExecution (-put +read):\n%s", d)
			}
			_, err = st.GetExecution(ctx, other.ID, e.ID)
			wantKind(t, "GetExecution under another session", err, domain.KindNotFound)
			// A second put replaces the record.
			e.Status, e.Request, e.Scopes = domain.ExecCompleted, nil, nil
			if err := st.PutExecution(ctx, e); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.GetExecution(ctx, s.ID, e.ID); got == nil || got.Status != domain.ExecCompleted || got.Request != nil {
				t.Errorf("after the second put: %+v", got)
			}
		}
	}
	execID := func(e *domain.Execution) string { return e.ID }
	for _, n := range []int{1, 3, 4} {
		var got []*domain.Execution
		if err := st.EachExecution(ctx, s.ID, func(e *domain.Execution) bool { got = append(got, e); return len(got) < n }); err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want[:n], ids(got, execID)); d != "" {
			t.Errorf("EachExecution stopping after %d (-want +got):\n%s", n, d)
		}
	}
	var none []string
	_ = st.EachExecution(ctx, other.ID, func(e *domain.Execution) bool { none = append(none, e.ID); return true })
	if len(none) != 0 {
		t.Errorf("EachExecution of a session without executions: %v", none)
	}
}

func feedback(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s := newSession(p, t0)
	create(t, st, s)
	c := run(s, acquire(t, st, p, s), true)
	commit(t, st, c)
	rating, comment := 1, "good"
	first := &domain.Feedback{ID: uuid.NewString(), MessageID: c.Messages[0].ID, SessionID: s.ID, User: p.Owner, Rating: &rating,
		CreatedAt: t0, UpdatedAt: t0}
	got, err := st.PutFeedback(ctx, first)
	if err != nil || got.ID != first.ID || *got.Rating != 1 || got.Comment != nil {
		t.Fatalf("first feedback: %+v, %v", got, err)
	}
	// The same user again: the first id, creation time and rating stay; the comment is added.
	second := &domain.Feedback{ID: uuid.NewString(), MessageID: first.MessageID, SessionID: s.ID, User: p.Owner, Comment: &comment,
		CreatedAt: t0.Add(time.Hour), UpdatedAt: t0.Add(time.Hour)}
	got, err = st.PutFeedback(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	want := &domain.Feedback{ID: first.ID, MessageID: first.MessageID, SessionID: s.ID, User: p.Owner, Rating: &rating, Comment: &comment,
		CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("second feedback (-want +got):\n%s", d)
	}
	// Another user's feedback on the same message is its own.
	third := &domain.Feedback{ID: uuid.NewString(), MessageID: first.MessageID, SessionID: s.ID, User: "someone-else", CreatedAt: t0.Add(2 * time.Hour)}
	if got, err := st.PutFeedback(ctx, third); err != nil || got.ID != third.ID || got.Rating != nil {
		t.Errorf("another user's feedback: %+v, %v", got, err)
	}
}

func deleteSession(t *testing.T, st sessions.Store) {
	ctx := context.Background()
	p := principal()
	s, keep := newSession(p, t0), newSession(p, t0.Add(time.Second))
	create(t, st, s)
	create(t, st, keep)
	c := run(s, acquire(t, st, p, s), true, true)
	commit(t, st, c)
	rating := 1
	if _, err := st.PutFeedback(ctx, &domain.Feedback{ID: uuid.NewString(), MessageID: c.Messages[0].ID, SessionID: s.ID, User: p.Owner, Rating: &rating, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, s.ID); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err := st.GetSession(ctx, s.ID)
	wantKind(t, "GetSession after the delete", err, domain.KindNotFound)
	now := time.Now()
	_, err = st.AcquireSession(ctx, p, s.ID, uuid.NewString(), now.Add(time.Minute), now)
	wantKind(t, "AcquireSession after the delete", err, domain.KindNotFound)
	_, _, err = st.FindMessage(ctx, c.Messages[0].ID)
	wantKind(t, "FindMessage after the delete", err, domain.KindNotFound)
	_, err = st.GetExecution(ctx, s.ID, c.Execution.ID)
	wantKind(t, "GetExecution after the delete", err, domain.KindNotFound)
	if h, err := st.History(ctx, s.ID, func(domain.Message) bool { return true }); err != nil || len(h) != 0 {
		t.Errorf("History after the delete: %d messages, %v", len(h), err)
	}
	if page, more, err := st.Messages(ctx, s.ID, 10, 0); err != nil || len(page) != 0 || more {
		t.Errorf("Messages after the delete: %d, %v, %v", len(page), more, err)
	}
	// Feedback went with the partition: a new one on the same message and user starts afresh.
	fresh := &domain.Feedback{ID: uuid.NewString(), MessageID: c.Messages[0].ID, SessionID: s.ID, User: p.Owner, CreatedAt: t0.Add(time.Hour)}
	if got, err := st.PutFeedback(ctx, fresh); err != nil || got.ID != fresh.ID || got.Rating != nil {
		t.Errorf("feedback after the delete: %+v, %v", got, err)
	}
	list, _, err := st.ListSessions(ctx, p.Company, p.Owner, 0, 10)
	if err != nil || len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("ListSessions after the delete: %v, %v; want only the other session", list, err)
	}
	wantKind(t, "DeleteSession a second time", st.DeleteSession(ctx, s.ID), domain.KindNotFound)
}
